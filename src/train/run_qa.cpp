#include "train/run_qa.h"

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
#include "data/feature_cache.h"
#include "data/features.h"
#include "data/hub_dataset.h"
#include "data/squad.h"
#include "data/squad_dataset.h"
#include "model/checkpoint.h"
#include "model/config.h"
#include "train/checkpoint.h"
#include "train/demo.h"
#include "train/model_card.h"
#include "train/model_source.h"
#include "train/qa_task.h"
#include "train/report.h"
#include "train/tensorboard.h"

namespace ct::train {
namespace stdfs = std::filesystem;

namespace {

constexpr double kSinusoidScale = 0.05;

bool is_dir(const std::string& p) {
  std::error_code ec;
  return stdfs::is_directory(p, ec);
}

std::string config_path(const std::string& flag, const std::string& p) {
  std::error_code ec;
  if (is_dir(p)) {
    const std::string c = p + "/config.json";
    if (!stdfs::exists(c, ec)) fail(flag, ": ", p, " has no config.json");
    return c;
  }
  if (!stdfs::exists(p, ec)) fail(flag, ": ", p, " does not exist");
  return p;
}

data::QaTokenizer load_tokenizer(const std::string& flag, const std::string& dir,
                                 const std::string& model_type) {
  if (!is_dir(dir))
    fail(flag, ": ", dir,
         " is not a folder with tokenizer.json, vocab.txt, vocab.json + merges.txt or a SentencePiece model");
  try {
    return data::QaTokenizer::from_dir(dir, model_type);
  } catch (const Error& e) {
    fail(flag, ": ", e.what());
  }
}

// Features built once per node: local rank 0 reads the cache or builds and writes it, the others wait and
// read it (HF's main_process_first around dataset.map). Without a writable cache every rank builds its own.
data::FeatureSet node_features(const std::string& path, const std::vector<data::Example>& examples,
                               int64_t max_samples, const data::QaTokenizer& tok,
                               const DataTrainingArguments& d, const DistContext& dist) {
  data::FeatureOptions fo;
  fo.max_seq_length = d.max_seq_length;
  fo.doc_stride = d.doc_stride;
  fo.pad_to_max_length = d.pad_to_max_length;
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    bytes = ss.str();
  }
  Hasher key;
  key.str(bytes).u64(tok.fingerprint()).u64(static_cast<uint64_t>(fo.max_seq_length));
  key.u64(static_cast<uint64_t>(fo.doc_stride))
      .u64(fo.pad_to_max_length)
      .u64(static_cast<uint64_t>(max_samples));
  char name[32];
  std::snprintf(name, sizeof name, "%016llx.bin", static_cast<unsigned long long>(key.digest()));
  const std::string cache = data::feature_cache_dir() + "/" + name;
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  std::optional<data::FeatureSet> fs;
  if (dist.local_rank == 0) {
    if (!d.overwrite_cache) {
      try {
        fs = data::load_feature_set(cache);
      } catch (const Error& e) {
        log::warn(e.what(), "; rebuilding it");
      }
    }
    if (fs) {
      log::info(path, ": ", fs->size(), " features from the cache ", cache, " in ", elapsed(), " s");
    } else {
      fs = tok.build_features(examples, fo);
      log::info(path, ": built ", fs->size(), " features in ", elapsed(), " s");
      try {
        data::save_feature_set(cache, *fs);
      } catch (const Error& e) {
        log::warn("feature cache not written (", e.what(), "); other ranks build their own");
      }
    }
  }
  barrier(dist);
  if (dist.local_rank != 0) {
    try {
      fs = data::load_feature_set(cache);
    } catch (const Error& e) {
      log::warn(e.what());
    }
    if (!fs) fs = tok.build_features(examples, fo);
  }
  return std::move(*fs);
}

QaDataset load_split(const std::string& flag, const std::string& path, int64_t max_samples,
                     const data::QaTokenizer& tok, const DataTrainingArguments& d, const DistContext& dist,
                     bool* has_answers = nullptr) {
  std::error_code ec;
  if (!stdfs::exists(path, ec)) fail(flag, ": ", path, " does not exist");
  QaDataset ds;
  data::SquadReadStats stats;
  ds.examples = data::read_squad(path, &stats, /*answers_optional=*/has_answers != nullptr);
  if (has_answers) *has_answers = stats.without_answers == 0;
  if (stats.skipped > 0 && dist.rank == 0)
    log::warn(path, ": skipped ", stats.skipped, " of ", stats.total,
              " examples whose answer_start/text disagree with the context");
  data::keep_first(ds.examples, max_samples);  // before feature creation (run_qa)
  if (ds.examples.empty()) fail(flag, ": ", path, " holds no usable examples");
  ds.features = node_features(path, ds.examples, max_samples, tok, d, dist);
  if (max_samples > 0) ds.features.keep_first(max_samples);  // and after it
  check_same_on_all_ranks(dist, data::feature_set_hash(ds.features), str(flag, " ", path, " (its features)"),
                          str(ds.features.size(), " features"));
  return ds;
}

// --dataset_name with CORETRAIN_SQUAD_URL set: the split's official SQuAD JSON in the datasets cache. Local
// rank 0 of each node fetches it (under a file lock, so nodes sharing the folder download once) while the
// others wait; every rank fails with the fetching rank's message when that fails.
std::string squad_json_split_file(const QaArguments& args, const std::string& split,
                                  const DistContext& dist) {
  const auto ds = data::resolve_squad_dataset(args.data.dataset_name, args.data.dataset_config_name);
  const std::string url = data::squad_base_url() + "/" + data::squad_file_name(ds, split);
  const std::string root = data::datasets_cache_dir(args.model.cache_dir);
  std::string path, err;
  if (dist.local_rank == 0) {
    try {
      path = data::fetch_squad_file(url, root, data::datasets_offline());
    } catch (const Error& e) {
      err = e.what();
    }
  }
  const auto errs = allgather_strings(dist, err);
  for (size_t r = 0; r < errs.size(); ++r)
    if (!errs[r].empty())
      fail("--dataset_name ", args.data.dataset_name, ": ", errs[r],
           static_cast<int>(r) == dist.rank ? std::string() : str(" (on rank ", r, ")"));
  if (dist.local_rank != 0) path = data::fetch_squad_file(url, root, /*offline=*/true);
  if (dist.rank == 0) log::info("--dataset_name ", args.data.dataset_name, " ", split, ": ", path);
  return path;
}

// --dataset_name: the split's Parquet file of the Hub dataset (rajpurkar/squad for squad), resolved as
// datasets.load_dataset does (data/hub_dataset.h) into the Hub cache. Local rank 0 of each node resolves and
// downloads (the Hub client locks each blob, so nodes sharing the cache download once) while the others wait,
// then read the same snapshot offline; every rank fails with the resolving rank's message when that fails.
std::string dataset_split_file(const QaArguments& args, const std::string& split, const DistContext& dist) {
  if (data::squad_json_source()) return squad_json_split_file(args, split, dist);
  data::DatasetRequest q;
  q.name = args.data.dataset_name;
  q.config = args.data.dataset_config_name;
  q.cache_dir = args.model.cache_dir;
  q.token = args.model.token;
  std::vector<std::string> paths;
  std::string err;
  auto fetch = [&] {
    const data::ResolvedDataset ds = data::resolve_dataset(q);
    paths = data::fetch_split(q, ds, split);
    if (paths.size() != 1)
      fail(ds.repo_id, " split '", split, "' is made of ", paths.size(),
           " files; coretrain qa reads one file per split (pass them merged as "
           "--train_file/--validation_file)");
  };
  if (dist.local_rank == 0) {
    try {
      fetch();
    } catch (const Error& e) {
      err = e.what();
    }
  }
  const auto errs = allgather_strings(dist, err);
  for (size_t r = 0; r < errs.size(); ++r)
    if (!errs[r].empty())
      fail("--dataset_name ", args.data.dataset_name, ": ", errs[r],
           static_cast<int>(r) == dist.rank ? std::string() : str(" (on rank ", r, ")"));
  if (dist.local_rank != 0) {
    q.offline = true;
    fetch();
  }
  if (dist.rank == 0) log::info("--dataset_name ", args.data.dataset_name, " ", split, ": ", paths[0]);
  return paths[0];
}

// run_qa's trainer.predict on the test split: the sharded eval loop, post-processing, predict_*.json files;
// metrics as QuestionAnsweringTrainer.predict names them (test_ prefix), SQuAD scores only when the file has
// answers.
nlohmann::json predict(Trainer& trainer, const QaDataset& ds, bool has_answers, const QaArguments& args,
                       const DistContext& dist) {
  const QaTaskSplit split(ds, args.data, has_answers);
  const auto t0 = std::chrono::steady_clock::now();
  const std::vector<float> rows = trainer.predict_rows(split);
  const double runtime = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  nlohmann::json m = nlohmann::json::object();
  const nlohmann::json scores =
      split.score(rows, "predict", is_world_process_zero(dist), args.training.output_dir);
  for (const auto& [k, v] : scores.items()) m["test_" + k] = v;
  if (!has_answers) log::info("--test_file: no answers in it, so predictions only (no SQuAD scores)");
  const int64_t n = ds.features.size();
  const int64_t batch = args.training.per_device_eval_batch_size * dist.world;
  auto round = [](double v, double scale) { return std::round(v * scale) / scale; };
  m["test_runtime"] = round(runtime, 1e4);
  m["test_samples_per_second"] = round(runtime > 0 ? n / runtime : 0, 1e3);
  m["test_steps_per_second"] =
      round(runtime > 0 ? static_cast<double>((n + batch - 1) / batch) / runtime : 0, 1e3);
  m["predict_samples"] = n;
  return m;
}

// Every rank must run the same job: the flags, after defaults, minus what is naturally per process.
void check_same_arguments(const QaArguments& args, const DistContext& dist) {
  if (!dist.distributed()) return;
  auto j = qa_args_to_json(args);
  j.erase("local_rank");
  std::string mine = j.dump(), zero = mine;
  broadcast_string(dist, &zero);
  std::string diff;
  if (mine != zero) {
    const auto z = nlohmann::json::parse(zero);
    for (auto& [k, x] : j.items())
      if (!z.contains(k) || z[k] != x)
        diff += str(diff.empty() ? "" : ", ", "--", k, " ", x.dump(),
                    " (rank 0: ", z.contains(k) ? z[k].dump() : std::string("unset"), ")");
  }
  // Every rank fails with the same explanation: the first differing rank sends its flags (on this failure
  // path only), so rank 0's message, often the one a user reads, names the flag too.
  const auto all = allgather_u64(dist, Hasher().str(mine).digest());
  std::string ranks;
  int first = -1;
  for (int r = 1; r < dist.world; ++r)
    if (all[static_cast<size_t>(r)] != all[0]) {
      ranks += str(ranks.empty() ? "" : ", ", r);
      if (first < 0) first = r;
    }
  if (first < 0) return;
  std::string shown = dist.rank == first ? diff : std::string();
  broadcast_string(dist, &shown, first);
  fail("the command line differs from rank 0's on rank(s) ", ranks, " (rank ", first, ": ", shown, ")",
       dist.rank != first && !diff.empty() ? "; here: " + diff : std::string());
}

void print_metrics(const std::string& split, const nlohmann::json& m) {
  std::printf("***** %s metrics *****\n", split.c_str());
  for (const auto& [k, v] : m.items()) std::printf("  %-26s = %s\n", k.c_str(), v.dump().c_str());
  std::fflush(stdout);
}

}  // namespace

