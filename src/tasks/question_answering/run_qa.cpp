#include "tasks/question_answering/run_qa.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>

#include "core/error.h"
#include "core/fs.h"
#include "core/hash.h"
#include "core/log.h"
#include "data/datasets_cache.h"
#include "data/feature_cache.h"
#include "data/hub_dataset.h"
#include "model/checkpoint.h"
#include "model/config.h"
#include "tasks/question_answering/qa_demo.h"
#include "tasks/question_answering/qa_feature_cache.h"
#include "tasks/question_answering/qa_features.h"
#include "tasks/question_answering/qa_model_card.h"
#include "tasks/question_answering/question_answering_split.h"
#include "tasks/question_answering/squad.h"
#include "tasks/question_answering/squad_dataset.h"
#include "train/checkpoint.h"
#include "train/dataset_split.h"
#include "train/encoder_loader.h"
#include "train/model_card.h"
#include "train/model_source.h"
#include "train/node_feature_cache.h"
#include "train/report.h"
#include "train/run_setup.h"
#include "train/task_runner.h"
#include "train/tensorboard.h"

namespace ct::tasks {
namespace stdfs = std::filesystem;

namespace {

constexpr double kSinusoidScale = 0.05;

bool is_dir(const std::string& p) {
  std::error_code ec;
  return stdfs::is_directory(p, ec);
}

QaTokenizer load_tokenizer(const std::string& flag, const std::string& dir, const std::string& model_type) {
  if (!is_dir(dir))
    fail(flag, ": ", dir,
         " is not a folder with tokenizer.json, vocab.txt, vocab.json + merges.txt or a SentencePiece model");
  try {
    return QaTokenizer::from_dir(dir, model_type);
  } catch (const Error& e) {
    fail(flag, ": ", e.what());
  }
}

// A split's files as messages name them.
std::string describe_files(const std::vector<std::string>& paths) {
  return paths.size() == 1 ? paths[0] : str(paths[0], " and ", paths.size() - 1, " more file(s)");
}

// Features built once per node (train/node_feature_cache.h), keyed by the data files' bytes, the tokenizer
// and the flags that shape run_qa's windows.
FeatureSet node_features(const std::vector<std::string>& paths, const std::vector<Example>& examples,
                         int64_t max_samples, const QaTokenizer& tok, const QaArguments& args,
                         const train::DistContext& dist) {
  const QaDataArguments& d = args.data;
  FeatureOptions fo;
  fo.max_seq_length = d.max_seq_length;
  fo.doc_stride = d.doc_stride;
  fo.pad_to_max_length = d.pad_to_max_length;
  Hasher key;
  for (const auto& path : paths) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    key.str(ss.str());
  }
  key.u64(tok.fingerprint()).u64(static_cast<uint64_t>(fo.max_seq_length));
  key.u64(static_cast<uint64_t>(fo.doc_stride))
      .u64(fo.pad_to_max_length)
      .u64(static_cast<uint64_t>(max_samples));
  train::FeatureCacheRequest req;
  req.what = describe_files(paths);
  req.key = key.digest();
  req.cache_dir = args.model.cache_dir;
  req.overwrite = d.overwrite_cache;
  return train::node_cached_features<FeatureSet>(
      req, dist, [&] { return tok.build_features(examples, fo); }, save_feature_set, load_feature_set,
      [](const FeatureSet& f) { return f.size(); });
}

// A split from one file or several (a Hub split made of shards), their examples concatenated in order as
// datasets concatenates a split's files.
QaDataset load_split(const std::string& flag, const std::vector<std::string>& paths, int64_t max_samples,
                     const QaTokenizer& tok, const QaArguments& args, const train::DistContext& dist,
                     bool* has_answers = nullptr) {
  std::error_code ec;
  for (const auto& path : paths)
    if (!stdfs::exists(path, ec)) fail(flag, ": ", path, " does not exist");
  const std::string name = describe_files(paths);
  QaDataset ds;
  SquadReadStats stats;
  for (const auto& path : paths) {
    SquadReadStats s;
    auto examples = read_squad(path, &s, /*answers_optional=*/has_answers != nullptr);
    ds.examples.insert(ds.examples.end(), std::make_move_iterator(examples.begin()),
                       std::make_move_iterator(examples.end()));
    stats.total += s.total;
    stats.skipped += s.skipped;
    stats.without_answers += s.without_answers;
  }
  if (has_answers) *has_answers = stats.without_answers == 0;
  if (stats.skipped > 0 && dist.rank == 0)
    log::warn(name, ": skipped ", stats.skipped, " of ", stats.total,
              " examples whose answer_start/text disagree with the context");
  keep_first(ds.examples, max_samples);  // before feature creation (run_qa)
  if (ds.examples.empty()) fail(flag, ": ", name, " holds no usable examples");
  ds.features = node_features(paths, ds.examples, max_samples, tok, args, dist);
  if (max_samples > 0) ds.features.keep_first(max_samples);  // and after it
  train::check_same_on_all_ranks(dist, feature_set_hash(ds.features), str(flag, " ", name, " (its features)"),
                                 str(ds.features.size(), " features"));
  return ds;
}

// --dataset_name with CORETRAIN_SQUAD_URL set: the split's official SQuAD JSON in the datasets cache. Local
// rank 0 of each node fetches it (under a file lock, so nodes sharing the folder download once) while the
// others wait; every rank fails with the fetching rank's message when that fails.
std::string squad_json_split_file(const QaArguments& args, const std::string& split,
                                  const train::DistContext& dist) {
  const auto ds = resolve_squad_dataset(args.data.dataset_name, args.data.dataset_config_name);
  const std::string url = squad_base_url() + "/" + squad_file_name(ds, split);
  const std::string root = data::datasets_cache_dir(args.model.cache_dir);
  std::string path, err;
  if (dist.local_rank == 0) {
    try {
      path = fetch_squad_file(url, root, datasets_offline());
    } catch (const Error& e) {
      err = e.what();
    }
  }
  const auto errs = train::allgather_strings(dist, err);
  for (size_t r = 0; r < errs.size(); ++r)
    if (!errs[r].empty())
      fail("--dataset_name ", args.data.dataset_name, ": ", errs[r],
           static_cast<int>(r) == dist.rank ? std::string() : str(" (on rank ", r, ")"));
  if (dist.local_rank != 0) path = fetch_squad_file(url, root, /*offline=*/true);
  if (dist.rank == 0) log::info("--dataset_name ", args.data.dataset_name, " ", split, ": ", path);
  return path;
}

// --dataset_name: the split's files of the Hub dataset (rajpurkar/squad for squad: one Parquet file), fetched
// by train/dataset_split.h's rules for a data-parallel job.
std::vector<std::string> dataset_split_files(const QaArguments& args, const std::string& split,
                                             const train::DistContext& dist) {
  if (squad_json_source()) return {squad_json_split_file(args, split, dist)};
  data::DatasetRequest q;
  q.name = args.data.dataset_name;
  q.config = args.data.dataset_config_name;
  q.cache_dir = args.model.cache_dir;
  q.token = args.model.token;
  return train::fetch_dataset_split(q, split, dist).paths;
}

// run_qa's trainer.predict on the test split: the sharded eval loop, post-processing, predict_*.json files;
// metrics as QuestionAnsweringTrainer.predict names them (test_ prefix), SQuAD scores only when the file has
// answers.
nlohmann::json predict(train::TaskRunner& runner, const QaDataset& ds, bool has_answers,
                       const QaArguments& args) {
  const QuestionAnsweringSplit split(ds, args.data, has_answers);
  if (!has_answers) log::info("--test_file: no answers in it, so predictions only (no SQuAD scores)");
  // QuestionAnsweringTrainer.predict names its metrics test_*, and its prediction files predict_*.
  const nlohmann::json m = runner.predict(split);
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [k, v] : m.items()) out["test_" + k.substr(8)] = v;
  out["predict_samples"] = ds.features.size();
  return out;
}

}  // namespace

