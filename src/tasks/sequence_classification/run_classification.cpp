#include "tasks/sequence_classification/run_classification.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "core/error.h"
#include "core/log.h"
#include "core/numpy_rng.h"
#include "data/dataset_table.h"
#include "tasks/metrics/evaluate_metric.h"
#include "tasks/sequence_classification/prepared_split.h"
#include "tasks/table_cells.h"
#include "train/dataset_split.h"
#include "train/encoder_loader.h"
#include "train/model_source.h"
#include "train/run_setup.h"

namespace ct::tasks {
namespace {

using parquet::Value;

// raw_datasets as the script edits it: split name -> where its rows come from, read on first use.
class RawSplits {
 public:
  RawSplits(const ClassificationArguments& a, const train::DistContext& dist) : dist_(dist) {
    const auto& d = a.data;
    if (!d.dataset_name.empty()) {
      hub_ = true;
      q_ = train::dataset_request(d.dataset_name, d.dataset_config_name, a.model);
      for (const auto& s : train::dataset_split_names(q_, dist)) where_[s] = s;
    } else {
      if (!d.train_file.empty()) where_["train"] = d.train_file;
      if (!d.validation_file.empty()) where_["validation"] = d.validation_file;
      if (!d.test_file.empty()) where_["test"] = d.test_file;
    }
  }
  bool has(const std::string& s) const { return where_.count(s) != 0; }
  void pop(const std::string& s, const std::string& flag) {
    if (!has(s)) fail(flag, ": no split '", s, "' (the data has: ", names(), ")");
    where_.erase(s);
  }
  void rename(const std::string& from, const std::string& to, const std::string& flag) {
    if (!has(from)) fail(flag, ": no split '", from, "' (the data has: ", names(), ")");
    const std::string w = where_[from];
    where_.erase(from);
    where_[to] = w;
  }
  // The split's table, with --remove_columns and the label column renamed to "label".
  data::DatasetTable read(const std::string& s, const std::vector<std::string>& remove_columns,
                          const std::string& label_column) {
    if (!has(s)) fail("split '", s, "' is not in the data (it has: ", names(), ")");
    data::DatasetTable t = hub_ ? train::read_dataset_split(q_, where_[s], dist_)
                                : data::read_table_files({where_[s]}, "--" + s + "_file");
    auto& names = t.table.names;
    for (const auto& c : remove_columns) {
      const int k = t.table.find(c);
      if (k < 0) fail("--remove_columns: ", t.source, " has no column '", c, "'");
      names.erase(names.begin() + k);
      t.table.columns.erase(t.table.columns.begin() + k);
    }
    if (!label_column.empty() && label_column != "label") {
      const int k = t.table.find(label_column);
      if (k < 0) fail("--label_column_name ", label_column, ": ", t.source, " has no such column");
      names[static_cast<size_t>(k)] = "label";
      if (t.features && t.features->kind == parquet::Feature::Kind::Struct)
        for (auto& key : t.features->keys)
          if (key == label_column) key = "label";
    }
    return t;
  }

 private:
  std::string names() const {
    std::string s;
    for (const auto& [k, v] : where_) s += (s.empty() ? "" : ", ") + k;
    return s.empty() ? "no splits" : s;
  }
  const train::DistContext& dist_;
  bool hub_ = false;
  data::DatasetRequest q_;
  std::map<std::string, std::string> where_;
};

bool list_labels(const data::DatasetTable& t) {
  const auto& col = t.column("label");
  return !col.empty() && col[0].kind == Value::Kind::List;
}

// get_label_list: the split's distinct labels as strings (list labels flattened).
std::vector<std::string> split_labels(const data::DatasetTable& t) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  const auto& col = t.column("label");
  auto add = [&](const std::string& k) {
    if (seen.insert(k).second) out.push_back(k);
  };
  for (size_t r = 0; r < col.size(); ++r) {
    if (col[r].kind == Value::Kind::List) {
      for (const auto& v : col[r].items) {
        if (v.kind == Value::Kind::String)
          add(v.s);
        else if (v.kind == Value::Kind::Int)
          add(std::to_string(v.i));
        else
          fail(t.source, ": column \"label\" row ", r,
               ": a label in the list is neither a string nor an integer");
      }
    } else {
      add(label_key(t, "label", static_cast<int64_t>(r)));
    }
  }
  return out;
}

std::string cell_key(const data::DatasetTable& t, const Value& v, size_t row) {
  if (v.kind == Value::Kind::String) return v.s;
  if (v.kind == Value::Kind::Int) return std::to_string(v.i);
  fail(t.source, ": column \"label\" row ", row, ": a label in the list is neither a string nor an integer");
}

}  // namespace