void init_sinusoidal_positions(model::QaModel& m) {
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
    out.config = model::load_config(config_path(cfg_flag, cfg_src));
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
  out.model = std::make_unique<model::QaModel>(
      out.config, precision, grad_alloc ? grad_alloc(model::make_param_layout(out.config).total) : nullptr);
  const uint64_t seed = static_cast<uint64_t>(args.training.seed);
  // set_seed(seed) then from_pretrained: every parameter starts from the seeded init, the file overwrites.
  out.model->init_weights(seed);
  if (!m.model_name_or_path.empty()) {
    if (!is_dir(m.model_name_or_path) && !stdfs::exists(m.model_name_or_path))
      fail("--model_name_or_path: ", m.model_name_or_path, " does not exist");
    std::string weights;
    try {
      weights = model::find_weights_file(m.model_name_or_path);
      auto report = model::load_hf_weights(weights, out.model->params(), out.model->params_data());
      auto fresh = model::check_missing(report);
      if (!fresh.empty()) out.model->init_weights(seed, "qa_outputs.");
    } catch (const Error& e) {
      fail("--model_name_or_path: ", e.what());
    }
    out.model->mark_weights_changed();
  } else {
    log::info("no --model_name_or_path: training ", out.config.model_type, " from random init (seed ", seed,
              ")");
    if (args.coretrain.demo) init_sinusoidal_positions(*out.model);
  }
  return out;
}

