// --dataset_name in a data-parallel job: a split's files resolved as datasets.load_dataset does
// (data/hub_dataset.h) and downloaded into the Hub cache by local rank 0 of each node (the Hub client locks
// each blob, so nodes sharing the cache download once) while the others wait, then read from the same
// snapshot offline; every rank fails with the resolving rank's message when that fails. Collective.
#pragma once

#include <string>
#include <vector>

#include "data/dataset_table.h"
#include "data/hub_dataset.h"
#include "train/dist_context.h"
#include "train/training_args.h"

namespace ct::train {

// The request a script's --dataset_name / --dataset_config_name make, with the model flags' --cache_dir and
// --token (the scripts pass those to load_dataset too).
data::DatasetRequest dataset_request(const std::string& name, const std::string& config,
                                     const ModelArguments& m);

struct FetchedSplit {
  data::ResolvedDataset dataset;
  std::vector<std::string> paths;  // local files of the split, in the order datasets reads them
};

// `flag` starts every error ("--dataset_name").
FetchedSplit fetch_dataset_split(const data::DatasetRequest& q, const std::string& split,
                                 const DistContext& dist, const std::string& flag = "--dataset_name");

// The dataset's split names (for scripts that pick among them: MNLI's validation_matched, run_mlm's
// validation or train[:N%]), resolved by local rank 0 of each node; every rank gets rank 0's. Collective.
std::vector<std::string> dataset_split_names(const data::DatasetRequest& q, const DistContext& dist,
                                             const std::string& flag = "--dataset_name");

// The split as a table: its files read as their loader reads them, with the features of the Parquet footer,
// else the dataset card's (ClassLabel names live only there for files written without datasets).
data::DatasetTable read_dataset_split(const data::DatasetRequest& q, const std::string& split,
                                      const DistContext& dist, const data::TableReadOptions& options = {},
                                      const std::string& flag = "--dataset_name");

}  // namespace ct::train
