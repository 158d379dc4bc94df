// What the CPU offers the engine, as oneDNN sees it (so DNNL_MAX_CPU_ISA limits are honoured): bf16 matmuls
// are fast only with AVX512-BF16 or AMX; without either, --bf16 says so once and runs f32.
#pragma once

#include <string>

namespace ct::kernels {

bool cpu_has_avx512_bf16();
bool cpu_has_amx_bf16();
// avx512_bf16 || amx_bf16: bf16 matmuls run natively.
bool cpu_has_fast_bf16();
// oneDNN's effective ISA, e.g. "avx512_core_bf16", for logs and `coretrain version`.
std::string cpu_isa_name();

}  // namespace ct::kernels
