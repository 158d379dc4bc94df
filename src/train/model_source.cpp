#include "train/model_source.h"

#include <filesystem>
#include <optional>

#include "core/error.h"
#include "core/log.h"
#include "hub/hub_client.h"
#include "model/checkpoint.h"

namespace ct::train {
namespace stdfs = std::filesystem;

namespace {

// The tokenizer: tokenizer.json and BERT's vocab.txt (BertTokenizerFast fetches both), else the slow
// tokenizer's files tokenizer.json is converted from (GPT-2/RoBERTa's vocab.json + merges.txt, a
// SentencePiece model: XLM-R, CamemBERT, DeBERTa-v2, ALBERT); then the settings beside it, whichever exist.
const char* const kVocabFiles[] = {"vocab.json", "sentencepiece.bpe.model", "spm.model", "tokenizer.model"};
const char* const kTokenizerSettings[] = {"tokenizer_config.json", "special_tokens_map.json",
                                          "added_tokens.json"};

bool exists_locally(const std::string& p) {
  std::error_code ec;
  return stdfs::exists(p, ec);
}

// Which files a flag needs from its repo.
enum Need { kConfig = 1, kTokenizer = 2, kWeights = 4 };

class Fetcher {
 public:
  Fetcher(const ModelArguments& m, bool offline) : m_(m) {
    hub::HubOptions o;
    o.cache_dir = m.cache_dir;
    o.token = m.token;
    if (offline) o.offline = true;
    client_.emplace(o);
  }

  // The local folder for `value`, fetching what `need` asks for when it is a repo id.
  std::string localize(const std::string& flag, const std::string& value, int need) {
    if (value.empty() || exists_locally(value)) return value;
    std::string why;
    if (!hub::looks_like_repo_id(value, &why))
      fail(flag, ": ", value, " is neither a local path (it does not exist) nor a Hub repo id (", why, ")");
    std::string snapshot;
    try {
      if (need & kConfig) snapshot = dir_of(get(value, "config.json"));
      if (need & kTokenizer) snapshot = fetch_tokenizer(value);
      if (need & kWeights) snapshot = fetch_weights(value);
    } catch (const Error& e) {
      fail(flag, ": ", e.what());
    }
    log::info(flag, " ", value, " (revision ", m_.model_revision, "): ", snapshot);
    return snapshot;
  }

 private:
  hub::FileRef ref(const std::string& repo, const std::string& file) const {
    hub::FileRef r;
    r.repo_id = repo;
    r.revision = m_.model_revision.empty() ? "main" : m_.model_revision;
    r.filename = file;
    return r;
  }
  std::string get(const std::string& repo, const std::string& file) {
    return client_->resolve(ref(repo, file));
  }
  std::optional<std::string> get_optional(const std::string& repo, const std::string& file) {
    return client_->resolve_optional(ref(repo, file));
  }
  static std::string dir_of(const std::string& file) { return stdfs::path(file).parent_path().string(); }

  std::string fetch_tokenizer(const std::string& repo) {
    std::string dir;
    bool vocab = false;
    for (const char* f : {"tokenizer.json", "vocab.txt"})
      if (auto p = get_optional(repo, f)) {
        dir = dir_of(*p);
        vocab = true;
      }
    for (const char* f : kVocabFiles) {
      if (vocab) break;
      if (auto p = get_optional(repo, f)) {
        dir = dir_of(*p);
        vocab = std::string(f) != "vocab.json" || get_optional(repo, "merges.txt").has_value();
      }
    }
    for (const char* f : kTokenizerSettings)
      if (auto p = get_optional(repo, f)) dir = dir_of(*p);
    if (!vocab)
      fail(repo,
           " has no tokenizer.json, vocab.txt, vocab.json + merges.txt or SentencePiece model at revision ",
           m_.model_revision, client_->offline() ? " in the cache (HF_HUB_OFFLINE)" : "",
           "; give --tokenizer_name");
    return dir;
  }

  std::string fetch_weights(const std::string& repo) {
    if (auto p = get_optional(repo, "model.safetensors")) return dir_of(*p);
    if (auto idx = get_optional(repo, "model.safetensors.index.json")) {
      for (const auto& shard : model::safetensors_shards(*idx)) get(repo, shard);
      return dir_of(*idx);
    }
    for (const char* other :
         {"pytorch_model.bin", "pytorch_model.bin.index.json", "tf_model.h5", "flax_model.msgpack"})
      if (get_optional(repo, other))
        fail(repo, " has ", other, " but no model.safetensors at revision ", m_.model_revision,
             "; coretrain reads safetensors only: convert it once with Python into a folder (recipe in ",
             "docs/hub.md: torch.load + safetensors.torch.save_file) and pass that folder");
    fail(repo, " has no model.safetensors (nor a sharded model.safetensors.index.json) at revision ",
         m_.model_revision, client_->offline() ? " in the cache (HF_HUB_OFFLINE)" : "");
  }

  const ModelArguments& m_;
  std::optional<hub::HubClient> client_;
};

}  // namespace

ModelArguments localize_model_sources(const ModelArguments& m, bool offline) {
  ModelArguments out = m;
  const bool any_remote = (!m.model_name_or_path.empty() && !exists_locally(m.model_name_or_path)) ||
                          (!m.config_name.empty() && !exists_locally(m.config_name)) ||
                          (!m.tokenizer_name.empty() && !exists_locally(m.tokenizer_name));
  if (!any_remote) return out;
  Fetcher f(m, offline);
  // What run_qa reads from each: the config from --config_name else the model; the tokenizer from
  // --tokenizer_name else the model (else the config's folder); the weights from the model.
  int model_need = kWeights;
  if (m.config_name.empty()) model_need |= kConfig;
  if (m.tokenizer_name.empty()) model_need |= kTokenizer;
  out.config_name =
      f.localize("--config_name", m.config_name,
                 kConfig | (m.tokenizer_name.empty() && m.model_name_or_path.empty() ? kTokenizer : 0));
  out.tokenizer_name = f.localize("--tokenizer_name", m.tokenizer_name, kTokenizer);
  out.model_name_or_path = f.localize("--model_name_or_path", m.model_name_or_path, model_need);
  return out;
}

ModelArguments localize_model_sources(const ModelArguments& m, const DistContext& dist) {
  if (!dist.distributed()) return localize_model_sources(m, false);
  ModelArguments out;
  std::string error;
  if (dist.local_rank == 0) {
    try {
      out = localize_model_sources(m, false);
    } catch (const Error& e) {
      error = e.what();
    }
  }
  // Doubles as the wait: nobody reads the node's cache before its local rank 0 is done.
  const auto failed = allgather_u64(dist, error.empty() ? 0 : 1);
  if (!error.empty()) throw Error(error);
  for (int r = 0; r < dist.world; ++r)
    if (failed[static_cast<size_t>(r)])
      fail("rank ", r, " (local rank 0 of its node) could not fetch the model files; its error says why");
  if (dist.local_rank != 0) out = localize_model_sources(m, /*offline=*/true);
  return out;
}

}  // namespace ct::train
