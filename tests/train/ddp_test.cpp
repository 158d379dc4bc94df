// Data parallelism end to end through run_qa, ranks as threads over an in-memory store (real shared memory):
// N ranks x batch b follow the trajectory of 1 rank x batch N*b (dropout on, AdamW and SGD, gradient
// accumulation), a world size that pads the epoch still trains in lockstep, evaluation sharded over ranks
// writes byte-identical prediction files, and a checkpoint written at one world size resumes at another.
//
// Tolerance: the runs differ only in how f32 sums are associated (a weight gradient sums B*T rows; N ranks
// sum b*T rows each and then average), about 1e-7 relative per step: measured here, SGD weights agree to
// 2e-9 and AdamW's to about 1e-6 (see weights() for the parameters left out). Anything else that could
// differ (a feature on the wrong step, a dropout mask keyed by the row instead of the feature, a missing
// average) moves weights by the order of the learning rate per step (1e-3 here; another data order moves
// them by 3e-4 under SGD, 7e-3 under AdamW). The bound, 2e-5 absolute after six steps, sits between.
#include <gtest/gtest.h>
#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <functional>

#include "../comm/comm_test_util.h"
#include "core/error.h"
#include "core/fs.h"
#include "demo_workspace.h"
#include "model/checkpoint.h"
#include "model/config.h"
#include "model/param_layout.h"
#include "tasks/question_answering/run_qa.h"
#include "train/checkpoint.h"
#include "train/dist_context.h"

namespace stdfs = std::filesystem;
using namespace ct::train;
using ct::tasks::parse_qa_args;
using ct::tasks::run_qa;

namespace {

constexpr double kWeightTolerance = 2e-5;
constexpr double kLossTolerance = 1e-5;

// Runs run_qa on `world` thread-ranks (local_world per node); rank r gets args(r). Throws the first rank's
// error.
void run_ranks(int world, int local_world, const std::function<std::vector<std::string>(int)>& args) {
  static int job = 0;
  ct::comm::CommOptions o;
  o.timeout = std::chrono::seconds(60);
  ct::comm::test::run_threads(
      world, local_world,
      [&](ct::comm::Communicator& c) {
        omp_set_num_threads(1);
        run_qa(parse_qa_args(args(c.rank())), dist_context(c));
      },
      o, "ddp_test_" + std::to_string(::getpid()) + "_" + std::to_string(job++));
}

// Final weights, without the parameters whose gradient is zero in exact arithmetic: a bias added to every
// start (end) logit of a sequence (qa_outputs.bias, and the last layer's output LayerNorm bias, which reaches
// every logit of a row through the same linear map) or to every attention key leaves the softmax unchanged,
// so what backward computes for it is rounding noise, and AdamW turns noise of any size into a step of
// +-lr. Those differ between world sizes by construction; the loss and every other parameter do not.
std::vector<float> weights(const std::string& dir) {
  auto cfg = ct::model::load_config(dir + "/config.json");
  auto layout = ct::model::make_param_layout(cfg);
  std::vector<float> w(static_cast<size_t>(layout.total));
  ct::model::load_hf_weights(dir + "/model.safetensors", layout.params, w.data());
  std::vector<float> kept;
  for (const auto& p : layout.params) {
    const std::string last_ln =
        "layer." + std::to_string(cfg.num_hidden_layers - 1) + ".output.LayerNorm.bias";
    if (p.name == "qa_outputs.bias" || p.name.find("attention.self.key.bias") != std::string::npos ||
        p.name.find(last_ln) != std::string::npos)
      continue;
    kept.insert(kept.end(), w.begin() + p.offset, w.begin() + p.offset + p.numel());
  }
  return kept;
}

double max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  EXPECT_EQ(a.size(), b.size());
  double m = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i)
    m = std::max(m, std::fabs(static_cast<double>(a[i]) - b[i]));
  return m;
}

std::vector<double> logged_losses(const std::string& dir) {
  std::vector<double> out;
  const auto state = read_json(dir + "/trainer_state.json");
  for (const auto& e : state["log_history"])
    if (e.contains("loss")) out.push_back(e["loss"].get<double>());
  return out;
}

