// The real `coretrain qa` binary (CORETRAIN_BIN) end to end: a tiny BERT trained from random init on a small
// generated SQuAD set reaches a high F1, its eval_nbest_predictions.json logits match a PyTorch forward of
// the saved model on the same features (tests/tasks/question_answering/nbest_vs_torch.py with Debian's
// python3 + torch), and bad command lines fail with one line naming the flag and a non-zero exit.
#include <gtest/gtest.h>

#include <unistd.h>
#include "../../train/demo_workspace.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <vector>

#include "core/fs.h"
#include "kernels/cpu_features.h"
#include "model/config.h"
#include "tasks/question_answering/squad_demo_data.h"
#include "text/tokenizer.h"
#include "train/checkpoint.h"

namespace stdfs = std::filesystem;

namespace {

struct Run {
  int code;
  std::string out;  // stdout + stderr
};

Run run(const std::string& args, const std::string& env = "") {
  const std::string log = stdfs::temp_directory_path() / ("ct_qa_bin_" + std::to_string(::getpid()) + ".log");
  const std::string cmd = env + " " + std::string(CORETRAIN_BIN) + " qa " + args + " > " + log + " 2>&1";
  int rc = std::system(cmd.c_str());
  Run r{WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, ct::fs::read_file(log)};
  stdfs::remove(log);
  return r;
}

class QaBinary : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    root_ = (stdfs::temp_directory_path() / ("ct_qa_bin_" + std::to_string(::getpid()))).string();
    ct::model::ModelConfig c;
    c.hidden_size = 64;
    c.num_hidden_layers = 2;
    c.num_attention_heads = 4;
    c.intermediate_size = 128;
    c.max_position_embeddings = 192;
    c.hidden_dropout_prob = 0.0;
    c.attention_probs_dropout_prob = 0.0;
    // Small enough to learn in seconds: the test shows the binary's pipeline learns (it is evaluated on the
    // set it trained on); generalization to held-out paragraphs is the demo's job (README "Demo").
    ct::train::test::write_demo_workspace(root_, /*seed=*/11, /*train_paragraphs=*/12, /*eval_paragraphs=*/2,
                                          c);
  }
  static void TearDownTestSuite() { stdfs::remove_all(root_); }

  static std::string base(const std::string& out) {
    return "--config_name " + root_ + "/model --tokenizer_name " + root_ + "/model --train_file " + root_ +
           "/train.json --validation_file " + root_ + "/train.json --output_dir " + out +
           " --max_seq_length 160 --doc_stride 64 --pad_to_max_length false --no_cuda --disable_tqdm";
  }
  static std::string root_;
};
std::string QaBinary::root_;

TEST_F(QaBinary, TrainsToHighF1AndNbestLogitsMatchTorch) {
  const std::string out = root_ + "/run";
  auto r = run(base(out) + " --do_train --do_eval --per_device_train_batch_size 8 --learning_rate 3e-3 " +
               "--warmup_ratio 0.05 --max_steps 300 --logging_steps 50 --save_steps 100 --seed 5 " +
               "--dump_eval_features " + out + "/eval_features.json");
  ASSERT_EQ(r.code, 0) << r.out;
  auto eval = ct::train::read_json(out + "/eval_results.json");
  EXPECT_GE(eval["eval_f1"].get<double>(), 85.0) << eval.dump();
  EXPECT_EQ(eval["eval_samples"].get<int64_t>(), 48);
  EXPECT_TRUE(stdfs::exists(out + "/checkpoint-100/optimizer.safetensors"));

  if (std::system("/usr/bin/python3 -c 'import torch, numpy' > /dev/null 2>&1") != 0)
    GTEST_SKIP() << "/usr/bin/python3 has no torch";
  const std::string script =
      std::string(CORETRAIN_SOURCE_DIR) + "/tests/tasks/question_answering/nbest_vs_torch.py";
  const std::string log = out + "/torch_check.log";
  int rc = std::system(
      ("/usr/bin/python3 " + script + " " + out + " " + out + "/eval_features.json > " + log + " 2>&1")
          .c_str());
  EXPECT_EQ(rc, 0) << ct::fs::read_file(log);
  std::printf("%s", ct::fs::read_file(log).c_str());
}

