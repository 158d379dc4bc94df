// The legacy source of --dataset_name squad / squad_v2, used only when CORETRAIN_SQUAD_URL is set (otherwise
// the qa command reads rajpurkar/squad's Parquet from the Hub, data/hub_dataset.h): the official SQuAD JSON
// files that HF's original
// `squad` loading script read (train-v1.1.json, dev-v1.1.json, train-v2.0.json, dev-v2.0.json), fetched once
// into the datasets cache and read from there by every later run:
//   <root>/coretrain-squad/<host>/<path of the base URL>/<file>.json     (":" and other odd characters ->
//   "_")
// root: data::datasets_cache_dir (data/datasets_cache.h). The base URL is
// CORETRAIN_SQUAD_URL, else https://rajpurkar.github.io/SQuAD-explorer/dataset. A download goes to a
// temporary file beside the target, is checked to be SQuAD-shaped JSON and renamed into place, under an flock
// on <file>.json.lock so that processes sharing the folder (ranks, pods on one volume) download it once.
// HF_DATASETS_OFFLINE=1 or HF_HUB_OFFLINE=1: the cache only, no request.
#pragma once

#include <string>
#include <string_view>

namespace ct::tasks {

struct SquadDataset {
  std::string name;  // "squad" or "squad_v2" (rajpurkar/ prefix dropped)
  bool v2 = false;
};

// --dataset_name / --dataset_config_name: squad | rajpurkar/squad with config plain_text (or none), squad_v2
// | rajpurkar/squad_v2 with config squad_v2 (or none). Anything else throws naming the flag and what is
// accepted.
SquadDataset resolve_squad_dataset(const std::string& name, const std::string& config);
// The official file of a split ("train" or "validation"); other splits throw (SQuAD has no test split).
std::string squad_file_name(const SquadDataset& ds, const std::string& split);
// True when CORETRAIN_SQUAD_URL is set (not empty): --dataset_name reads the official JSON files from there.
bool squad_json_source();
// True for the names resolve_squad_dataset knows (squad, squad_v2 with or without rajpurkar/).
bool is_squad_name(const std::string& name);
// CORETRAIN_SQUAD_URL (trailing "/" dropped) or the default base URL above.
std::string squad_base_url();
// HF_DATASETS_OFFLINE or HF_HUB_OFFLINE set to 1/true/yes/on (any case).
bool datasets_offline();
// Where `url` is kept under `root` (see above).
std::string squad_cache_path(const std::string& root, const std::string& url);
// Throws a one-line ct::Error naming `what` unless `text` is a JSON object with a "version" and a "data"
// array.
void check_squad_json(std::string_view text, const std::string& what);
// The cached copy of `url` under `root`, downloading it first when missing (see above). Throws naming the URL
// and the cache path when offline and not cached, on HTTP/connection failures, or when the body is not SQuAD
// JSON (nothing is then left in the cache).
std::string fetch_squad_file(const std::string& url, const std::string& root, bool offline);

}  // namespace ct::tasks