void init_sinusoidal_positions(model::EncoderModel& m) {
  const auto& c = m.config();
  const int64_t H = c.embedding_width();  // the position table's width (ELECTRA's may be narrower)
  if (m.layout().pos_emb < 0) return;     // DeBERTa-v3: relative positions only
  float* pos = m.params_data() + m.layout().pos_emb;
  // Transformer sinusoids at the init's scale: neighbours get similar codes, so attending "to the tokens
  // nearby" is learnable from the first step instead of after a long plateau.
  const double scale = kSinusoidScale;
  for (int64_t p = 0; p < c.max_position_embeddings; ++p)
    for (int64_t i = 0; i < H / 2; ++i) {
      const double angle = static_cast<double>(p) / std::pow(10000.0, 2.0 * static_cast<double>(i) / H);
      pos[p * H + 2 * i] = static_cast<float>(scale * std::sin(angle));
      pos[p * H + 2 * i + 1] = static_cast<float>(scale * std::cos(angle));
    }
  m.mark_weights_changed();
}

LoadedModel load_model(const QaArguments& args, const std::function<float*(int64_t)>& grad_alloc) {
  const auto& m = args.model;
  LoadedModel out;
  const std::string cfg_flag = m.config_name.empty() ? "--model_name_or_path" : "--config_name";
  const std::string cfg_src = m.config_name.empty() ? m.model_name_or_path : m.config_name;
  if (cfg_src.empty()) fail("--model_name_or_path: required (or --config_name)");
  try {
    out.config = model::load_config(train::config_json_path(cfg_flag, cfg_src));
  } catch (const Error& e) {
    const std::string msg = e.what();
    if (msg.rfind(cfg_flag, 0) == 0) throw;
    fail(cfg_flag, ": ", msg);
  }
  std::string tok_src = m.tokenizer_name;
  std::string tok_flag = "--tokenizer_name";
  if (tok_src.empty()) {
    tok_flag = m.model_name_or_path.empty() ? "--config_name" : "--model_name_or_path";
    tok_src =
        m.model_name_or_path.empty()
            ? (is_dir(m.config_name) ? m.config_name : stdfs::path(m.config_name).parent_path().string())
            : m.model_name_or_path;
  }
  out.tokenizer = load_tokenizer(tok_flag, tok_src, out.config.model_type);
  if (out.tokenizer.vocab_size() > out.config.vocab_size)
    fail(tok_flag, ": tokenizer has ", out.tokenizer.vocab_size(), " tokens but config vocab_size is ",
         out.config.vocab_size);
  const auto precision = model::resolve_precision(args.training.bf16);
  out.model = std::make_unique<model::EncoderModel>(
      out.config, model::HeadKind::span, precision,
      grad_alloc ? grad_alloc(model::make_param_layout(out.config, model::HeadKind::span).total) : nullptr);
  const uint64_t seed = static_cast<uint64_t>(args.training.seed);
  if (!m.model_name_or_path.empty()) {
    if (!is_dir(m.model_name_or_path) && !stdfs::exists(m.model_name_or_path))
      fail("--model_name_or_path: ", m.model_name_or_path, " does not exist");
    std::string weights;
    try {
      weights = model::find_weights_file(m.model_name_or_path);
      auto report = model::load_hf_weights(weights, out.model->params(), out.model->params_data());
      // set_seed(seed) then from_pretrained: only what the file lacks (the QA head; anything else fails)
      // starts from the seeded init, with the values a whole init gives it (see build_task_model).
      auto fresh = model::check_missing(report);
      if (!fresh.empty()) out.model->init_weights(seed, "qa_outputs.");
    } catch (const Error& e) {
      fail("--model_name_or_path: ", e.what());
    }
    out.model->mark_weights_changed();
  } else {
    out.model->init_weights(seed);
    log::info("no --model_name_or_path: training ", out.config.model_type, " from random init (seed ", seed,
              ")");
    if (args.coretrain.demo) init_sinusoidal_positions(*out.model);
  }
  return out;
}