RunResult run_qa(QaArguments args, const DistContext& dist) {
  for (const auto& n : args.notes) log::info(n);
  auto& t = args.training;
  auto& d = args.data;
  if (!t.do_train && !t.do_eval && !t.do_predict)
    fail("nothing to do: give --do_train, --do_eval and/or --do_predict");
  const bool writer = is_world_process_zero(dist);
  // The startup rule comes before anything is written into output_dir. Rank 0 decides (it is the one that
  // writes there) and tells the others, so every rank resumes from the same checkpoint.
  std::string resume, decision;
  if (writer) {
    try {
      // On an elastic restart (TORCHELASTIC_RESTART_COUNT / CORETRAIN_RDZV_ROUND > 0) the last checkpoint
      // wins over --overwrite_output_dir; the log says why it resumes or starts over.
      const auto rd = decide_resume(t.output_dir, t.overwrite_output_dir, t.resume_from_checkpoint,
                                    t.do_train, elastic_restart_from_env());
      if (rd.warning)
        log::warn(rd.why);
      else if (!rd.why.empty())
        log::info(rd.why);
      resume = rd.checkpoint;
      std::error_code ec;
      stdfs::create_directories(t.output_dir, ec);
      if (ec) fail("--output_dir: cannot create ", t.output_dir, " (", ec.message(), ")");
      remove_stale_temp_checkpoints(t.output_dir);
      decision = "ok\n" + resume;
    } catch (const Error& e) {
      decision = std::string("error\n") + e.what();
      broadcast_string(dist, &decision);
      throw;
    }
  }
  broadcast_string(dist, &decision);
  if (!writer) {
    const auto nl = decision.find('\n');
    if (decision.compare(0, nl, "ok") != 0) fail("rank 0 stopped: ", decision.substr(nl + 1));
    resume = decision.substr(nl + 1);
  }
  check_same_arguments(args, dist);
  if (t.logging_dir.empty()) {  // HF v4's default, stamped by rank 0's clock and shared
    std::string dir = writer ? default_logging_dir(t.output_dir) : std::string();
    broadcast_string(dist, &dir);
    t.logging_dir = dir;
  }
  if (args.coretrain.demo) {
    prepare_demo(args, /*write_files=*/dist.local_rank == 0);
    barrier(dist);
  }

  // The gradient slab lives in the node's shared segment: the node's part of each bucket's all-reduce then
  // reads and writes it in place.
  std::function<float*(int64_t)> grad_alloc;
  if (dist.distributed())
    grad_alloc = [&](int64_t n) {
      return static_cast<float*>(dist.comm->shm_alloc(n * static_cast<int64_t>(sizeof(float))));
    };
  // Repo ids become snapshot folders of the Hub cache (local rank 0 of each node downloads, the others wait).
  QaArguments local = args;
  local.model = localize_model_sources(args.model, dist);
  auto lm = load_model(local, grad_alloc);
  // DDP's start: every rank takes rank 0's weights.
  broadcast_floats(dist, lm.model->params_data(), lm.model->num_params());
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
                          hub ? dataset_split_file(args, "train", dist) : d.train_file, d.max_train_samples,
                          lm.tokenizer, d, dist);
  if (t.do_eval)
    eval_ds = load_split(hub ? "--dataset_name" : "--validation_file",
                         hub ? dataset_split_file(args, "validation", dist) : d.validation_file,
                         d.max_eval_samples, lm.tokenizer, d, dist);
  if (t.do_predict)
    predict_ds = load_split("--test_file", d.test_file, d.max_predict_samples, lm.tokenizer, d, dist,
                            &predict_has_answers);
  if (!args.coretrain.dump_eval_features.empty()) {
    if (!t.do_eval) fail("--dump_eval_features: needs --do_eval");
    if (writer) dump_eval_features(args.coretrain.dump_eval_features, eval_ds, t.per_device_eval_batch_size);
  }

  Trainer trainer(
      args.training, *lm.model, [&tok = lm.tokenizer](const std::string& dir) { tok.save(dir); }, dist);
  const QaTaskSplit train_split(train_ds, d), eval_split(eval_ds, d);
  // --report_to tensorboard: HF's TensorBoardCallback, on rank 0 only (train/tensorboard.h).
  std::unique_ptr<TensorBoardWriter> tb;
  const auto reports = report_integrations(t);
  if (writer && std::find(reports.begin(), reports.end(), "tensorboard") != reports.end()) {
    tb = std::make_unique<TensorBoardWriter>(t.logging_dir);
    log::info("TensorBoard: ", tb->path());
    trainer.on_log = [&tb](const nlohmann::json& e) { tensorboard_log(*tb, e, e.value("step", int64_t{0})); };
  }
  RunResult result;
  if (t.do_train) {
    if (tb) {  // on_train_begin
      tb->add_text("args", training_args_to_json(t).dump(2));
      tb->add_text("model_config", model::config_to_json(lm.config));
      tb->flush();
    }
    auto m = trainer.train(train_split, t.do_eval ? &eval_split : nullptr, resume);
    if (writer) write_json(t.output_dir + "/" + kTimingFile, trainer.timing());
    trainer.save_model(t.output_dir);
    m["train_samples"] = train_ds.features.size();
    if (writer) print_metrics("train", m);
    trainer.save_metrics("train", m);
    trainer.save_state();
    result.train_metrics = m;
    result.comm_exposed_seconds = trainer.comm_exposed_seconds();
  }
  result.world = dist.world;
  // HF's evaluation_loop casts the model to bf16 once training is over (not for evaluations during it) and
  // leaves it so for predict. coretrain's bf16 keeps layer norm and softmax in f32 (autocast's split), where
  // a model cast whole to bf16 runs them in bf16 too.
  if (t.bf16_full_eval && (t.do_eval || t.do_predict))
    lm.model->set_precision(model::resolve_precision(/*bf16_requested=*/true));
  if (t.do_eval) {
    log::info("*** Evaluate ***");
    auto m = trainer.evaluate(eval_split, /*write_predictions=*/true);
    m["eval_samples"] = eval_ds.features.size();
    if (writer) print_metrics("eval", m);
    trainer.save_metrics("eval", m);
    if (t.do_train) trainer.save_state();
    result.eval_metrics = m;
  }
  if (t.do_predict) {
    log::info("*** Predict ***");
    auto m = predict(trainer, predict_ds, predict_has_answers, args, dist);
    if (writer) print_metrics("predict", m);
    trainer.save_metrics("predict", m);
  }
  if (writer) {
    // run_qa.py's trainer.create_model_card(finetuned_from=..., tasks="question-answering", dataset...).
    fs::write_file_atomic(t.output_dir + "/README.md",
                          model_card(args, trainer.state().log_history, dist.world));
    if (t.do_train) log::info("training report: ", write_training_report(t.output_dir));
  }
  return result;
}

}  // namespace ct::train