// Each example's n-best candidates by text (first occurrence): (start logit, end logit). Candidates are
// matched by text because a small change in the logits can reorder the list.
std::map<std::string, std::pair<double, double>> nbest_logits(const std::string& dir) {
  std::map<std::string, std::pair<double, double>> m;
  const auto j = ct::train::read_json(dir + "/eval_nbest_predictions.json");
  for (const auto& [id, cands] : j.items())
    for (const auto& c : cands)
      m.emplace(id + "|" + c["text"].get<std::string>(),
                std::make_pair(c["start_logit"].get<double>(), c["end_logit"].get<double>()));
  return m;
}

int count(const std::string& s, const std::string& needle) {
  int n = 0;
  for (size_t p = s.find(needle); p != std::string::npos; p = s.find(needle, p + 1)) ++n;
  return n;
}

// Largest absolute difference between two n-best logit sets over the candidates both have, the largest
// logit of `a`, and how many candidates they share.
struct LogitDiff {
  double diff = 0, scale = 0;
  size_t common = 0;
};
LogitDiff compare_logits(const std::map<std::string, std::pair<double, double>>& a,
                         const std::map<std::string, std::pair<double, double>>& b) {
  LogitDiff d;
  for (const auto& [key, la] : a) {
    d.scale = std::max({d.scale, std::fabs(la.first), std::fabs(la.second)});
    const auto it = b.find(key);
    if (it == b.end()) continue;
    ++d.common;
    d.diff =
        std::max({d.diff, std::fabs(it->second.first - la.first), std::fabs(it->second.second - la.second)});
  }
  return d;
}