train::RunResult run_qa(QaArguments args, const train::DistContext& dist) {
  for (const auto& n : args.notes) log::info(n);
  auto& t = args.training;
  auto& d = args.data;
  const bool writer = train::is_world_process_zero(dist);
  const std::string resume = train::prepare_output_dir(t, dist);
  {
    // Every rank must run the same job: the flags, after defaults, minus what is naturally per process.
    auto j = qa_args_to_json(args);
    j.erase("local_rank");
    train::check_same_arguments(j, dist);
  }
  train::resolve_logging_dir(t, dist);
  if (args.coretrain.demo) {
    prepare_demo(args, /*write_files=*/dist.local_rank == 0);
    train::barrier(dist);
  }

  // The gradient slab lives in the node's shared segment: each bucket's all-reduce works in place.
  const auto grad_alloc = train::gradient_allocator(dist);
  // Repo ids become snapshot folders of the Hub cache (local rank 0 of each node downloads, the others wait).
  QaArguments local = args;
  local.model = train::localize_model_sources(args.model, dist);
  auto lm = load_model(local, grad_alloc);
  // DDP's start: every rank takes rank 0's weights.
  train::broadcast_floats(dist, lm.model->params_data(), lm.model->num_params());
  lm.model->mark_weights_changed();
  if (const int64_t mml = lm.tokenizer.model_max_length(); mml > 0 && d.max_seq_length > mml) {
    log::warn("--max_seq_length ", d.max_seq_length, " is larger than the model's maximum (", mml,
              "); using ", mml);
    d.max_seq_length = mml;
  }
  // RoBERTa's positions start past the padding index (pad_token_id + 1), so 514 positions hold 512 tokens.
  const int64_t first_pos =
      lm.config.positions == model::PositionScheme::after_padding_idx ? lm.config.pad_token_id + 1 : 0;
  if (d.max_seq_length + first_pos > lm.config.max_position_embeddings)
    fail("--max_seq_length: ", d.max_seq_length, " exceeds the model's max_position_embeddings (",
         lm.config.max_position_embeddings,
         first_pos ? str(", positions from ", first_pos, ")") : std::string(")"));
  if (d.doc_stride >= d.max_seq_length)
    fail("--doc_stride: must be < --max_seq_length (", d.max_seq_length, "), got ", d.doc_stride);

  QaDataset train_ds, eval_ds, predict_ds;
  bool predict_has_answers = false;
  const bool hub =
      !d.dataset_name.empty();  // --dataset_name wins over --train_file/--validation_file (run_qa)
  if (t.do_train)
    train_ds = load_split(hub ? "--dataset_name" : "--train_file",
                          hub ? dataset_split_files(args, "train", dist) : std::vector{d.train_file},
                          d.max_train_samples, lm.tokenizer, args, dist);
  if (t.do_eval)
    eval_ds = load_split(hub ? "--dataset_name" : "--validation_file",
                         hub ? dataset_split_files(args, "validation", dist) : std::vector{d.validation_file},
                         d.max_eval_samples, lm.tokenizer, args, dist);
  if (t.do_predict)
    predict_ds = load_split("--test_file", {d.test_file}, d.max_predict_samples, lm.tokenizer, args, dist,
                            &predict_has_answers);
  if (!args.coretrain.dump_eval_features.empty()) {
    if (!t.do_eval) fail("--dump_eval_features: needs --do_eval");
    if (writer) dump_eval_features(args.coretrain.dump_eval_features, eval_ds, t.per_device_eval_batch_size);
  }

  train::TaskRunner runner(
      args.training, *lm.model, [&tok = lm.tokenizer](const std::string& dir) { tok.save(dir); }, dist);
  const QuestionAnsweringSplit train_split(train_ds, d), eval_split(eval_ds, d);
  train::RunResult result;
  if (t.do_train) {
    result.train_metrics =
        runner.train(train_split, t.do_eval ? &eval_split : nullptr, resume, train_ds.features.size());
    result.comm_exposed_seconds = runner.comm_exposed_seconds();
  }
  result.world = dist.world;
  if (t.do_eval) {
    log::info("*** Evaluate ***");
    result.eval_metrics = runner.evaluate(eval_split, eval_ds.features.size());
    runner.report("eval", result.eval_metrics);
  }
  if (t.do_predict) {
    log::info("*** Predict ***");
    runner.report("predict", predict(runner, predict_ds, predict_has_answers, args));
  }
  // run_qa.py's trainer.create_model_card(finetuned_from=..., tasks="question-answering", dataset...).
  runner.write_model_card(qa_card_info(args));
  return result;
}

}  // namespace ct::tasks