class Ddp : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    root_ = (stdfs::temp_directory_path() / ("ct_ddp_" + std::to_string(::getpid()))).string();
    ct::model::ModelConfig c;
    c.hidden_size = 32;
    c.num_hidden_layers = 1;
    c.num_attention_heads = 2;
    c.intermediate_size = 64;
    c.max_position_embeddings = 128;
    c.hidden_dropout_prob = 0.1;  // dropout on: masks must follow the feature, not the rank or row
    c.attention_probs_dropout_prob = 0.1;
    ct::train::test::write_demo_workspace(root_, /*seed=*/5, /*train_paragraphs=*/10, /*eval_paragraphs=*/6,
                                          c);
    ::setenv("HF_DATASETS_CACHE", (root_ + "/cache").c_str(), 1);
  }
  static void TearDownTestSuite() { stdfs::remove_all(root_); }

  // Global batch 4 as (per-device batch, accumulation) for the world size.
  static std::vector<std::string> args(const std::string& out, int64_t batch,
                                       std::vector<std::string> extra = {}) {
    std::vector<std::string> a = {"--config_name",
                                  root_ + "/model",
                                  "--tokenizer_name",
                                  root_ + "/model",
                                  "--train_file",
                                  root_ + "/train.json",
                                  "--validation_file",
                                  root_ + "/dev.json",
                                  "--do_train",
                                  "--output_dir",
                                  out,
                                  "--per_device_train_batch_size",
                                  std::to_string(batch),
                                  "--max_seq_length",
                                  "96",
                                  "--doc_stride",
                                  "32",
                                  "--learning_rate",
                                  "1e-3",
                                  "--weight_decay",
                                  "0.01",
                                  "--logging_steps",
                                  "1",
                                  "--save_strategy",
                                  "no",
                                  "--seed",
                                  "11",
                                  "--disable_tqdm",
                                  "--max_steps",
                                  "6"};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  }

  // Evaluation only, of the model in `model`, into `out`.
  static std::vector<std::string> eval_args(const std::string& model, const std::string& out,
                                            std::vector<std::string> extra = {}) {
    std::vector<std::string> a = {"--model_name_or_path",
                                  model,
                                  "--validation_file",
                                  root_ + "/dev.json",
                                  "--do_eval",
                                  "--output_dir",
                                  out,
                                  "--per_device_eval_batch_size",
                                  "3",
                                  "--max_seq_length",
                                  "96",
                                  "--doc_stride",
                                  "32",
                                  "--disable_tqdm"};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  }

  static std::string root_;
};
std::string Ddp::root_;

TEST_F(Ddp, NRanksTimesBatchFollowOneRankTimesNBatch) {
  for (const std::string optim : {"adamw_torch", "sgd"}) {
    SCOPED_TRACE(optim);
    const std::string base = root_ + "/eq_" + optim;
    run_ranks(1, 1, [&](int) { return args(base + "_1x4", 4, {"--optim", optim}); });
    run_ranks(2, 2, [&](int) { return args(base + "_2x2", 2, {"--optim", optim}); });
    run_ranks(4, 2, [&](int) { return args(base + "_4x1", 1, {"--optim", optim}); });  // 2 nodes x 2
    run_ranks(2, 2, [&](int) {
      return args(base + "_2x1x2", 1, {"--optim", optim, "--gradient_accumulation_steps", "2"});
    });
    const auto ref = weights(base + "_1x4");
    const auto ref_loss = logged_losses(base + "_1x4");
    ASSERT_EQ(ref_loss.size(), 6u);
    double worst = 0;
    for (const char* run : {"_2x2", "_4x1", "_2x1x2"}) {
      SCOPED_TRACE(run);
      const double diff = max_abs_diff(weights(base + run), ref);
      EXPECT_LT(diff, kWeightTolerance);
      worst = std::max(worst, diff);
      const auto loss = logged_losses(base + run);
      ASSERT_EQ(loss.size(), ref_loss.size());
      for (size_t i = 0; i < loss.size(); ++i)
        EXPECT_NEAR(loss[i], ref_loss[i], kLossTolerance) << "step " << i + 1;
      EXPECT_EQ(read_json(base + run + "/trainer_state.json")["global_step"], 6);
    }
    // The bound can fail: another data order trains on other features.
    run_ranks(2, 2, [&](int) {
      return args(base + "_2x2_other", 2, {"--optim", optim, "--data_seed", "12"});
    });
    const double other = max_abs_diff(weights(base + "_2x2_other"), ref);
    EXPECT_GT(other, kWeightTolerance);
    EXPECT_GT(other, 1000 * worst);
  }
}

