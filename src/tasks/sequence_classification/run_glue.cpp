#include "tasks/sequence_classification/run_glue.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>

#include "core/error.h"
#include "core/log.h"
#include "data/dataset_table.h"
#include "tasks/metrics/glue_metric.h"
#include "tasks/sequence_classification/glue_columns.h"
#include "tasks/sequence_classification/predict_results.h"
#include "tasks/sequence_classification/prepared_split.h"
#include "tasks/sequence_classification/sequence_classification_split.h"
#include "tasks/sequence_classification/sequence_features.h"
#include "tasks/table_cells.h"
#include "train/dataset_split.h"
#include "train/encoder_loader.h"
#include "train/model_source.h"
#include "train/run_setup.h"

namespace ct::tasks {
namespace {

constexpr const char* kGlueRepo = "nyu-mll/glue";

// Where the raw splits come from: a GLUE task or --dataset_name on the Hub, else the local files.
struct Source {
  bool hub = false;
  data::DatasetRequest request;
  std::string hub_flag;  // what errors about the Hub data name: --task_name or --dataset_name
  std::string train_file, validation_file, test_file;
};

Source data_source(const GlueArguments& a) {
  Source s;
  const auto& d = a.data;
  if (!d.task_name.empty() || !d.dataset_name.empty()) {
    s.hub = true;
    s.request = d.task_name.empty() ? train::dataset_request(d.dataset_name, d.dataset_config_name, a.model)
                                    : train::dataset_request(kGlueRepo, d.task_name, a.model);
    s.hub_flag = d.task_name.empty() ? "--dataset_name" : "--task_name";
  } else {
    s.train_file = d.train_file;
    s.validation_file = d.validation_file;
    s.test_file = d.test_file;
  }
  return s;
}

data::DatasetTable read_split(const Source& s, const std::string& hub_split, const std::string& flag,
                              const std::string& file, const train::DistContext& dist) {
  if (s.hub) return train::read_dataset_split(s.request, hub_split, dist, {}, s.hub_flag);
  return data::read_table_files({file}, flag);
}

struct Labels {
  bool regression = false;
  std::vector<std::string> names;  // label_list: id -> name (empty for a regression)
  bool from_class_label = false;   // the label column holds ClassLabel ids (GLUE), not values to map
};

Labels label_list(const GlueArguments& a, const data::DatasetTable& train) {
  Labels l;
  const auto& task = a.data.task_name;
  if (!task.empty()) {
    l.regression = task == "stsb";
    if (!l.regression) {
      l.names = train.class_names("label");
      if (l.names.empty()) fail(train.source, ": the label column has no ClassLabel names in its features");
      l.from_class_label = true;
    }
    return l;
  }
  // run_glue: float labels mean a regression, else label_list = sorted(unique(train labels)).
  l.regression = is_float_column(train, "label");
  if (l.regression) return l;
  const auto& col = train.column("label");
  bool ints = true;
  for (const auto& v : col) ints = ints && v.kind == parquet::Value::Kind::Int;
  if (ints) {
    std::vector<int64_t> v;
    for (const auto& c : col) v.push_back(c.i);
    for (int64_t x : sorted_label_list(v)) l.names.push_back(std::to_string(x));
  } else {
    std::vector<std::string> v;
    for (int64_t r = 0; r < train.num_rows(); ++r) v.push_back(label_key(train, "label", r));
    l.names = sorted_label_list(v);
  }
  return l;
}

// run_glue's label_to_id: the checkpoint's label2id order when a GLUE task's names match it (case-folded),
// with HF's warning when they do not; label_list order otherwise. Returns the id each label_list entry
// trains as, and sets the config's id2label/label2id.
std::vector<int64_t> label_ids(const GlueArguments& a, const Labels& l, model::ModelConfig& config) {
  std::vector<int64_t> ids(l.names.size());
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int64_t>(i);
  if (l.regression) return ids;
  const auto ckpt = train::checkpoint_label2id(config);
  if (!ckpt.empty() && !a.data.task_name.empty()) {
    std::map<std::string, int64_t> by_name;
    for (const auto& [k, v] : ckpt) {
      std::string low = k;
      for (char& c : low) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      by_name[low] = v;
    }
    std::vector<std::string> want = l.names, have;
    for (const auto& [k, v] : by_name) have.push_back(k);
    std::sort(want.begin(), want.end());
    if (want == have) {
      // The checkpoint's own names stay in its config (HF writes the int ids there, a quirk not copied).
      for (size_t i = 0; i < ids.size(); ++i) ids[i] = by_name[l.names[i]];
      return ids;
    }
    std::string model_labels, dataset_labels;
    for (const auto& h : have) model_labels += (model_labels.empty() ? "" : ", ") + h;
    for (const auto& w : want) dataset_labels += (dataset_labels.empty() ? "" : ", ") + w;
    log::warn(
        "Your model seems to have been trained with labels, but they don't match the dataset: model "
        "labels: [",
        model_labels, "], dataset labels: [", dataset_labels, "].\nIgnoring the model labels as a result.");
  }
  train::set_label_names(config, l.names);
  return ids;
}

std::unique_ptr<PreparedSequences> prepare(const FeatureCache& cache, data::DatasetTable table,
                                           int64_t max_samples, const TextColumns& cols, const Labels& l,
                                           const std::vector<int64_t>& ids, text::HfTokenizer& tok,
                                           const SequenceClassificationOptions& o, bool with_labels) {
  table.keep_first(max_samples);  // HF selects after map; the first n examples either way
  const auto first = text_column(table, cols.first);
  std::vector<std::string> second;
  if (cols.second) second = text_column(table, *cols.second);
  std::vector<TextPair> texts(first.size());
  for (size_t i = 0; i < first.size(); ++i) {
    texts[i].first = first[i];
    if (cols.second) texts[i].second = second[i];
  }
  std::vector<int64_t> labels;
  std::vector<float> float_labels;
  if (with_labels && table.has_column("label")) {
    std::map<std::string, int64_t> by_key;
    for (size_t i = 0; i < l.names.size(); ++i) by_key[l.names[i]] = ids[i];
    for (int64_t r = 0; r < table.num_rows(); ++r) {
      if (l.regression) {
        float_labels.push_back(static_cast<float>(label_number(table, "label", r)));
      } else if (l.from_class_label) {
        const auto& v = table.column("label")[static_cast<size_t>(r)];
        if (v.kind != parquet::Value::Kind::Int)
          fail(table.source, ": column \"label\" row ", r, ": expected a ClassLabel id");
        // GLUE's test splits label every example -1 (unlabelled).
        if (v.i < -1 || v.i >= static_cast<int64_t>(ids.size()))
          fail(table.source, ": column \"label\" row ", r, ": ", v.i, " is not a class id of ", ids.size());
        labels.push_back(v.i < 0 ? -1 : ids[static_cast<size_t>(v.i)]);
      } else {
        const std::string k = label_key(table, "label", r);
        const auto it = by_key.find(k);
        if (it == by_key.end())
          fail(table.source, ": column \"label\" row ", r, ": label '", k,
               "' is not among the training labels (", l.names.size(), " of them)");
        labels.push_back(it->second);
      }
    }
  }
  return prepare_sequences(split_cache(&cache, table), texts, std::move(labels), std::move(float_labels), tok,
                           o);
}

}  // namespace

train::RunResult run_glue(GlueArguments args, const std::vector<std::string>& argv,
                          const train::DistContext& dist) {
  auto& t = args.training;
  auto& d = args.data;
  const std::string resume = train::begin_task_run(t, argv, dist, args.notes);

  // Data first, as run_glue: the labels size the head.
  const Source src = data_source(args);
  const bool mnli = d.task_name == "mnli";
  const data::DatasetTable train_table = read_split(src, "train", "--train_file", src.train_file, dist);
  const TextColumns cols =
      d.task_name.empty() ? local_text_columns(train_table.table.names) : glue_task_columns(d.task_name);
  const Labels labels = label_list(args, train_table);
  const int64_t num_labels = labels.regression ? 1 : static_cast<int64_t>(labels.names.size());
  if (!labels.regression && num_labels < 2)
    fail(train_table.source, ": the label column holds ", num_labels,
         " distinct value(s); classification needs 2 or more");

  train::ModelArguments local = train::localize_model_sources(args.model, dist);
  model::ModelConfig config = train::load_task_config(local, num_labels);
  if (!d.task_name.empty()) config.extra["finetuning_task"] = d.task_name;
  if (labels.regression) config.problem_type = "regression";
  text::HfTokenizer tok = train::load_task_tokenizer(local, config);
  const std::vector<int64_t> ids = label_ids(args, labels, config);
  auto model = train::build_shared_model(local, config, t, model::HeadKind::sequence_classification,
                                         args.model_extra.ignore_mismatched_sizes, dist);

  SequenceClassificationOptions o;
  o.max_seq_length = train::fit_max_seq_length("--max_seq_length", d.max_seq_length, tok, config);
  o.pad_to_max_length = d.pad_to_max_length;
  o.pad_token_id = tok.pad_token_id();
  o.num_labels = num_labels;
  o.kind = labels.regression ? LabelKind::regression : LabelKind::single_label;
  o.task_name = d.task_name;
  o.label_list = labels.names;

  const FeatureCache cache = make_feature_cache(tok, args.model.cache_dir, d.overwrite_cache, dist);
  std::unique_ptr<PreparedSequences> train_p;
  if (t.do_train) train_p = prepare(cache, train_table, d.max_train_samples, cols, labels, ids, tok, o, true);
  // (split name on the Hub, the task name its metrics and files carry)
  std::vector<std::pair<std::string, std::string>> eval_sets, predict_sets;
  if (mnli) {
    eval_sets = {{"validation_matched", "mnli"}, {"validation_mismatched", "mnli-mm"}};
    predict_sets = {{"test_matched", "mnli"}, {"test_mismatched", "mnli-mm"}};
  } else {
    eval_sets = {{"validation", d.task_name}};
    predict_sets = {{"test", d.task_name}};
  }
  std::vector<std::unique_ptr<PreparedSequences>> evals, predicts;
  if (t.do_eval)
    for (const auto& [split, task] : eval_sets)
      evals.push_back(prepare(cache, read_split(src, split, "--validation_file", src.validation_file, dist),
                              d.max_eval_samples, cols, labels, ids, tok, o, true));
  if (t.do_predict) {
    if (!src.hub && src.test_file.empty())
      fail("--do_predict: need either a GLUE task or a test file (--test_file)");
    for (const auto& [split, task] : predict_sets) {
      SequenceClassificationOptions po = o;
      po.predict_file_name = glue_predict_file_name(task);
      // run_glue removes the label column before predicting.
      predicts.push_back(prepare(cache, read_split(src, split, "--test_file", src.test_file, dist),
                                 d.max_predict_samples, cols, labels, ids, tok, po, false));
    }
  }

  train::TaskRunner runner(
      t, *model, [&tok](const std::string& dir) { tok.save(dir); }, dist);
  runner.dump_eval_features(args.dump_eval_features, evals.empty() ? nullptr : evals[0]->split.get());
  runner.dump_train_features(args.dump_train_features, train_p ? train_p->split.get() : nullptr);
  train::RunResult result;
  result.world = dist.world;
  if (t.do_train) {
    result.train_metrics = runner.train(*train_p->split, evals.empty() ? nullptr : evals[0]->split.get(),
                                        resume, train_p->examples);
    result.comm_exposed_seconds = runner.comm_exposed_seconds();
  }
  if (t.do_eval) {
    log::info("*** Evaluate ***");
    nlohmann::json combined = nlohmann::json::object();
    for (size_t i = 0; i < evals.size(); ++i) {
      auto m = runner.evaluate(*evals[i]->split, evals[i]->examples);
      if (eval_sets[i].second == "mnli-mm") {
        nlohmann::json renamed = nlohmann::json::object();
        for (const auto& [k, v] : m.items()) renamed[k + "_mm"] = v;
        m = renamed;
      }
      for (const auto& [k, v] : m.items()) combined[k] = v;
      runner.report("eval", m, mnli ? combined : m);
      if (i == 0) result.eval_metrics = m;
    }
  }
  if (t.do_predict) {
    log::info("*** Predict ***");
    // run_glue writes predict_results_{task}.txt and reports no predict metrics.
    for (auto& p : predicts) runner.predict(*p->split);
  }
  train::ModelCardInfo card;
  card.finetuned_from = args.model.model_name_or_path;
  card.tasks = "text-classification";
  if (!d.task_name.empty()) {
    card.language = "en";
    card.dataset_tag = "glue";
    card.dataset_arg = d.task_name;
    std::string upper = d.task_name;
    for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    card.dataset = "GLUE " + upper;
  }
  runner.write_model_card(card);
  return result;
}

}  // namespace ct::tasks
