#include "train/dataset_split.h"

#include "core/error.h"
#include "core/log.h"

namespace ct::train {
namespace {

// Fails every rank, naming the rank, when some rank's `err` is not empty. Collective.
void fail_if_any(const DistContext& dist, const std::string& flag, const std::string& name,
                 const std::string& err) {
  const auto errs = allgather_strings(dist, err);
  for (size_t r = 0; r < errs.size(); ++r)
    if (!errs[r].empty())
      fail(flag, " ", name, ": ", errs[r],
           static_cast<int>(r) == dist.rank ? std::string() : str(" (on rank ", r, ")"));
}

// Runs `work` on local rank 0 of each node first, then (offline, from the node's cache) on the other ranks;
// a failure anywhere, in either round, fails every rank with the failing rank's reason.
void on_node_leader_first(const DistContext& dist, const std::string& flag, const std::string& name,
                          const std::function<void(bool offline)>& work) {
  auto attempt = [&](bool offline) {
    try {
      work(offline);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  fail_if_any(dist, flag, name, dist.local_rank == 0 ? attempt(false) : std::string());
  fail_if_any(dist, flag, name, dist.local_rank != 0 ? attempt(true) : std::string());
}

}  // namespace

data::DatasetRequest dataset_request(const std::string& name, const std::string& config,
                                     const ModelArguments& m) {
  data::DatasetRequest q;
  q.name = name;
  q.config = config;
  q.cache_dir = m.cache_dir;
  q.token = m.token;
  return q;
}

FetchedSplit fetch_dataset_split(const data::DatasetRequest& q, const std::string& split,
                                 const DistContext& dist, const std::string& flag) {
  FetchedSplit out;
  on_node_leader_first(dist, flag, q.name, [&](bool offline) {
    data::DatasetRequest r = q;
    if (offline) r.offline = true;
    out.dataset = data::resolve_dataset(r);
    out.paths = data::fetch_split(r, out.dataset, split);
  });
  if (dist.rank == 0)
    log::info(flag, " ", q.name, " ", split, ": ",
              out.paths.size() == 1 ? out.paths[0] : str(out.paths.size(), " files"));
  return out;
}

std::vector<std::string> dataset_split_names(const data::DatasetRequest& q, const DistContext& dist,
                                             const std::string& flag) {
  // Only a node leader resolves: the others' offline view of the cache lists the splits downloaded so far,
  // not the repo's. Every rank takes rank 0's list.
  std::string names, err;
  if (dist.local_rank == 0) {
    try {
      for (const auto& s : data::resolve_dataset(q).split_names()) names += s + "\n";
    } catch (const Error& e) {
      err = e.what();
    }
  }
  fail_if_any(dist, flag, q.name, err);
  broadcast_string(dist, &names);
  std::vector<std::string> out;
  for (size_t b = 0, e; b < names.size(); b = e + 1) {
    e = names.find('\n', b);
    out.push_back(names.substr(b, e - b));
  }
  return out;
}

data::DatasetTable read_dataset_split(const data::DatasetRequest& q, const std::string& split,
                                      const DistContext& dist, const data::TableReadOptions& options,
                                      const std::string& flag) {
  const FetchedSplit f = fetch_dataset_split(q, split, dist, flag);
  data::DatasetTable t = data::read_table_files(f.paths, flag + " " + q.name, options);
  if (!t.features && !f.paths.empty() && data::loader_for(f.paths[0], flag) == "parquet")
    t.features = data::dataset_features(f.dataset, f.paths[0]);
  if (!t.features) t.features = f.dataset.card_features;
  t.source = str(f.dataset.repo_id, q.config.empty() ? "" : " " + q.config, " ", split);
  t.fingerprint = str(f.dataset.repo_id, "@", f.dataset.commit, " ", f.dataset.config, " ", split);
  for (const auto& p : f.dataset.split(split)) t.fingerprint += " " + p;
  return t;
}

}  // namespace ct::train
