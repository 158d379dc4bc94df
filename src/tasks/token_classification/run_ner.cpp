#include "tasks/token_classification/run_ner.h"

#include <algorithm>
#include <map>
#include <set>

#include "core/error.h"
#include "core/log.h"
#include "data/dataset_table.h"
#include "tasks/table_cells.h"
#include "tasks/token_classification/ner_labels.h"
#include "tasks/token_classification/token_classification_split.h"
#include "tasks/token_classification/token_features.h"
#include "train/dataset_split.h"
#include "train/encoder_loader.h"
#include "train/model_source.h"
#include "train/run_setup.h"

namespace ct::tasks {
namespace {

struct Source {
  bool hub = false;
  data::DatasetRequest request;
};

data::DatasetTable read_split(const Source& s, const std::string& split, const std::string& flag,
                              const std::string& file, const train::DistContext& dist) {
  if (s.hub) return train::read_dataset_split(s.request, split, dist);
  if (file.empty()) fail(flag, ": required for this run (no --dataset_name)");
  return data::read_table_files({file}, flag);
}

// A tag cell as run_ner reads it: a ClassLabel id, or the tag itself.
std::vector<std::vector<std::string>> tag_keys(const data::DatasetTable& t, const std::string& column) {
  const auto& col = t.column(column);
  std::vector<std::vector<std::string>> out(col.size());
  for (size_t r = 0; r < col.size(); ++r) {
    if (col[r].kind != parquet::Value::Kind::List)
      fail(t.source, ": column \"", column, "\" row ", r, ": expected a list of tags, one per word");
    for (const auto& v : col[r].items) {
      if (v.kind == parquet::Value::Kind::String)
        out[r].push_back(v.s);
      else if (v.kind == parquet::Value::Kind::Int)
        out[r].push_back(std::to_string(v.i));
      else
        fail(t.source, ": column \"", column, "\" row ", r, ": a tag is neither a string nor a class id");
    }
  }
  return out;
}

struct Labels {
  std::vector<std::string> list;         // id -> tag
  std::map<std::string, int64_t> to_id;  // a cell's key -> the id it trains as
};

struct Prepared {
  TokenFeatures features;
  std::unique_ptr<TokenClassificationSplit> split;
  int64_t examples = 0;
};

}  // namespace

train::RunResult run_ner(NerArguments args, const std::vector<std::string>& argv,
                         const train::DistContext& dist) {
  auto& t = args.training;
  auto& d = args.data;
  const std::string resume = train::begin_task_run(t, argv, dist, args.notes);

  Source src;
  if (!d.dataset_name.empty()) {
    src.hub = true;
    src.request = train::dataset_request(d.dataset_name, d.dataset_config_name, args.model);
  }
  // run_ner reads its columns and features from the train split when training, else the validation split.
  const bool from_train = t.do_train;
  data::DatasetTable first =
      from_train ? read_split(src, "train", "--train_file", d.train_file, dist)
                 : read_split(src, "validation", "--validation_file", d.validation_file, dist);
  const auto& names = first.table.names;
  auto has = [&](const std::string& c) { return std::find(names.begin(), names.end(), c) != names.end(); };
  std::string text_col = d.text_column_name, label_col = d.label_column_name;
  if (text_col.empty()) {
    if (names.empty()) fail(first.source, ": no columns");
    text_col = has("tokens") ? "tokens" : names[0];
  }
  if (label_col.empty()) {
    if (names.size() < 2 && !has(d.task_name + "_tags"))
      fail(first.source, ": no label column (--label_column_name)");
    label_col = has(d.task_name + "_tags") ? d.task_name + "_tags" : names[1];
  }

  Labels labels;
  const std::vector<std::string> class_names = first.class_names(label_col);
  const bool labels_are_int = !class_names.empty();
  if (labels_are_int) {
    labels.list = class_names;
    for (size_t i = 0; i < class_names.size(); ++i) labels.to_id[std::to_string(i)] = static_cast<int64_t>(i);
  } else {
    // get_label_list: every distinct tag of the train split, sorted.
    const data::DatasetTable& train_for_labels = first;
    std::set<std::string> unique;
    for (const auto& row : tag_keys(train_for_labels, label_col)) unique.insert(row.begin(), row.end());
    labels.list.assign(unique.begin(), unique.end());
    for (size_t i = 0; i < labels.list.size(); ++i) labels.to_id[labels.list[i]] = static_cast<int64_t>(i);
  }
  const auto num_labels = static_cast<int64_t>(labels.list.size());
  if (num_labels < 1) fail(first.source, ": column \"", label_col, "\" holds no tags");

  train::ModelArguments local = train::localize_model_sources(args.model, dist);
  model::ModelConfig config = train::load_task_config(local, num_labels);
  config.extra["finetuning_task"] = d.task_name;
  const nlohmann::json overrides = split_words_overrides(config.model_type);
  text::HfTokenizer tok = train::load_task_tokenizer(local, config, &overrides);

  // The checkpoint's label order when its names are this data's.
  if (const auto ckpt = train::checkpoint_label2id(config); !ckpt.empty()) {
    std::vector<std::string> have, want = labels.list;
    std::map<std::string, int64_t> by_name;
    for (const auto& [k, v] : ckpt) {
      have.push_back(k);
      by_name[k] = v;
    }
    std::sort(have.begin(), have.end());
    std::sort(want.begin(), want.end());
    if (have == want) {
      std::vector<std::string> ordered(labels.list.size());
      for (auto& [key, id] : labels.to_id) {
        const std::string& tag = labels_are_int ? labels.list[static_cast<size_t>(id)] : key;
        id = by_name[tag];
      }
      for (const auto& [k, v] : ckpt)
        if (v >= 0 && v < num_labels) ordered[static_cast<size_t>(v)] = k;
      labels.list = ordered;
    } else {
      log::warn(
          "Your model seems to have been trained with labels, but they don't match the dataset: model "
          "labels: ",
          have.size(), ", dataset labels: ", want.size(), ". Ignoring the model labels as a result.");
    }
  }
  train::set_label_names(config, labels.list);
  const std::vector<int64_t> b_to_i = b_to_i_labels(labels.list);

  auto model = train::build_shared_model(local, config, t, model::HeadKind::token_classification,
                                         args.model_extra.ignore_mismatched_sizes, dist);

  TokenClassificationOptions o;
  int64_t max_len = d.max_seq_length;
  if (max_len <= 0) {  // None: truncation at the tokenizer's model_max_length (else the model's positions)
    const int64_t first_pos =
        config.positions == model::PositionScheme::after_padding_idx ? config.pad_token_id + 1 : 0;
    max_len =
        tok.model_max_length() > 0 ? tok.model_max_length() : config.max_position_embeddings - first_pos;
  }
  o.max_seq_length = train::fit_max_seq_length("--max_seq_length", max_len, tok, config);
  o.pad_to_max_length = d.pad_to_max_length;
  o.pad_token_id = tok.pad_token_id();
  o.label_list = labels.list;
  o.return_entity_level_metrics = d.return_entity_level_metrics;

  const FeatureCache cache = make_feature_cache(tok, args.model.cache_dir, d.overwrite_cache, dist);
  auto prepare = [&](data::DatasetTable table, int64_t max_samples) {
    table.keep_first(max_samples);
    auto p = std::make_unique<Prepared>();
    const auto words = text_list_column(table, text_col);
    std::vector<std::vector<int64_t>> word_labels;
    if (table.has_column(label_col)) {
      const auto keys = tag_keys(table, label_col);
      word_labels.resize(keys.size());
      for (size_t r = 0; r < keys.size(); ++r) {
        if (keys[r].size() != words[r].size())
          fail(table.source, ": row ", r, " has ", words[r].size(), " words in \"", text_col, "\" but ",
               keys[r].size(), " tags in \"", label_col, "\"");
        for (const auto& k : keys[r]) {
          const auto it = labels.to_id.find(k);
          if (it == labels.to_id.end())
            fail(table.source, ": row ", r, ": tag '", k, "' is not among the training labels");
          word_labels[r].push_back(it->second);
        }
      }
    }
    p->features = cached_token_features(split_cache(&cache, table), tok, words, word_labels, o.max_seq_length,
                                        d.label_all_tokens, b_to_i);
    p->examples = table.num_rows();
    p->split = std::make_unique<TokenClassificationSplit>(p->features, o);
    return p;
  };
  std::unique_ptr<Prepared> train_p, eval_p, predict_p;
  if (t.do_train) train_p = prepare(std::move(first), d.max_train_samples);
  if (t.do_eval)
    eval_p = prepare(from_train ? read_split(src, "validation", "--validation_file", d.validation_file, dist)
                                : std::move(first),
                     d.max_eval_samples);
  if (t.do_predict)
    predict_p = prepare(read_split(src, "test", "--test_file", d.test_file, dist), d.max_predict_samples);

  train::TaskRunner runner(
      t, *model, [&tok](const std::string& dir) { tok.save(dir); }, dist);
  runner.dump_eval_features(args.dump_eval_features, eval_p ? eval_p->split.get() : nullptr);
  runner.dump_train_features(args.dump_train_features, train_p ? train_p->split.get() : nullptr);
  train::RunResult result = runner.train_and_evaluate(
      train_p ? train_p->split.get() : nullptr, train_p ? train_p->examples : 0,
      eval_p ? eval_p->split.get() : nullptr, eval_p ? eval_p->examples : 0, resume);
  if (t.do_predict) {
    log::info("*** Predict ***");
    runner.report("predict", runner.predict(*predict_p->split));
  }
  runner.write_model_card(train::dataset_card_info(args.model.model_name_or_path, "token-classification",
                                                   d.dataset_name, d.dataset_config_name));
  return result;
}

}  // namespace ct::tasks
