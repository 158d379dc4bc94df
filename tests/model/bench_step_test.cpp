// `coretrain bench step` as a user runs it (the real binary, tiny shapes): it runs the steps, reports its
// figures (page faults per step among them), falls back to f32 with one warning when oneDNN may not use bf16
// instructions, and rejects bad flags with one line and a non-zero exit.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <string>

#include "kernels/cpu_features.h"

namespace {

struct CmdResult {
  int status = -1;
  std::string out;  // stdout + stderr
};

CmdResult run(const std::string& env, const std::string& args) {
  const std::string cmd = env + " " + CORETRAIN_BIN + " bench step " + args + " 2>&1";
  CmdResult r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf{};
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  r.status = pclose(p);
  return r;
}

int count(const std::string& s, const std::string& needle) {
  int c = 0;
  for (size_t pos = s.find(needle); pos != std::string::npos; pos = s.find(needle, pos + 1)) ++c;
  return c;
}

const std::string kTiny =
    "--layers 2 --hidden 32 --heads 4 --intermediate 64 --seq 16 --batch 2 --vocab 100 --steps 2 --warmup 1";

TEST(BenchStep, ReportsThroughputMfuAndMemory) {
  const CmdResult r = run("OMP_NUM_THREADS=1", kTiny);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("samples/s"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("MFU"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"peak_rss_mb\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"minor_faults_per_step\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"precision\": \"f32\""), std::string::npos) << r.out;
  EXPECT_EQ(count(r.out, "  step "), 3) << r.out;
}

TEST(BenchStep, Bf16FallsBackToF32WithOneWarningWithoutBf16Instructions) {
  const CmdResult r = run("OMP_NUM_THREADS=1 DNNL_MAX_CPU_ISA=AVX512_CORE", kTiny + " --bf16");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(count(r.out, "running f32"), 1) << r.out;
  EXPECT_NE(r.out.find("\"precision\": \"f32\""), std::string::npos) << r.out;
}

// DNNL_MAX_CPU_ISA=AVX2 takes oneDNN's bf16 matmul away on any CPU: the opt-in runs widened bf16, against
// the f32 peak (the units it runs on).
TEST(BenchStep, Bf16EmulatedOnRequestWithoutBf16Instructions) {
  const CmdResult r =
      run("OMP_NUM_THREADS=1 DNNL_MAX_CPU_ISA=AVX2 CORETRAIN_BF16_EMULATE=1", kTiny + " --bf16");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(count(r.out, "CORETRAIN_BF16_EMULATE=1: running bf16"), 1) << r.out;
  EXPECT_NE(r.out.find("\"precision\": \"bf16\""), std::string::npos) << r.out;
}

TEST(BenchStep, Bf16RunsBf16WhereTheCpuHasIt) {
  if (!ct::kernels::cpu_has_fast_bf16()) GTEST_SKIP() << "no AVX512-BF16/AMX here";
  const CmdResult r = run("OMP_NUM_THREADS=1", kTiny + " --bf16");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(count(r.out, "running f32"), 0) << r.out;
  EXPECT_NE(r.out.find("\"precision\": \"bf16\""), std::string::npos) << r.out;
}

TEST(BenchStep, BadFlagsFailWithOneLine) {
  for (const char* bad : {"--hidden 30 --heads 4", "--seq 0", "--batch -2", "--nonsense 1"}) {
    const CmdResult r = run("OMP_NUM_THREADS=1", bad);
    EXPECT_NE(r.status, 0) << bad << ": " << r.out;
    EXPECT_FALSE(r.out.empty()) << bad;
  }
  const CmdResult r = run("OMP_NUM_THREADS=1", "--hidden 30 --heads 4 --layers 1");
  EXPECT_NE(r.out.find("--hidden 30 is not divisible by --heads 4"), std::string::npos) << r.out;
  EXPECT_EQ(count(r.out, "\n"), 1) << r.out;
}

// --lengths gives rows real lengths; MFU counts real tokens; --packed computes only them.
TEST(BenchStep, RealLengthsPaddedOrPackedAndBadLengthsNamed) {
  for (const char* mode : {"", " --packed"}) {
    const CmdResult r = run("OMP_NUM_THREADS=1", kTiny + " --lengths 10,6" + mode);
    ASSERT_EQ(r.status, 0) << r.out;
    EXPECT_NE(r.out.find("16 real tokens of 32"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("\"real_tokens\": 16, \"padded_tokens\": 32"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(*mode ? "\"packed\": true" : "\"packed\": false"), std::string::npos) << r.out;
  }
  const CmdResult longer = run("OMP_NUM_THREADS=1", kTiny + " --lengths 10,17");
  EXPECT_NE(longer.status, 0) << longer.out;
  EXPECT_NE(longer.out.find("--lengths: 17 is longer than --seq 16"), std::string::npos) << longer.out;
  EXPECT_EQ(count(longer.out, "\n"), 1) << longer.out;
  const CmdResult zero = run("OMP_NUM_THREADS=1", kTiny + " --lengths 0");
  EXPECT_NE(zero.status, 0) << zero.out;
  EXPECT_NE(zero.out.find("--lengths"), std::string::npos) << zero.out;
}

TEST(BenchStep, SizesTakeNcclTestsSuffixes) {
  CmdResult r =
      run("",
          "--layers 1 --hidden 32 --heads 4 --intermediate 64 --seq 16 --batch 2 --vocab 1K --steps 1 "
          "--warmup 0");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("vocab 1024"), std::string::npos) << r.out;
  r = run("", kTiny + " --seq 16Q");
  EXPECT_NE(r.status, 0);
  EXPECT_EQ(count(r.out, "--seq: expected a positive size"), 1) << r.out;
}

}  // namespace