// Packed batches (--pad_to_max_length False): no pads anywhere, so the equality holds with dynamic lengths
// too (padded per batch, the ranks' pads would differ from the single rank's and enter HF's loss).
TEST_F(Ddp, PackedBatchesNRanksTimesBatchFollowOneRankTimesNBatch) {
  const std::string base = root_ + "/packed";
  const std::vector<std::string> packed = {"--pad_to_max_length", "false"};
  run_ranks(1, 1, [&](int) { return args(base + "_1x4", 4, packed); });
  run_ranks(2, 2, [&](int) { return args(base + "_2x2", 2, packed); });
  run_ranks(4, 2, [&](int) { return args(base + "_4x1", 1, packed); });
  run_ranks(1, 1, [&](int) { return args(base + "_padded_1x4", 4); });
  const auto ref = weights(base + "_1x4");
  const auto ref_loss = logged_losses(base + "_1x4");
  ASSERT_EQ(ref_loss.size(), 6u);
  for (const char* run : {"_2x2", "_4x1"}) {
    SCOPED_TRACE(run);
    EXPECT_LT(max_abs_diff(weights(base + run), ref), kWeightTolerance);
    const auto loss = logged_losses(base + run);
    ASSERT_EQ(loss.size(), ref_loss.size());
    for (size_t i = 0; i < loss.size(); ++i)
      EXPECT_NEAR(loss[i], ref_loss[i], kLossTolerance) << "step " << i + 1;
  }
  // Not vacuous: the padded run's loss spans pad positions, so it trains other weights.
  EXPECT_GT(max_abs_diff(weights(base + "_padded_1x4"), ref), kWeightTolerance);
}

// The word embeddings' rows no token touched are skipped by the gradient zeroing, the norm, clipping and
// AdamW (decay alone); CORETRAIN_DENSE_WORD_GRAD=1 runs those passes over every row as before. The bytes of
// the weights and of the moments agree: one rank and two (the reduction's union of rows), gradient
// accumulation, clipping that scales, f32 and bf16.
TEST_F(Ddp, UntouchedWordEmbeddingRowsAreSkippedExactly) {
  const std::string base = root_ + "/rows";
  // The demo tokenizer's vocabulary is nearly all used: the model gets 1,000 rows more (ids no token has, as
  // a real vocabulary's many rows a fine-tuning set never sees).
  const std::string model = base + "_model";
  stdfs::create_directories(model);
  auto config = read_json(root_ + "/model/config.json");
  config["vocab_size"] = config["vocab_size"].get<int64_t>() + 1000;
  ct::fs::write_file_atomic(model + "/config.json", config.dump());
  auto with_model = [&](std::vector<std::string> a) {
    for (size_t i = 0; i + 1 < a.size(); ++i)
      if (a[i] == "--config_name") a[i + 1] = model;
    return a;
  };
  const std::vector<std::string> common = {"--save_strategy", "steps", "--save_steps", "6"};
  struct Case {
    int world;
    int64_t batch;
    std::vector<std::string> extra;
  };
  const std::vector<Case> cases = {{1, 4, {}},
                                   {2, 1, {"--gradient_accumulation_steps", "2", "--max_grad_norm", "0.05"}},
                                   {1, 4, {"--bf16", "--weight_decay", "0"}},
                                   {2, 2, {"--bf16"}}};
  int k = 0;
  for (const Case& c : cases) {
    SCOPED_TRACE(k);
    std::vector<std::string> extra = common;
    extra.insert(extra.end(), c.extra.begin(), c.extra.end());
    const std::string sparse = base + std::to_string(k) + "_sparse",
                      dense = base + std::to_string(k++) + "_dense";
    run_ranks(c.world, c.world, [&](int) { return with_model(args(sparse, c.batch, extra)); });
    ::setenv("CORETRAIN_DENSE_WORD_GRAD", "1", 1);
    run_ranks(c.world, c.world, [&](int) { return with_model(args(dense, c.batch, extra)); });
    ::unsetenv("CORETRAIN_DENSE_WORD_GRAD");
    for (const char* file : {"/model.safetensors", "/checkpoint-6/optimizer.safetensors"})
      EXPECT_TRUE(ct::fs::read_file(sparse + file) == ct::fs::read_file(dense + file)) << file;
    // Not vacuous: some rows were never touched (their moments are still zero).
    const auto cfg = ct::model::load_config(sparse + "/config.json");
    const auto layout = ct::model::make_param_layout(cfg);
    const auto os = load_optimizer_state(sparse + "/checkpoint-6/optimizer.safetensors", layout.total);
    int64_t untouched = 0;
    for (int64_t r = 0; r < cfg.vocab_size; ++r) {
      const float* m = os.exp_avg.data() + layout.word_emb + r * cfg.hidden_size;
      untouched += std::all_of(m, m + cfg.hidden_size, [](float x) { return x == 0.0f; });
    }
    EXPECT_GT(untouched, 1000);
    EXPECT_LT(untouched, cfg.vocab_size);
  }
}

