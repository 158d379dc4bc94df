// Features built once and reused: a FeatureSet in a binary file of our own (magic "CTFEAT", version, the
// build options, then every tokenized example and feature window), keyed by everything that shapes it (the
// data file's bytes, the tokenizer, max_seq_length, doc_stride, padding, max_samples). With several ranks on
// a node, local rank 0 builds and writes it, the others read it (run_qa's main_process_first), and later runs
// read it at once. Cache folder: HF_DATASETS_CACHE, else $HF_HOME/datasets, else
// ~/.cache/huggingface/datasets, under coretrain-features/.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "data/features.h"
#include "text/hf_tokenizer.h"
#include "text/tokenizer.h"

namespace ct::data {

// Identity of a tokenizer for cache keys: vocab, added tokens, normalizer options.
uint64_t tokenizer_fingerprint(const text::Tokenizer& tokenizer);
// The same for a tokenizer.json pipeline: the tokenizer.json and tokenizer_config.json it was read with.
uint64_t tokenizer_fingerprint(const text::HfTokenizer& tokenizer);
// Identity of the features: every example's token ids and offsets and every window and label.
uint64_t feature_set_hash(const FeatureSet& features);

// The folder feature caches live in (see above); created on first write.
std::string feature_cache_dir();

// Writes atomically (temp file + rename). Throws naming the path on I/O errors.
void save_feature_set(const std::string& path, const FeatureSet& features);
// nullopt when the file does not exist; throws naming the path when it exists but is not a valid cache file
// (bad magic/version, truncated).
std::optional<FeatureSet> load_feature_set(const std::string& path);

}  // namespace ct::data