// HF's --bf16_full_eval: an f32-trained model is evaluated in bf16 once training is over. Widened bf16 runs
// on any CPU under CORETRAIN_BF16_EMULATE=1 (DNNL_MAX_CPU_ISA=AVX2 forces the widening everywhere), so the
// flag's effect is checked on every machine: the logits move by bf16 rounding, not more, while the same
// evaluation without the flag reproduces the f32 logits exactly.
//
// Bit-for-bit comparisons are only made between runs at the same oneDNN ISA: the runs pinned to AVX2 are
// compared with an f32 evaluation pinned to AVX2 too, since an AVX-512 or AMX kernel sums in another order
// (logits differ in the 5th digit). Across ISAs the f32 logits may differ by summation order only.
TEST_F(QaBinary, Bf16FullEvalEvaluatesInBf16AfterTraining) {
  std::printf("oneDNN ISA here: %s; the bf16 and fallback runs are pinned to avx2\n",
              ct::kernels::cpu_isa_name().c_str());
  const std::string trained = root_ + "/full_eval_f32";
  auto r = run(base(trained) + " --do_train --do_eval --per_device_train_batch_size 8 --learning_rate 3e-3 " +
               "--max_steps 40 --seed 5 --save_strategy no");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto f32 = nbest_logits(trained);
  ASSERT_FALSE(f32.empty());

  const std::string eval_only = " --do_eval --model_name_or_path " + trained + " --overwrite_output_dir";
  const std::string again = root_ + "/full_eval_again";
  r = run(base(again) + eval_only);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(nbest_logits(again), f32);

  // The f32 reference of the pinned runs: the same evaluation at AVX2. Against the machine's own ISA it
  // differs by summation order alone (f32 rounding of sums over H = 64 terms: far below 1e-4 of the scale).
  const std::string f32_avx2_dir = root_ + "/full_eval_f32_avx2";
  r = run(base(f32_avx2_dir) + eval_only, "DNNL_MAX_CPU_ISA=AVX2");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto f32_avx2 = nbest_logits(f32_avx2_dir);
  const LogitDiff isa = compare_logits(f32, f32_avx2);
  std::printf("f32 at %s vs avx2: largest logit difference %g (largest logit %g)\n",
              ct::kernels::cpu_isa_name().c_str(), isa.diff, isa.scale);
  EXPECT_EQ(isa.common, f32.size()) << "f32 at AVX2 changed the n-best candidates";
  EXPECT_LE(isa.diff, 1e-4 * isa.scale)
      << "f32 logits at AVX2 moved by " << isa.diff << " (largest logit " << isa.scale << ")";

  const std::string bf = root_ + "/full_eval_bf16";
  r = run(base(bf) + eval_only + " --bf16_full_eval", "CORETRAIN_BF16_EMULATE=1 DNNL_MAX_CPU_ISA=AVX2");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(count(r.out, "CORETRAIN_BF16_EMULATE=1: running bf16"), 1) << r.out;
  const LogitDiff d = compare_logits(f32_avx2, nbest_logits(bf));
  std::printf("bf16 full eval: largest logit change %g (largest logit %g), %zu of %zu candidates shared\n",
              d.diff, d.scale, d.common, f32_avx2.size());
  EXPECT_GE(d.common, f32_avx2.size() / 2) << "bf16 evaluation shares few n-best candidates with f32";
  EXPECT_GT(d.diff, 0.0) << "bf16 evaluation gave the f32 logits bit for bit";
  EXPECT_LT(d.diff, 0.05 * d.scale) << "bf16 moved a logit by " << d.diff << " (largest logit " << d.scale
                                    << ")";

  // Without the opt-in, a CPU with no bf16 instructions says so once and evaluates in f32.
  const std::string fallback = root_ + "/full_eval_fallback";
  r = run(base(fallback) + eval_only + " --bf16_full_eval", "DNNL_MAX_CPU_ISA=AVX2");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(count(r.out, "running f32 instead"), 1) << r.out;
  EXPECT_EQ(nbest_logits(fallback), f32_avx2);
}

TEST_F(QaBinary, BadCommandLinesFailWithOneLineNamingTheFlag) {
  const std::string out = root_ + "/bad";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--frobnicate 3", "--frobnicate"},
      {"--do_train --learning_rate -1", "--learning_rate"},
      {"--do_train --doc_stride 200", "--doc_stride"},
      {"--do_train --per_device_train_batch_size 0", "--per_device_train_batch_size"},
      {"--do_train --train_file " + root_ + "/missing.json", "--train_file"},
      {"--do_train --max_steps 1 --max_seq_length 8 --doc_stride 2", "--max_seq_length"},
  };
  for (const auto& [extra, flag] : cases) {
    auto r = run(base(out) + " " + extra);
    EXPECT_EQ(r.code, 1) << extra << "\n" << r.out;
    // The last line is the error, naming the flag.
    std::string last = r.out.substr(0, r.out.size() - 1);
    last = last.substr(last.find_last_of('\n') == std::string::npos ? 0 : last.find_last_of('\n') + 1);
    EXPECT_NE(last.find("error"), std::string::npos) << r.out;
    EXPECT_NE(last.find(flag), std::string::npos) << extra << " -> " << r.out;
  }
  // A non-empty output_dir without checkpoints is refused and left as it was.
  stdfs::create_directories(root_ + "/used");
  ct::fs::write_file_atomic(root_ + "/used/keep.txt", "x");
  auto r = run(base(root_ + "/used") + " --do_train --max_steps 1");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("--overwrite_output_dir"), std::string::npos) << r.out;
  EXPECT_EQ(std::distance(stdfs::directory_iterator(root_ + "/used"), stdfs::directory_iterator()), 1);
  auto h = run("--help");
  EXPECT_EQ(h.code, 0);
  EXPECT_NE(h.out.find("--per_device_train_batch_size"), std::string::npos);
}

}  // namespace
