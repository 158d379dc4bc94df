// `coretrain bench matmul` end to end: prints both rates for a tiny shape; rejects a bad size with a non-zero
// exit.
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

#include <gtest/gtest.h>

namespace {

int run(const std::string& args, std::string* out) {
  const std::string cmd = std::string(CORETRAIN_BIN) + " bench matmul " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return -1;
  std::array<char, 512> buf{};
  while (fgets(buf.data(), buf.size(), p)) *out += buf.data();
  const int status = pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(BenchMatmul, PrintsF32AndBf16Rates) {
  std::string out;
  ASSERT_EQ(run("--m 16 --n 32 --k 64 --reps 1", &out), 0) << out;
  EXPECT_NE(out.find("matmul M=16 N=32 K=64"), std::string::npos) << out;
  EXPECT_NE(out.find("f32:"), std::string::npos) << out;
  EXPECT_NE(out.find("bf16:"), std::string::npos) << out;
  out.clear();
  ASSERT_EQ(run("--m 16 --n 32 --k 64 --reps 1 --bf16", &out), 0) << out;
  EXPECT_EQ(out.find("f32:"), std::string::npos) << out;
}

TEST(BenchMatmul, RejectsNonPositiveSizes) {
  std::string out;
  EXPECT_NE(run("--m 0", &out), 0) << out;
  EXPECT_NE(out.find("--m: expected a positive integer, got '0'"), std::string::npos) << out;
  out.clear();
  EXPECT_NE(run("--k -3", &out), 0) << out;
}

}  // namespace