// A node's ranks share one copy of the weights and moments and each updates its own slice (ZeRO-1 inside
// the node, train/node_shard.h); CORETRAIN_REPLICATED_OPTIMIZER=1 has every rank update everything, as
// before. The update is elementwise and the norm is still taken over the whole gradient, so the weights and
// the moments are the replicated run's to the byte: AdamW in f32 and bf16 (the shared bf16 copies feed the
// next forward, so a stale slice would move the loss), SGD, two nodes of two ranks.
TEST_F(Ddp, NodeRanksShareTheOptimizerStateAndMatchTheReplicatedUpdateBitForBit) {
  const std::vector<std::string> common = {"--save_strategy", "steps", "--save_steps", "6"};
  struct Case {
    int world, local;
    int64_t batch;
    std::vector<std::string> extra;
  };
  const std::vector<Case> cases = {
      {2, 2, 2, {"--max_grad_norm", "0.05"}}, {2, 2, 2, {"--bf16"}}, {4, 2, 1, {"--optim", "sgd"}}};
  int k = 0;
  for (const Case& c : cases) {
    SCOPED_TRACE(k);
    std::vector<std::string> extra = common;
    extra.insert(extra.end(), c.extra.begin(), c.extra.end());
    const std::string shared = root_ + "/shard" + std::to_string(k) + "_shared",
                      replicated = root_ + "/shard" + std::to_string(k++) + "_replicated";
    run_ranks(c.world, c.local, [&](int) { return args(shared, c.batch, extra); });
    ::setenv("CORETRAIN_REPLICATED_OPTIMIZER", "1", 1);
    run_ranks(c.world, c.local, [&](int) { return args(replicated, c.batch, extra); });
    ::unsetenv("CORETRAIN_REPLICATED_OPTIMIZER");
    for (const char* file : {"/model.safetensors", "/checkpoint-6/optimizer.safetensors"})
      EXPECT_TRUE(ct::fs::read_file(shared + file) == ct::fs::read_file(replicated + file)) << file;
    EXPECT_EQ(logged_losses(shared), logged_losses(replicated));
    // Not vacuous: each rank updated its slice, the slices of a node cover the slab once; replicated, all.
    const int64_t n = ct::model::make_param_layout(ct::model::load_config(shared + "/config.json")).total;
    const auto sh = read_json(shared + "/ddp_timing.json")["ranks"],
               rep = read_json(replicated + "/ddp_timing.json")["ranks"];
    ASSERT_EQ(sh.size(), static_cast<size_t>(c.world));
    std::vector<int64_t> per_node(static_cast<size_t>(c.world / c.local), 0);
    for (size_t r = 0; r < sh.size(); ++r) {
      const int64_t mine = sh[r]["updated_params"].get<int64_t>();
      EXPECT_GT(mine, 0);
      EXPECT_LT(mine, n);
      per_node[static_cast<size_t>(sh[r]["node"].get<int>())] += mine;
      EXPECT_EQ(rep[r]["updated_params"].get<int64_t>(), n);
    }
    for (int64_t total : per_node) EXPECT_EQ(total, n);
  }
  // Resuming: the checkpoint's moments go into the shared regions (not zeros), to the same bytes.
  const std::string first = root_ + "/shard_resume_first";
  run_ranks(2, 2, [&](int) { return args(first, 2, {"--save_strategy", "steps", "--save_steps", "3"}); });
  const std::vector<std::string> resume = {"--resume_from_checkpoint", first + "/checkpoint-3"};
  run_ranks(2, 2, [&](int) { return args(root_ + "/shard_resume_shared", 2, resume); });
  ::setenv("CORETRAIN_REPLICATED_OPTIMIZER", "1", 1);
  run_ranks(2, 2, [&](int) { return args(root_ + "/shard_resume_replicated", 2, resume); });
  ::unsetenv("CORETRAIN_REPLICATED_OPTIMIZER");
  EXPECT_TRUE(ct::fs::read_file(root_ + "/shard_resume_shared/model.safetensors") ==
              ct::fs::read_file(root_ + "/shard_resume_replicated/model.safetensors"));
  EXPECT_TRUE(ct::fs::read_file(root_ + "/shard_resume_shared/model.safetensors") ==
              ct::fs::read_file(first + "/model.safetensors"));
}

