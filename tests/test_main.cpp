// GoogleTest's main for every ct_<layer>_tests binary, plus one line naming the oneDNN ISA its matmuls run at
// (the CPU's best, or what DNNL_MAX_CPU_ISA lowers it to), so the output of a failing test says which kernels
// it compared: scripts/test-each-isa.sh runs the suite at each level. Not printed when gtest only lists tests
// (CTest's discovery reads that output).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

#include "kernels/cpu_features.h"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (!::testing::GTEST_FLAG(list_tests)) {
    const char* limit = std::getenv("DNNL_MAX_CPU_ISA");
    std::printf("oneDNN ISA: %s (DNNL_MAX_CPU_ISA %s)\n", ct::kernels::cpu_isa_name().c_str(),
                limit && *limit ? limit : "unset");
    std::fflush(stdout);  // before any test forks: a child must not flush a copy of this line
  }
  return RUN_ALL_TESTS();
}
