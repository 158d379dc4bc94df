#include "tasks/question_answering/qa_args.h"

#include <filesystem>
#include <utility>

#include "core/error.h"
#include "tasks/question_answering/qa_demo.h"
#include "tasks/question_answering/squad_dataset.h"
#include "train/arg_parser.h"

namespace ct::tasks {
namespace {

void add_qa_data_args(train::ArgParser& p, QaDataArguments& d) {
  // DataTrainingArguments
  p.add("dataset_name", &d.dataset_name,
        "squad | squad_v2 | rajpurkar/squad | rajpurkar/squad_v2 (official SQuAD JSON, cached; "
        "docs/datasets.md)");
  p.add("dataset_config_name", &d.dataset_config_name, "plain_text for squad, squad_v2 for squad_v2");
  p.add("train_file", &d.train_file,
        "SQuAD-format JSON (nested, flat {\"data\":[...]}, or JSON lines) or CSV");
  p.add("validation_file", &d.validation_file, "SQuAD-format JSON or CSV for evaluation");
  p.add("test_file", &d.test_file, "SQuAD-format JSON or CSV for --do_predict (answers optional)");
  p.add("overwrite_cache", &d.overwrite_cache, "rebuild the cached features");
  p.add("preprocessing_num_workers", &d.preprocessing_num_workers, "accepted for compatibility");
  p.add("max_seq_length", &d.max_seq_length, "tokens per feature (question + context window)");
  p.add("pad_to_max_length", &d.pad_to_max_length, "pad every feature to max_seq_length");
  p.add("max_train_samples", &d.max_train_samples, "truncate the training examples and features");
  p.add("max_eval_samples", &d.max_eval_samples, "truncate the evaluation examples and features");
  p.add("max_predict_samples", &d.max_predict_samples, "truncate the prediction examples and features");
  p.add("version_2_with_negative", &d.version_2_with_negative, "SQuAD v2: some questions have no answer");
  p.add("null_score_diff_threshold", &d.null_score_diff_threshold,
        "v2: predict \"\" when null - best > this");
  p.add("doc_stride", &d.doc_stride, "overlap in tokens between context windows");
  p.add("n_best_size", &d.n_best_size, "candidates per start/end and kept per example");
  p.add("max_answer_length", &d.max_answer_length, "longest answer in tokens");
}

void add_qa_coretrain_args(train::ArgParser& p, QaCoretrainArguments& c) {
  // coretrain's own
  p.add("demo", &c.demo, "coretrain: built-in demo (generated data, small BERT from random init)");
  p.add("demo_train_paragraphs", &c.demo_train_paragraphs,
        "coretrain: demo training paragraphs (0: default)");
  p.add("demo_eval_paragraphs", &c.demo_eval_paragraphs, "coretrain: demo held-out paragraphs (0: default)");
  p.add("demo_min_people", &c.demo_min_people, "coretrain: fewest people per demo paragraph (0: default)");
  p.add("demo_max_people", &c.demo_max_people, "coretrain: most people per demo paragraph (0: default)");
  p.add("dump_eval_features", &c.dump_eval_features, "coretrain debug: write eval features' inputs to FILE");
}

train::ArgParser qa_parser(QaArguments& a) {
  train::ArgParser p("qa");
  train::add_model_args(p, a.model);
  add_qa_data_args(p, a.data);
  train::add_training_args(p, a.training);
  add_qa_coretrain_args(p, a.coretrain);
  return p;
}

void check(bool ok, const std::string& flag, const std::string& what) {
  if (!ok) fail("--", flag, ": ", what);
}

void validate(QaArguments& a) {
  auto& d = a.data;
  auto& t = a.training;
  auto& m = a.model;
  auto& c = a.coretrain;
  if (t.output_dir.empty() && !c.demo) fail("--output_dir: required");
  if (t.output_dir.empty()) t.output_dir = "demo-out";
  if (!c.demo) {
    if (m.model_name_or_path.empty() && m.config_name.empty())
      fail("--model_name_or_path: required (or --config_name for a model from random init)");
    // SQuAD's own names (and every name while CORETRAIN_SQUAD_URL selects the JSON files) are checked here;
    // other Hub ids and dataset folders when they are resolved, before any training.
    const bool other_hub_dataset =
        !d.dataset_name.empty() && !squad_json_source() && !is_squad_name(d.dataset_name) &&
        (d.dataset_name.find('/') != std::string::npos || std::filesystem::is_directory(d.dataset_name));
    if (other_hub_dataset) {
      for (auto [flag, v] :
           {std::pair{"--train_file", &d.train_file}, std::pair{"--validation_file", &d.validation_file}})
        if (!v->empty())
          a.notes.push_back(ct::str(flag, " ", *v, " ignored: --dataset_name wins (as in run_qa)"));
      if (t.do_predict && d.test_file.empty())
        fail("--do_predict requires --test_file (with --dataset_name too)");
    } else if (!d.dataset_name.empty()) {
      const auto ds = resolve_squad_dataset(d.dataset_name, d.dataset_config_name);
      for (auto [flag, v] :
           {std::pair{"--train_file", &d.train_file}, std::pair{"--validation_file", &d.validation_file}})
        if (!v->empty())
          a.notes.push_back(ct::str(flag, " ", *v, " ignored: --dataset_name wins (as in run_qa)"));
      if (t.do_predict && d.test_file.empty())
        fail("--do_predict requires a test dataset: ", ds.name,
             " has train and validation only; give --test_file");
      if (ds.v2 && !d.version_2_with_negative)
        a.notes.push_back("--dataset_name " + d.dataset_name +
                          " has unanswerable questions: run_qa users pass --version_2_with_negative with it");
    } else {
      if (t.do_train && d.train_file.empty()) fail("--train_file: required with --do_train");
      if (t.do_eval && d.validation_file.empty()) fail("--validation_file: required with --do_eval");
      if (t.do_predict && d.test_file.empty()) fail("--test_file: required with --do_predict");
    }
  }
  check(d.max_seq_length > 0, "max_seq_length", ct::str("must be > 0, got ", d.max_seq_length));
  check(d.doc_stride >= 0, "doc_stride", ct::str("must be >= 0, got ", d.doc_stride));
  check(d.doc_stride < d.max_seq_length, "doc_stride",
        ct::str("must be < --max_seq_length (", d.max_seq_length, "), got ", d.doc_stride));
  check(d.n_best_size > 0, "n_best_size", ct::str("must be > 0, got ", d.n_best_size));
  check(d.max_answer_length > 0, "max_answer_length", ct::str("must be > 0, got ", d.max_answer_length));
  for (auto [name, v] : {std::pair{"max_train_samples", d.max_train_samples},
                         std::pair{"max_eval_samples", d.max_eval_samples},
                         std::pair{"max_predict_samples", d.max_predict_samples}})
    check(v == -1 || v > 0, name, ct::str("must be > 0, got ", v));
  train::validate_training_args(t, &a.notes);
  check(c.demo_train_paragraphs >= 0, "demo_train_paragraphs", "must be >= 0");
  check(c.demo_eval_paragraphs >= 0, "demo_eval_paragraphs", "must be >= 0");
  check(c.demo_min_people >= 0, "demo_min_people", "must be >= 0");
  check(c.demo_max_people >= 0, "demo_max_people", "must be >= 0");
}

}  // namespace

QaArguments parse_qa_args(const std::vector<std::string>& argv) {
  QaArguments out;
  // The demo's defaults go in first so any flag given still overrides them; a first read (of the command line
  // or of a JSON argv alike) only asks whether --demo is on.
  QaArguments probe;
  if (qa_parser(probe).parse(argv, nullptr) && probe.coretrain.demo) apply_demo_defaults(out);
  const train::ArgParser p = qa_parser(out);
  out.help = !p.parse(argv, &out.notes);
  if (!out.help) validate(out);
  // The demo's batch is a global batch: with N ranks each takes 1/N of it (unless the flag was given).
  if (out.coretrain.demo) out.coretrain.demo_global_batch = !p.given("per_device_train_batch_size");
  return out;
}

std::string qa_args_help() {
  QaArguments defaults;
  return qa_parser(defaults).help(
      "usage: coretrain qa [--flag value ...] | coretrain qa args.json | coretrain qa --demo\n\n"
      "Flags keep the names and defaults of HF run_qa.py and TrainingArguments.\n\n");
}
nlohmann::json qa_args_to_json(const QaArguments& a) {
  nlohmann::json j = train::training_args_to_json(a.training);
  const auto& m = a.model;
  const auto& d = a.data;
  j["model_name_or_path"] = m.model_name_or_path;
  j["config_name"] = m.config_name;
  j["tokenizer_name"] = m.tokenizer_name;
  j["train_file"] = d.train_file;
  j["validation_file"] = d.validation_file;
  j["test_file"] = d.test_file;
  j["max_seq_length"] = d.max_seq_length;
  j["pad_to_max_length"] = d.pad_to_max_length;
  j["max_train_samples"] = d.max_train_samples < 0 ? nlohmann::json() : nlohmann::json(d.max_train_samples);
  j["max_eval_samples"] = d.max_eval_samples < 0 ? nlohmann::json() : nlohmann::json(d.max_eval_samples);
  j["version_2_with_negative"] = d.version_2_with_negative;
  j["null_score_diff_threshold"] = d.null_score_diff_threshold;
  j["doc_stride"] = d.doc_stride;
  j["n_best_size"] = d.n_best_size;
  j["max_answer_length"] = d.max_answer_length;
  return j;
}
}  // namespace ct::tasks
