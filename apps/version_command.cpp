// `coretrain version`: what was built and what this CPU offers the engine.
#include <cstdio>

#include "apps/command.h"
#include "core/parallel.h"
#include "kernels/cpu_features.h"

namespace {

int run_version(int, char**) {
  namespace k = ct::kernels;
  std::printf("coretrain 0.1 (C++20), %d OpenMP threads\n", ct::num_threads());
  // DNNL_MAX_CPU_ISA lowers what oneDNN uses; scripts/test-each-isa.sh reads this line to say what each run
  // got.
  const char* bf16 = k::cpu_has_amx_bf16()        ? "AMX"
                     : k::cpu_has_avx512_bf16()   ? "AVX512-BF16"
                     : k::bf16_matmul_supported() ? "emulated by oneDNN"
                                                  : "none (coretrain widens to f32)";
  std::printf("oneDNN ISA %s, bf16 matmul: %s\n", k::cpu_isa_name().c_str(), bf16);
  return 0;
}

}  // namespace

CT_COMMAND("version", "print the version, thread count and the CPU's matmul ISA", run_version);
