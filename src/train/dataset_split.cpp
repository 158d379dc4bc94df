#include "train/dataset_split.h"

#include "core/error.h"
#include "core/log.h"

namespace ct::train {
namespace {

// Runs `work` on local rank 0 of each node first, then (offline, from the node's cache) on the other ranks;
// a failure anywhere fails every rank with the failing rank's reason.
void on_node_leader_first(const DistContext& dist, const std::string& flag, const std::string& name,
                          const std::function<void(bool offline)>& work) {
  std::string err;
  if (dist.local_rank == 0) {
    try {
      work(false);
    } catch (const Error& e) {
      err = e.what();
    }
  }
  const auto errs = allgather_strings(dist, err);
  for (size_t r = 0; r < errs.size(); ++r)
    if (!errs[r].empty())
      fail(flag, " ", name, ": ", errs[r],
           static_cast<int>(r) == dist.rank ? std::string() : str(" (on rank ", r, ")"));
  if (dist.local_rank != 0) work(true);
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
  std::vector<std::string> names;
  on_node_leader_first(dist, flag, q.name, [&](bool offline) {
    data::DatasetRequest r = q;
    if (offline) r.offline = true;
    names = data::resolve_dataset(r).split_names();
  });
  return names;
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
