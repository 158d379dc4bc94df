// run_swag.py's main() over the shared pieces: only SWAG's columns, its max_seq_length rule and its card
// differ from the other commands' drivers.
#include "tasks/multiple_choice/run_swag.h"

#include <memory>
#include <optional>

#include "core/error.h"
#include "core/log.h"
#include "data/dataset_table.h"
#include "tasks/multiple_choice/multiple_choice_features.h"
#include "tasks/multiple_choice/multiple_choice_split.h"
#include "tasks/table_cells.h"
#include "train/dataset_split.h"
#include "train/encoder_loader.h"
#include "train/model_source.h"
#include "train/run_setup.h"

namespace ct::tasks {
namespace {

// run_swag's fixed names ("When using your own dataset ... you will probably need to change this").
constexpr const char* kContext = "sent1";
constexpr const char* kHeader = "sent2";
constexpr const char* kLabel = "label";
// transformers' VERY_LARGE_INTEGER (int(1e30)) as HF prints it, for a tokenizer without model_max_length.
constexpr const char* kVeryLargeInteger = "1000000000000000019884624838656";

struct Source {
  bool hub = false;
  data::DatasetRequest request;
  std::string train_file, validation_file;
};

Source data_source(const SwagArguments& a) {
  Source s;
  const auto& d = a.data;
  if (!d.train_file.empty() || !d.validation_file.empty()) {
    s.train_file = d.train_file;
    s.validation_file = d.validation_file;
  } else {
    s.hub = true;
    s.request = train::dataset_request("swag", "regular", a.model);  // data/dataset_aliases.cpp: allenai/swag
  }
  return s;
}

// `need` is HF's error when the split is missing ("--do_train requires a train dataset").
data::DatasetTable read_split(const Source& s, const std::string& hub_split, const std::string& flag,
                              const std::string& file, const std::string& need,
                              const train::DistContext& dist) {
  // run_swag has no --dataset_name: its logs and errors say "dataset swag".
  if (s.hub) return train::read_dataset_split(s.request, hub_split, dist, {}, "dataset");
  if (file.empty()) fail(need, " (", flag, ")");
  return data::read_table_files({file}, flag);
}

// The right ending's index. Checked here rather than in build_multiple_choice_features so the error names
// the file, the column and the row.
int64_t ending_index(const data::DatasetTable& t, int64_t row) {
  const auto& v = t.column(kLabel)[static_cast<size_t>(row)];
  if (v.kind != parquet::Value::Kind::Int) {
    // (str, not operator+: GCC 12's -Wrestrict misfires on "'" + std::string.)
    const std::string got = v.kind == parquet::Value::Kind::Null ? std::string("an empty cell")
                                                                 : str("'", label_key(t, kLabel, row), "'");
    fail(t.source, ": column \"", kLabel, "\" row ", row, ": expected the right ending's index 0..",
         kSwagNumChoices - 1, ", got ", got);
  }
  if (v.i < 0 || v.i >= kSwagNumChoices)
    fail(t.source, ": column \"", kLabel, "\" row ", row, ": label ", v.i,
         " is not an ending index (expected 0..", kSwagNumChoices - 1, ": ending0..ending",
         kSwagNumChoices - 1, ")");
  return v.i;
}

std::vector<MultipleChoiceExample> swag_examples(const data::DatasetTable& t) {
  // Every column first, so a table that lacks one fails before any cell is read.
  for (const char* c : {kContext, kHeader, kLabel}) (void)t.column(c);
  for (int64_t c = 0; c < kSwagNumChoices; ++c) (void)t.column("ending" + std::to_string(c));
  const auto context = text_column(t, kContext);
  const auto header = text_column(t, kHeader);
  std::vector<std::vector<std::string>> endings;
  for (int64_t c = 0; c < kSwagNumChoices; ++c)
    endings.push_back(text_column(t, "ending" + std::to_string(c)));
  std::vector<MultipleChoiceExample> out(static_cast<size_t>(t.num_rows()));
  for (int64_t r = 0; r < t.num_rows(); ++r) {
    auto& e = out[static_cast<size_t>(r)];
    e.context = context[static_cast<size_t>(r)];
    e.header = header[static_cast<size_t>(r)];
    for (const auto& col : endings) e.endings.push_back(col[static_cast<size_t>(r)]);
    e.label = ending_index(t, r);
  }
  return out;
}

// One split ready for the Trainer: its features, kept alive beside the split that refers to them.
struct Prepared {
  MultipleChoiceFeatures features;
  std::unique_ptr<MultipleChoiceSplit> split;
  int64_t examples = 0;
};

std::unique_ptr<Prepared> prepare(const FeatureCache& cache, data::DatasetTable table, int64_t max_samples,
                                  text::HfTokenizer& tok, const MultipleChoiceOptions& o) {
  table.keep_first(max_samples);  // run_swag selects before map
  auto p = std::make_unique<Prepared>();
  p->features = cached_multiple_choice_features(split_cache(&cache, table), tok, swag_examples(table),
                                                o.max_seq_length);
  p->examples = table.num_rows();
  p->split = std::make_unique<MultipleChoiceSplit>(p->features, o);
  return p;
}

}  // namespace

int64_t swag_max_seq_length(int64_t requested, int64_t model_max_length, std::string* warning) {
  if (warning) warning->clear();
  if (requested <= 0) {
    if (model_max_length > 0 && model_max_length <= 1024) return model_max_length;
    if (warning)
      *warning =
          str("The tokenizer picked seems to have a very large `model_max_length` (",
              model_max_length > 0 ? std::to_string(model_max_length) : std::string(kVeryLargeInteger),
              "). Picking 1024 instead. You can change that default value by passing --max_seq_length xxx.");
    return 1024;
  }
  if (model_max_length > 0 && requested > model_max_length) {
    if (warning)
      *warning =
          str("The max_seq_length passed (", requested, ") is larger than the maximum length for the model (",
              model_max_length, "). Using max_seq_length=", model_max_length, ".");
    return model_max_length;
  }
  return requested;
}

train::RunResult run_swag(SwagArguments args, const std::vector<std::string>& argv,
                          const train::DistContext& dist) {
  auto& t = args.training;
  auto& d = args.data;
  const std::string resume = train::begin_task_run(t, argv, dist, args.notes);

  // Data first, as run_swag loads it before the model: a bad file fails before any weights are read.
  const Source src = data_source(args);
  std::optional<data::DatasetTable> train_table, eval_table;
  if (t.do_train)
    train_table =
        read_split(src, "train", "--train_file", src.train_file, "--do_train requires a train dataset", dist);
  if (t.do_eval)
    eval_table = read_split(src, "validation", "--validation_file", src.validation_file,
                            "--do_eval requires a validation dataset", dist);

  train::ModelArguments local = train::localize_model_sources(args.model, dist);
  model::ModelConfig config = train::load_task_config(local);
  text::HfTokenizer tok = train::load_task_tokenizer(local, config);
  auto model = train::build_shared_model(local, config, t, model::HeadKind::multiple_choice,
                                         /*ignore_mismatched_sizes=*/false, dist);

  std::string warning;
  int64_t max_len = swag_max_seq_length(d.max_seq_length, tok.model_max_length(), &warning);
  if (!warning.empty()) log::warn(warning);
  const int64_t first_pos =
      config.positions == model::PositionScheme::after_padding_idx ? config.pad_token_id + 1 : 0;
  if (d.max_seq_length <= 0 && max_len + first_pos > config.max_position_embeddings) {
    // HF would truncate at 1024 and fail with an index error on the first row longer than the model's
    // positions; the default stops at the positions instead (an explicit flag still fails at once).
    max_len = config.max_position_embeddings - first_pos;
    log::info("max_seq_length ", max_len, ": the model's positions (max_position_embeddings ",
              config.max_position_embeddings, ")");
  }
  MultipleChoiceOptions o;
  o.max_seq_length = train::fit_max_seq_length("--max_seq_length", max_len, tok, config);
  o.pad_to_max_length = d.pad_to_max_length;
  o.pad_token_id = tok.pad_token_id();

  const FeatureCache cache = make_feature_cache(tok, args.model.cache_dir, d.overwrite_cache, dist);
  std::unique_ptr<Prepared> train_p, eval_p;
  if (t.do_train) train_p = prepare(cache, std::move(*train_table), d.max_train_samples, tok, o);
  if (t.do_eval) eval_p = prepare(cache, std::move(*eval_table), d.max_eval_samples, tok, o);

  train::TaskRunner runner(
      t, *model, [&tok](const std::string& dir) { tok.save(dir); }, dist);
  runner.dump_eval_features(args.dump_eval_features, eval_p ? eval_p->split.get() : nullptr);
  runner.dump_train_features(args.dump_train_features, train_p ? train_p->split.get() : nullptr);
  train::RunResult result = runner.train_and_evaluate(
      train_p ? train_p->split.get() : nullptr, train_p ? train_p->examples : 0,
      eval_p ? eval_p->split.get() : nullptr, eval_p ? eval_p->examples : 0, resume);
  // run_swag passes these whatever the data was.
  train::ModelCardInfo card;
  card.finetuned_from = args.model.model_name_or_path;
  card.tasks = "multiple-choice";
  card.dataset_tag = "swag";
  card.dataset_arg = "regular";
  card.dataset = "SWAG";
  card.language = "en";
  runner.write_model_card(card);
  return result;
}

}  // namespace ct::tasks
