#include "tasks/question_answering/qa_demo.h"

#include <filesystem>

#include "core/error.h"
#include "core/fs.h"
#include "core/log.h"
#include "tasks/question_answering/squad_demo_data.h"
#include "tasks/task_demo.h"
#include "text/tokenizer.h"

namespace ct::tasks {

namespace {
constexpr int64_t kDemoTrainParagraphs = 4000;
constexpr int64_t kDemoEvalParagraphs = 200;
}  // namespace

void apply_demo_defaults(QaArguments& a) {
  auto& t = a.training;
  auto& d = a.data;
  t.output_dir = "demo-out";
  t.do_train = true;
  t.do_eval = true;
  // Measured (README "Demo"): the loss sits near 1.4 while the model learns which relation the question asks
  // for, then falls; batch 32 at lr 2e-3 gets past it in ~500 of its 1,250 steps.
  t.per_device_train_batch_size = 32;
  t.per_device_eval_batch_size = 64;
  t.learning_rate = 2e-3;
  t.num_train_epochs = 5;
  t.warmup_ratio = 0.03;
  t.weight_decay = 0.01;
  t.logging_steps = 100;
  t.save_strategy = "no";
  d.max_seq_length = 192;
  d.doc_stride = 64;
  d.pad_to_max_length = false;
}

void prepare_demo(QaArguments& a, bool write_files) {
  namespace stdfs = std::filesystem;
  DemoOptions o;
  o.seed = static_cast<uint64_t>(a.training.seed);
  o.train_paragraphs =
      a.coretrain.demo_train_paragraphs > 0 ? a.coretrain.demo_train_paragraphs : kDemoTrainParagraphs;
  o.eval_paragraphs =
      a.coretrain.demo_eval_paragraphs > 0 ? a.coretrain.demo_eval_paragraphs : kDemoEvalParagraphs;
  if (a.coretrain.demo_min_people > 0) o.min_people = a.coretrain.demo_min_people;
  if (a.coretrain.demo_max_people > 0) o.max_people = a.coretrain.demo_max_people;
  if (o.max_people < o.min_people) o.max_people = o.min_people;
  const std::string dir = a.training.output_dir + "/demo_data";
  if (a.data.train_file.empty()) a.data.train_file = dir + "/train.json";
  if (a.data.validation_file.empty()) a.data.validation_file = dir + "/dev.json";
  if (a.model.config_name.empty() && a.model.model_name_or_path.empty()) a.model.config_name = dir;
  if (a.model.tokenizer_name.empty() && a.model.model_name_or_path.empty()) a.model.tokenizer_name = dir;
  if (!write_files) return;
  auto demo = generate_demo_data(o);
  std::error_code ec;
  stdfs::create_directories(dir, ec);
  if (ec) fail("--output_dir: cannot create ", dir, " (", ec.message(), ")");
  write_squad_json(demo.train, dir + "/train.json");
  write_squad_json(demo.eval, dir + "/dev.json");
  // Vocab from the training split only: held-out words the model never saw map to [UNK] as in real use.
  auto vocab = build_demo_vocab(demo.train);
  auto tok = text::Tokenizer::from_vocab(vocab);
  tok.save(dir);
  fs::write_file_atomic(dir + "/config.json", model::config_to_json(demo_model_config(tok.vocab_size())));
  log::info("demo: ", demo.train.size(), " training and ", demo.eval.size(), " held-out questions (",
            o.train_paragraphs, " / ", o.eval_paragraphs, " paragraphs), vocab ", tok.vocab_size(),
            " words, in ", dir);
}

}  // namespace ct::tasks
