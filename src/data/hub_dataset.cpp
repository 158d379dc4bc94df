#include "data/hub_dataset.h"

#include <strings.h>
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <optional>

#include "core/error.h"
#include "core/fs.h"
#include "core/log.h"
#include "data/card_features.h"
#include "data/data_files.h"
#include "data/readme_yaml.h"
#include "hub/hub_client.h"
#include "parquet/parquet_file.h"

namespace ct::data {

using json = nlohmann::ordered_json;

namespace {

constexpr const char* kConvertBranch = "refs/convert/parquet";

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

hub::HubClient client_for(const DatasetRequest& req) {
  hub::HubOptions o;
  o.endpoint = req.endpoint;
  o.cache_dir = req.cache_dir;
  o.transformers_env = false;  // TRANSFORMERS_CACHE is for models
  o.token = req.token;
  o.offline = req.offline ? req.offline : std::optional<bool>(datasets_offline_env());
  return hub::HubClient(o);
}

bool env_flag(const char* name, bool* value) {
  const char* v = std::getenv(name);
  if (!v || !*v) return false;
  *value = !strcasecmp(v, "1") || !strcasecmp(v, "true") || !strcasecmp(v, "yes") || !strcasecmp(v, "on");
  return true;
}

// The Parquet conversion's layout: {config}/{split}/NNNN.parquet (and {config}/partial-{split}/...).
ResolvedDataset from_convert_branch(const std::string& repo, const hub::RepoFiles& rf,
                                    const std::string& config, const std::string& revision) {
  std::vector<std::string> configs;
  for (const auto& f : rf.files) {
    const auto slash = f.find('/');
    if (slash == std::string::npos || f.size() < 8 || f.compare(f.size() - 8, 8, ".parquet") != 0) continue;
    const std::string c = f.substr(0, slash);
    if (std::find(configs.begin(), configs.end(), c) == configs.end()) configs.push_back(c);
  }
  CT_CHECK(!configs.empty(), "dataset ", repo, " at ", revision, " holds no Parquet files");
  std::string chosen = config;
  if (chosen.empty()) {
    if (configs.size() == 1)
      chosen = configs[0];
    else if (std::find(configs.begin(), configs.end(), "default") != configs.end())
      chosen = "default";
    else
      fail("dataset ", repo,
           ": config name is missing; pick one with --dataset_config_name from: ", join(configs));
  }
  CT_CHECK(std::find(configs.begin(), configs.end(), chosen) != configs.end(), "dataset ", repo,
           ": no config '", chosen, "' in its Parquet conversion; available configs: ", join(configs));
  ResolvedDataset ds;
  ds.repo_id = repo;
  ds.revision = revision;
  ds.commit = rf.commit;
  ds.config = chosen;
  for (const auto& f : rf.files) {
    if (f.rfind(chosen + "/", 0) != 0 || f.size() < 8 || f.compare(f.size() - 8, 8, ".parquet") != 0)
      continue;
    const std::string rest = f.substr(chosen.size() + 1);
    const auto slash = rest.find('/');
    if (slash == std::string::npos) continue;
    std::string split = rest.substr(0, slash);
    if (split.rfind("partial-", 0) == 0) split = split.substr(8);
    if (const auto part = split.find("-part"); part != std::string::npos) split = split.substr(0, part);
    auto it =
        std::find_if(ds.splits.begin(), ds.splits.end(), [&](const auto& s) { return s.first == split; });
    if (it == ds.splits.end()) {
      ds.splits.emplace_back(split, std::vector<std::string>{});
      it = ds.splits.end() - 1;
    }
    it->second.push_back(f);
  }
  for (auto& [s, files] : ds.splits) std::sort(files.begin(), files.end());
  return ds;
}

// Splits from the card's configs, else the default patterns; `readme` may be empty.
// `partial`: the file list is a cached snapshot holding only what earlier runs downloaded.
void choose_files(ResolvedDataset& ds, const std::string& readme, const std::vector<std::string>& files,
                  const std::string& config, const std::string& where, bool partial = false) {
  const json configs =
      readme.empty() ? json(nullptr) : card_yaml_section(readme, "configs", where + " README.md");
  if (!configs.is_null()) {
    const json& c = select_config(configs, config, where);
    ds.config = c.contains("config_name") && c["config_name"].is_string()
                    ? c["config_name"].get<std::string>()
                    : "default";
    ds.splits = files_of_config(c, files, where, partial);
    ds.card_features = card_features(readme, ds.config, where + " README.md");
    return;
  }
  CT_CHECK(config.empty() || config == "default", where, ": no config '", config,
           "' (the repo's card defines no configs; its only config is 'default')");
  ds.config = "default";
  ds.splits = default_split_files(files);
  if (!readme.empty()) ds.card_features = card_features(readme, "", where + " README.md");
}

// The Parquet conversion as an earlier online run cached it, for a revision whose cached snapshot holds no
// data files: what that run chose for a script-only repo. nullopt when it is not cached either.
std::optional<ResolvedDataset> cached_conversion(hub::HubClient& hc, const std::string& repo,
                                                 const std::string& config) {
  hub::RepoFiles conv;
  try {
    conv = hc.list_files(hub::RepoType::dataset, repo, kConvertBranch);
  } catch (const hub::HubError& e) {
    if (e.code() == hub::HubErrorCode::not_cached) return std::nullopt;
    throw;
  }
  log::info("dataset ", repo, ": no data files in the cached main; reading its cached Parquet conversion (",
            kConvertBranch, ")");
  return from_convert_branch(repo, conv, config, kConvertBranch);
}

bool has_script(const std::vector<std::string>& files, const std::string& repo) {
  const std::string base = repo.substr(repo.rfind('/') + 1) + ".py";
  return std::find(files.begin(), files.end(), base) != files.end();
}

}  // namespace

const std::vector<std::string>& ResolvedDataset::split(const std::string& name) const {
  for (const auto& [s, files] : splits)
    if (s == name) return files;
  fail("dataset ", repo_id, " config '", config, "' has no split '", name,
       "'; its splits: ", join(split_names()));
}

std::vector<std::string> ResolvedDataset::split_names() const {
  std::vector<std::string> names;
  for (const auto& [s, files] : splits) names.push_back(s);
  return names;
}

bool datasets_offline_env() {
  bool v = false;
  if (env_flag("HF_DATASETS_OFFLINE", &v)) return v;
  return hub::offline_from_env();
}

ResolvedDataset resolve_dataset(const DatasetRequest& req) {
  CT_CHECK(!req.name.empty(), "--dataset_name is empty");
  // A local folder laid out like a repo.
  if (std::filesystem::is_directory(req.name)) {
    ResolvedDataset ds;
    ds.repo_id = req.name;
    ds.local = true;
    std::vector<std::string> files;
    for (const auto& e : std::filesystem::recursive_directory_iterator(req.name))
      if (e.is_regular_file())
        files.push_back(std::filesystem::path(e.path()).lexically_relative(req.name).generic_string());
    std::sort(files.begin(), files.end());
    const std::string readme_path = req.name + "/README.md";
    const std::string readme = std::filesystem::exists(readme_path) ? fs::read_file(readme_path) : "";
    choose_files(ds, readme, files, req.config, "dataset folder " + req.name);
    CT_CHECK(!ds.splits.empty(), "dataset folder ", req.name,
             " holds no data files (parquet, csv, json, jsonl, txt)");
    return ds;
  }
  const std::string repo = dataset_repo_id(req.name);
  std::string why;
  CT_CHECK(hub::looks_like_repo_id(repo, &why), "--dataset_name '", req.name,
           "' is neither a folder nor a Hub dataset id (", why, ")");
  CT_CHECK(
      repo.find('/') != std::string::npos, "--dataset_name '", req.name,
      "': the Hub no longer resolves dataset names without an owner; give org/name (known short names: glue, "
      "squad, squad_v2, imdb, conll2003, wikitext, swag)");
  hub::HubClient hc = client_for(req);
  const std::string revision = req.revision.empty() ? "main" : req.revision;
  const std::string where = "dataset " + repo;
  if (revision == kConvertBranch)
    return from_convert_branch(repo, hc.list_files(hub::RepoType::dataset, repo, revision), req.config,
                               revision);
  hub::RepoFiles rf;
  try {
    rf = hc.list_files(hub::RepoType::dataset, repo, revision);
  } catch (const hub::HubError& e) {
    // A script-only repo whose main had nothing worth downloading (no README) leaves no snapshot of main.
    if (e.code() != hub::HubErrorCode::not_cached) throw;
    if (auto ds = cached_conversion(hc, repo, req.config)) return *ds;
    throw;
  }
  // Offline (or the Hub unreachable) the loading script is not in the cache, so has_script cannot see it.
  if (rf.from_cache && std::none_of(rf.files.begin(), rf.files.end(), is_data_file)) {
    if (auto ds = cached_conversion(hc, repo, req.config)) return *ds;
  }

  ResolvedDataset ds;
  ds.repo_id = repo;
  ds.revision = revision;
  ds.commit = rf.commit;
  std::string readme;
  if (std::find(rf.files.begin(), rf.files.end(), "README.md") != rf.files.end())
    readme = fs::read_file(hc.resolve({hub::RepoType::dataset, repo, rf.commit, "README.md"}));
  if (has_script(rf.files, repo)) {
    // datasets >= 4 refuses loading scripts; the Hub's Parquet conversion is what it can still read.
    hub::RepoFiles conv;
    try {
      conv = hc.list_files(hub::RepoType::dataset, repo, kConvertBranch);
    } catch (const hub::HubError& e) {
      if (e.code() != hub::HubErrorCode::revision_not_found && e.code() != hub::HubErrorCode::not_cached)
        throw;
      fail(where, " holds only a loading script (", repo.substr(repo.rfind('/') + 1),
           ".py), which datasets no longer runs, and has no Parquet conversion (", kConvertBranch,
           "); use a copy of it in Parquet or pass local files");
    }
    log::info(where, ": main holds a loading script; reading its Parquet conversion (", kConvertBranch, ")");
    return from_convert_branch(repo, conv, req.config, kConvertBranch);
  }
  choose_files(ds, readme, rf.files, req.config, where, rf.from_cache);
  CT_CHECK(!ds.splits.empty(), where, " at ", revision,
           " holds no data files (parquet, csv, json, jsonl, txt)");
  return ds;
}

std::optional<parquet::Feature> dataset_features(const ResolvedDataset& ds, const std::string& parquet_path) {
  auto file = parquet::ParquetFile::open(parquet_path);
  const std::string hf = file->key_value("huggingface");
  if (!hf.empty()) return parquet::parse_hf_features(hf, parquet_path);
  return ds.card_features;
}

std::vector<std::string> fetch_split(const DatasetRequest& req, const ResolvedDataset& ds,
                                     const std::string& split) {
  const auto& files = ds.split(split);
  std::vector<std::string> out;
  if (ds.local) {
    for (const auto& f : files) out.push_back(ds.repo_id + "/" + f);
    return out;
  }
  hub::HubClient hc = client_for(req);
  for (const auto& f : files) out.push_back(hc.resolve({hub::RepoType::dataset, ds.repo_id, ds.commit, f}));
  return out;
}

}  // namespace ct::data