TEST_F(Ddp, ThreeRanksPadTheEpochAndStayInLockstep) {
  // 10 features over 3 ranks: torch pads the epoch to 12 (repeating its first two), 4 steps per epoch, the
  // same count as 1 rank x 3. Steps 1-3 see the same features in both runs; step 4 of the 3-rank run holds
  // the last real feature and the two repeats.
  const std::string a = root_ + "/pad_1x3", b = root_ + "/pad_3x1";
  auto extra =
      std::vector<std::string>{"--max_train_samples", "10", "--max_steps", "-1", "--num_train_epochs", "1"};
  run_ranks(1, 1, [&](int) { return args(a, 3, extra); });
  run_ranks(3, 3, [&](int) { return args(b, 1, extra); });
  const auto la = logged_losses(a), lb = logged_losses(b);
  ASSERT_EQ(la.size(), 4u);
  ASSERT_EQ(lb.size(), 4u);
  for (size_t i = 0; i < 3; ++i) EXPECT_NEAR(la[i], lb[i], kLossTolerance) << "step " << i + 1;
  EXPECT_EQ(read_json(b + "/trainer_state.json")["global_step"], 4);
  EXPECT_EQ(read_json(b + "/train_results.json")["train_samples"], 10);
}

TEST_F(Ddp, GroupByLengthDealsWholeBatchesInLockstep) {
  // 10 features, 2 ranks x 2: accelerate's count, ceil(ceil(10 / 2) / 2) = 3 steps, the last round of batches
  // filled from the epoch's start; every rank takes the same number of steps and the run ends.
  const std::string a = root_ + "/grouped_2x2", b = root_ + "/plain_2x2";
  auto extra = std::vector<std::string>{"--max_train_samples", "10", "--max_steps",         "-1",
                                        "--num_train_epochs",  "1",  "--pad_to_max_length", "false"};
  run_ranks(2, 2, [&](int) {
    auto e = extra;
    e.push_back("--group_by_length");
    return args(a, 2, e);
  });
  run_ranks(2, 2, [&](int) { return args(b, 2, extra); });
  EXPECT_EQ(read_json(a + "/trainer_state.json")["global_step"], 3);
  EXPECT_EQ(read_json(a + "/train_results.json")["train_samples"], 10);
  EXPECT_EQ(read_json(a + "/training_args.json")["group_by_length"], true);
  EXPECT_GT(max_abs_diff(weights(a), weights(b)), kWeightTolerance);  // another order, other weights
}