train::RunResult run_classification(ClassificationArguments args, const std::vector<std::string>& argv,
                                    const train::DistContext& dist) {
  auto& t = args.training;
  auto& d = args.data;
  const std::string resume = train::begin_task_run(t, argv, dist, args.notes);

  RawSplits raw(args, dist);
  for (const auto& s : split_commas(d.remove_splits)) raw.pop(s, "--remove_splits");
  if (!d.train_split_name.empty()) raw.rename(d.train_split_name, "train", "--train_split_name");
  if (!d.validation_split_name.empty())
    raw.rename(d.validation_split_name, "validation", "--validation_split_name");
  if (!d.test_split_name.empty()) raw.rename(d.test_split_name, "test", "--test_split_name");
  const std::vector<std::string> remove_columns = split_commas(d.remove_columns);
  auto read = [&](const std::string& s) { return raw.read(s, remove_columns, d.label_column_name); };

  data::DatasetTable train_table = read("train");
  const bool regression = d.do_regression ? *d.do_regression : is_float_column(train_table, "label");
  const bool multi_label = !regression && list_labels(train_table);
  std::vector<std::string> label_list;
  std::optional<data::DatasetTable> eval_table, test_table;
  const bool eval_from_test = t.do_eval && !raw.has("validation");
  if (t.do_eval) {
    if (eval_from_test && !raw.has("test"))
      fail("--do_eval requires a validation or test dataset if validation is not defined");
    if (eval_from_test)
      log::warn("Validation dataset not found. Falling back to test dataset for validation.");
  }
  if (raw.has("validation")) eval_table = read("validation");
  if (raw.has("test")) test_table = read("test");
  if (!regression) {
    // The union of the splits' labels (a label only in validation/test is added, with the script's warning).
    label_list = split_labels(train_table);
    std::set<std::string> known(label_list.begin(), label_list.end());
    for (const auto* other : {eval_table ? &*eval_table : nullptr, test_table ? &*test_table : nullptr}) {
      if (!other || !other->has_column("label")) continue;
      for (const auto& l : split_labels(*other))
        if (l != "-1" && known.insert(l).second) {
          log::warn("Labels {'", l, "'} in ", other->source,
                    " but not in the training set, adding them to the label list");
          label_list.push_back(l);
        }
    }
    // -1 marks an unlabelled example (GLUE-style test sets), never a class.
    label_list.erase(std::remove(label_list.begin(), label_list.end(), "-1"), label_list.end());
    std::sort(label_list.begin(), label_list.end());
    if (label_list.size() <= 1)
      fail("You need more than one label to do classification (", train_table.source, " has ",
           label_list.size(), ")");
  }
  const auto num_labels = regression ? int64_t{1} : static_cast<int64_t>(label_list.size());
  if (!d.metric_name.empty()) check_metric_name(d.metric_name, regression, multi_label);

  train::ModelArguments local = train::localize_model_sources(args.model, dist);
  model::ModelConfig config = train::load_task_config(local, num_labels);
  config.extra["finetuning_task"] = "text-classification";
  config.problem_type = regression    ? "regression"
                        : multi_label ? "multi_label_classification"
                                      : "single_label_classification";
  text::HfTokenizer tok = train::load_task_tokenizer(local, config);
  std::map<std::string, int64_t> label_to_id;
  if (!regression) {
    if (t.do_train) {
      train::set_label_names(config, label_list);
      for (size_t i = 0; i < label_list.size(); ++i) label_to_id[label_list[i]] = static_cast<int64_t>(i);
    } else {
      // Not training: the checkpoint's label2id decides.
      for (const auto& [k, v] : train::checkpoint_label2id(config)) label_to_id[k] = v;
      if (label_to_id.empty())
        fail(
            "--model_name_or_path: config.json has no label2id to evaluate with (train with --do_train "
            "first)");
      label_list.assign(static_cast<size_t>(num_labels), "");
      for (const auto& [k, v] : label_to_id)
        if (v >= 0 && v < num_labels) label_list[static_cast<size_t>(v)] = k;
    }
  }
  auto model = train::build_shared_model(local, config, t, model::HeadKind::sequence_classification,
                                         args.model_extra.ignore_mismatched_sizes, dist);

  SequenceClassificationOptions o;
  o.max_seq_length = train::fit_max_seq_length("--max_seq_length", d.max_seq_length, tok, config);
  o.pad_to_max_length = d.pad_to_max_length;
  o.pad_token_id = tok.pad_token_id();
  o.num_labels = num_labels;
  o.kind = regression    ? LabelKind::regression
           : multi_label ? LabelKind::multi_label
                         : LabelKind::single_label;
  o.metric_name = d.metric_name;
  o.label_list = label_list;
  o.predict_file_name = "predict_results.txt";

  const FeatureCache cache = make_feature_cache(tok, args.model.cache_dir, d.overwrite_cache, dist);
  const std::vector<std::string> text_columns =
      d.text_column_names.empty() ? std::vector<std::string>{"sentence"} : split_commas(d.text_column_names);
  auto prepare = [&](data::DatasetTable table, int64_t max_samples, bool with_labels, bool shuffle) {
    if (shuffle) {
      // datasets' Dataset.shuffle(seed=shuffle_seed): the rows in np.random.default_rng(seed)'s permutation.
      const std::vector<int64_t> perm =
          numpy_permutation(static_cast<uint64_t>(d.shuffle_seed), table.num_rows());
      for (auto& col : table.table.columns) {
        std::vector<Value> shuffled(col.size());
        for (size_t i = 0; i < perm.size(); ++i) shuffled[i] = std::move(col[static_cast<size_t>(perm[i])]);
        col = std::move(shuffled);
      }
    }
    table.keep_first(max_samples);
    std::vector<std::vector<std::string>> cols;
    for (const auto& c : text_columns) cols.push_back(text_column(table, c));
    std::vector<TextPair> texts(static_cast<size_t>(table.num_rows()));
    for (size_t i = 0; i < texts.size(); ++i) {
      texts[i].first = cols[0][i];
      for (size_t c = 1; c < cols.size(); ++c) texts[i].first += d.text_column_delimiter + cols[c][i];
    }
    std::vector<int64_t> labels;
    std::vector<float> float_labels;
    if (with_labels && table.has_column("label")) {
      const auto& col = table.column("label");
      for (size_t r = 0; r < col.size(); ++r) {
        if (regression) {
          float_labels.push_back(static_cast<float>(label_number(table, "label", static_cast<int64_t>(r))));
        } else if (multi_label) {
          std::vector<float> row(static_cast<size_t>(num_labels), 0.0f);
          if (col[r].kind != Value::Kind::List)
            fail(table.source, ": column \"label\" row ", r, ": expected a list of labels");
          for (const auto& v : col[r].items) {
            const auto it = label_to_id.find(cell_key(table, v, r));
            if (it == label_to_id.end())
              fail(table.source, ": column \"label\" row ", r, ": unknown label '", cell_key(table, v, r),
                   "'");
            row[static_cast<size_t>(it->second)] = 1.0f;
          }
          float_labels.insert(float_labels.end(), row.begin(), row.end());
        } else {
          const std::string k = label_key(table, "label", static_cast<int64_t>(r));
          if (k == "-1") {
            labels.push_back(-1);
            continue;
          }
          const auto it = label_to_id.find(k);
          if (it == label_to_id.end())
            fail(table.source, ": column \"label\" row ", r, ": unknown label '", k, "'");
          labels.push_back(it->second);
        }
      }
    }
    return prepare_sequences(split_cache(&cache, table), texts, std::move(labels), std::move(float_labels),
                             tok, o);
  };
  std::unique_ptr<PreparedSequences> train_p, eval_p, predict_p;
  if (t.do_train)
    train_p = prepare(std::move(train_table), d.max_train_samples, true, d.shuffle_train_dataset);
  if (t.do_eval)
    eval_p = prepare(eval_from_test ? *test_table : *eval_table, d.max_eval_samples, true, false);
  if (t.do_predict || !d.test_file.empty()) {
    if (!test_table) fail("--do_predict requires a test dataset");
    // The label column is removed before predicting (it may hold -1).
    if (t.do_predict) predict_p = prepare(*test_table, d.max_predict_samples, false, false);
  }

  train::TaskRunner runner(
      t, *model, [&tok](const std::string& dir) { tok.save(dir); }, dist);
  runner.dump_eval_features(args.dump_eval_features, eval_p ? eval_p->split.get() : nullptr);
  runner.dump_train_features(args.dump_train_features, train_p ? train_p->split.get() : nullptr);
  train::RunResult result = runner.train_and_evaluate(
      train_p ? train_p->split.get() : nullptr, train_p ? train_p->examples : 0,
      eval_p ? eval_p->split.get() : nullptr, eval_p ? eval_p->examples : 0, resume);
  if (t.do_predict) {
    log::info("*** Predict ***");
    runner.predict(*predict_p->split);  // predict_results.txt; the script reports no predict metrics
  }
  train::ModelCardInfo card;
  card.finetuned_from = args.model.model_name_or_path;
  card.tasks = "text-classification";
  runner.write_model_card(card);
  return result;
}

}  // namespace ct::tasks
