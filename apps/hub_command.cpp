// `coretrain hub download`: fills the Hub cache ahead of a job (a Kubernetes init step, a login node with
// network access), with huggingface-cli download's flag names. Without file names it fetches what
// `coretrain qa --model_name_or_path REPO` reads (config, safetensors weights or shards, tokenizer files) and
// prints the snapshot folder; with file names it fetches those and prints each local path. A dataset repo
// without file names: every split's files of the config `datasets.load_dataset(REPO, --config)` would read
// (data/hub_dataset.h: legacy names, README configs, default patterns, refs/convert/parquet), one path a
// line.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>
#include <vector>

#include "apps/command.h"
#include "data/hub_dataset.h"
#include "hub/hub_client.h"
#include "train/model_source.h"

namespace {

int run_hub_download(int argc, char** argv) {
  CLI::App app{
      "Download files of a Hugging Face Hub repo into the Hub cache (docs/hub.md) and print their paths",
      "coretrain hub download"};
  std::string repo, repo_type = "model", revision = "main", cache_dir, token, config;
  std::vector<std::string> files;
  app.add_option("repo_id", repo, "org/name (or a legacy name)")->required();
  app.add_option("files", files, "files to fetch (default: what `coretrain qa` reads from a model repo)");
  app.add_option("--repo-type,--repo_type", repo_type, "model or dataset")
      ->check(CLI::IsMember({"model", "dataset"}));
  app.add_option("--revision", revision, "branch, tag or commit hash");
  app.add_option("--cache-dir,--cache_dir", cache_dir,
                 "cache root (default: HF_HUB_CACHE, $HF_HOME/hub, ...)");
  app.add_option("--token", token, "Hub token (default: HF_TOKEN, $HF_HOME/token)");
  app.add_option("--config,--dataset_config_name", config,
                 "dataset config (default: the repo's default config)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (files.empty() && repo_type == "dataset") {
    ct::data::DatasetRequest q;
    q.name = repo;
    q.config = config;
    q.revision = revision == "main" ? "" : revision;
    q.cache_dir = cache_dir;
    q.token = token;
    const ct::data::ResolvedDataset ds = ct::data::resolve_dataset(q);
    for (const auto& split : ds.split_names())
      for (const auto& path : ct::data::fetch_split(q, ds, split)) std::printf("%s\n", path.c_str());
    return 0;
  }
  if (!config.empty())
    ct::fail("coretrain hub download: --config applies to dataset repos (--repo-type dataset)");
  if (files.empty()) {
    ct::train::ModelArguments m;
    m.model_name_or_path = repo;
    m.model_revision = revision;
    m.cache_dir = cache_dir;
    m.token = token;
    std::printf("%s\n", ct::train::localize_model_sources(m).model_name_or_path.c_str());
    return 0;
  }
  ct::hub::HubOptions o;
  o.cache_dir = cache_dir;
  o.token = token;
  o.transformers_env = repo_type == "model";
  ct::hub::HubClient client(o);
  for (const auto& f : files) {
    ct::hub::FileRef r;
    r.type = ct::hub::parse_repo_type(repo_type);
    r.repo_id = repo;
    r.revision = revision;
    r.filename = f;
    std::printf("%s\n", client.resolve(r).c_str());
  }
  return 0;
}

}  // namespace

CT_COMMAND("hub download", "download Hub repo files into the Hub cache (huggingface-cli download)",
           run_hub_download);