TEST_F(Ddp, ShardedEvaluationWritesByteIdenticalPredictions) {
  const std::string model = root_ + "/eval_model";
  run_ranks(1, 1, [&](int) { return args(model, 4); });
  run_ranks(1, 1, [&](int) { return eval_args(model, root_ + "/eval_1"); });
  run_ranks(3, 3, [&](int) { return eval_args(model, root_ + "/eval_3"); });
  for (const char* f : {"eval_predictions.json", "eval_nbest_predictions.json"}) {
    const auto one = ct::fs::read_file(root_ + "/eval_1/" + f);
    EXPECT_FALSE(one.empty()) << f;
    EXPECT_EQ(one, ct::fs::read_file(root_ + "/eval_3/" + f)) << f;
  }
  EXPECT_EQ(read_json(root_ + "/eval_1/eval_results.json")["eval_f1"],
            read_json(root_ + "/eval_3/eval_results.json")["eval_f1"]);
}

// Packed evaluation computes only real tokens; pads never win a span, so the predictions are the padded
// evaluation's.
TEST_F(Ddp, PackedEvaluationPredictsWhatPaddedEvaluationPredicts) {
  const std::string model = root_ + "/eval_model_packed";
  run_ranks(1, 1, [&](int) { return args(model, 4); });
  run_ranks(1, 1, [&](int) {
    return eval_args(model, root_ + "/eval_padded", {"--pad_to_max_length", "true"});
  });
  run_ranks(2, 2, [&](int) {
    return eval_args(model, root_ + "/eval_packed", {"--pad_to_max_length", "false"});
  });
  const auto padded = ct::fs::read_file(root_ + "/eval_padded/eval_predictions.json");
  EXPECT_FALSE(padded.empty());
  EXPECT_EQ(padded, ct::fs::read_file(root_ + "/eval_packed/eval_predictions.json"));
  EXPECT_EQ(read_json(root_ + "/eval_padded/eval_results.json")["eval_f1"],
            read_json(root_ + "/eval_packed/eval_results.json")["eval_f1"]);
}

TEST_F(Ddp, CheckpointResumesAtAnotherWorldSize) {
  const std::string straight = root_ + "/rs_2x2";
  run_ranks(2, 2, [&](int) { return args(straight, 2, {"--save_strategy", "steps", "--save_steps", "3"}); });
  ASSERT_TRUE(stdfs::exists(straight + "/checkpoint-3/model.safetensors"));
  ASSERT_TRUE(stdfs::exists(straight + "/checkpoint-3/rng_state_1.json"));
  const auto ref = weights(straight);
  struct Case {
    int world;
    int64_t batch;
  };
  for (Case c : {Case{1, 4}, Case{4, 1}}) {
    SCOPED_TRACE(c.world);
    const std::string out = root_ + "/rs_to_" + std::to_string(c.world);
    run_ranks(c.world, c.world, [&](int) {
      return args(out, c.batch, {"--resume_from_checkpoint", straight + "/checkpoint-3"});
    });
    EXPECT_LT(max_abs_diff(weights(out), ref), kWeightTolerance);
    EXPECT_EQ(read_json(out + "/trainer_state.json")["global_step"], 6);
  }
}

TEST_F(Ddp, RanksWithDifferentFlagsAreNamed) {
  try {
    run_ranks(2, 2, [&](int r) {
      return args(root_ + "/mismatch", 2, {"--learning_rate", r == 1 ? "2e-3" : "1e-3"});
    });
    ADD_FAILURE() << "no error";
  } catch (const ct::Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("rank(s) 1"), std::string::npos) << m;
    EXPECT_NE(m.find("command line"), std::string::npos) << m;
  }
}

}  // namespace
