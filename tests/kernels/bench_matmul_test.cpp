// `coretrain bench matmul` end to end: prints both rates for a tiny shape where oneDNN has a bf16 matmul;
// without one (forced everywhere with DNNL_MAX_CPU_ISA=AVX2, which leaves oneDNN 2.x no bf16 matmul) it
// prints the f32 rate and says bf16 is not available, and --bf16 alone fails with that one line; rejects a
// bad size with a non-zero exit.
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

#include <gtest/gtest.h>

#include "kernels/cpu_features.h"

namespace {

int run(const std::string& args, std::string* out, const std::string& env = "") {
  const std::string cmd = env + " " + std::string(CORETRAIN_BIN) + " bench matmul " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return -1;
  std::array<char, 512> buf{};
  while (fgets(buf.data(), buf.size(), p)) *out += buf.data();
  const int status = pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int lines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

TEST(BenchMatmul, PrintsF32AndBf16Rates) {
  if (!ct::kernels::bf16_matmul_supported())
    GTEST_SKIP() << ct::kernels::bf16_matmul_unavailable_reason()
                 << ": no bf16 rate to print (BenchMatmul.WithoutBf16MatmulSaysSo covers this CPU)";
  std::string out;
  ASSERT_EQ(run("--m 16 --n 32 --k 64 --reps 1", &out), 0) << out;
  EXPECT_NE(out.find("matmul M=16 N=32 K=64"), std::string::npos) << out;
  EXPECT_NE(out.find("f32:  "), std::string::npos) << out;
  EXPECT_NE(out.find("bf16: "), std::string::npos) << out;
  EXPECT_EQ(out.find("not available"), std::string::npos) << out;
  out.clear();
  ASSERT_EQ(run("--m 16 --n 32 --k 64 --reps 1 --bf16", &out), 0) << out;
  EXPECT_EQ(out.find("f32:"), std::string::npos) << out;
  EXPECT_NE(out.find("bf16: "), std::string::npos) << out;
  EXPECT_NE(out.find(" GFLOP/s"), std::string::npos) << out;
}

TEST(BenchMatmul, WithoutBf16MatmulSaysSo) {
  const std::string env = "DNNL_MAX_CPU_ISA=AVX2";
  std::string out;
  ASSERT_EQ(run("--m 16 --n 32 --k 64 --reps 1", &out, env), 0) << out;
  EXPECT_NE(out.find("matmul M=16 N=32 K=64"), std::string::npos) << out;
  EXPECT_NE(out.find("f32:  "), std::string::npos) << out;
  EXPECT_NE(out.find("\nbf16: not available: oneDNN has no bf16 matmul for ISA "), std::string::npos) << out;
  EXPECT_EQ(lines(out), 3) << out;
  out.clear();
  EXPECT_EQ(run("--m 16 --n 32 --k 64 --reps 1 --bf16", &out, env), 1) << out;
  EXPECT_EQ(out.rfind("coretrain bench matmul: error: --bf16: oneDNN has no bf16 matmul for ISA ", 0), 0u)
      << out;
  EXPECT_EQ(lines(out), 1) << out;
}

TEST(BenchMatmul, RejectsNonPositiveSizes) {
  std::string out;
  EXPECT_NE(run("--m 0", &out), 0) << out;
  EXPECT_NE(out.find("--m: expected a positive integer, got '0'"), std::string::npos) << out;
  out.clear();
  EXPECT_NE(run("--k -3", &out), 0) << out;
}

}  // namespace
