// The raw text splits that run_mlm.py and run_clm.py read alike: a Hub dataset (--dataset_name,
// --dataset_config_name) or local txt/csv/json files; without a validation split, train[:P%] held out for
// evaluation and train[P%:] trained on (--validation_split_percentage, datasets' slice rounding); and the
// text column rule: "text", else the first column (of train when training).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "data/dataset_table.h"
#include "train/dist_context.h"
#include "train/training_args.h"

namespace ct::tasks {

struct TextSplitsRequest {
  std::string dataset_name, dataset_config_name;
  std::string train_file, validation_file;
  int64_t validation_split_percentage = 5;
  bool keep_linebreaks = false;  // txt files: keep each line's "\n" (run_clm's --keep_linebreaks)
  bool do_train = false, do_eval = false;
};

struct RawTextSplits {
  std::optional<data::DatasetTable> train, validation;
};

// Reads the splits the run needs. Collective (a Hub dataset is fetched once per node).
RawTextSplits read_text_splits(const TextSplitsRequest& r, const train::ModelArguments& model,
                               const train::DistContext& dist);

// The same from a script's DataTrainingArguments (run_mlm's and run_clm's share these field names; only
// run_clm has keep_linebreaks), then the scripts' checks that --do_train and --do_eval have their split.
template <class Data>
RawTextSplits read_script_text_splits(const Data& d, const train::TrainingArguments& t,
                                      const train::ModelArguments& model, const train::DistContext& dist) {
  TextSplitsRequest req;
  req.dataset_name = d.dataset_name;
  req.dataset_config_name = d.dataset_config_name;
  req.train_file = d.train_file;
  req.validation_file = d.validation_file;
  req.validation_split_percentage = d.validation_split_percentage;
  if constexpr (requires { d.keep_linebreaks; }) req.keep_linebreaks = d.keep_linebreaks;
  req.do_train = t.do_train;
  req.do_eval = t.do_eval;
  RawTextSplits raw = read_text_splits(req, model, dist);
  CT_CHECK(!t.do_train || raw.train, "--do_train requires a train dataset (--train_file or a train split)");
  CT_CHECK(
      !t.do_eval || raw.validation,
      "--do_eval requires a validation dataset (--validation_file, a validation split or a train split)");
  return raw;
}

// datasets' split slicing boundary for "train[:p%]": round(p * n / 100), halves to even (Python's round).
int64_t percent_boundary(int64_t percent, int64_t num_rows);

// Rows [from, to) of `t` (datasets' train[a%:b%]), named after the slice.
data::DatasetTable slice_rows(const data::DatasetTable& t, int64_t from, int64_t to, const std::string& name);

// The column the scripts tokenize: "text", else the first; `splits` in the order the script asks them
// (train under --do_train, else validation). Fails naming the table when it has no columns.
std::string text_column_name(const data::DatasetTable& table);

// The text column as the scripts' tokenize_function reads it: a null cell is ""; any other non-text cell
// fails naming its row.
std::vector<std::string> texts_of(const data::DatasetTable& table, const std::string& column);

}  // namespace ct::tasks
