// --model_name_or_path, --config_name and --tokenizer_name as from_pretrained reads them: a local path (a
// folder, or for --config_name a config.json) is used as it is; anything else must be a Hub repo id
// (`google-bert/bert-base-uncased`, legacy `bert-base-uncased`) whose files are fetched at --model_revision
// into the Hub cache (--cache_dir, HF_HUB_CACHE, ...; hub/hub_cache.h) with --token, and the flag then points
// at the repo's snapshot folder there. Files: config.json; model.safetensors or model.safetensors.index.json
// + its shards; tokenizer.json, else vocab.txt, vocab.json + merges.txt or a SentencePiece model
// (sentencepiece.bpe.model, spm.model, tokenizer.model), and tokenizer_config.json, special_tokens_map.json,
// added_tokens.json (optional ones may be absent). A repo with only PyTorch pickles (pytorch_model.bin) is
// refused with the one-time conversion to safetensors (docs/hub.md).
#pragma once

#include "train/dist_context.h"
#include "train/training_args.h"

namespace ct::train {

// The model arguments with every repo id replaced by a local snapshot folder; local paths are unchanged.
// `offline` forces the cache only (HF_HUB_OFFLINE does too). Errors name the flag.
ModelArguments localize_model_sources(const ModelArguments& m, bool offline = false);

// The same for a data-parallel job: local rank 0 of each node fetches (one download per node; the Hub cache's
// lock files also make pods sharing a volume download once), the other ranks wait, then read the node's cache
// without a request. When a node's fetch fails every rank fails: that node's local rank 0 with the reason,
// the others naming it. Collective: every rank calls it.
ModelArguments localize_model_sources(const ModelArguments& m, const DistContext& dist);

}  // namespace ct::train
