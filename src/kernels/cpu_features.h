// What the CPU offers the engine, as oneDNN sees it (so DNNL_MAX_CPU_ISA limits are honoured): bf16 matmuls
// are fast only with AVX512-BF16 or AMX; without either, --bf16 says so once and runs f32
// (model::resolve_precision). oneDNN 2.x has a bf16 matmul at all only from AVX512 (emulated below
// AVX512-BF16); on AVX2-only CPUs kernels::gemm widens bf16 products to f32 itself.
#pragma once

#include <string>

namespace ct::kernels {

bool cpu_has_avx512_bf16();
bool cpu_has_amx_bf16();
// avx512_bf16 || amx_bf16: bf16 matmuls run natively.
bool cpu_has_fast_bf16();
// Whether oneDNN can create a bf16 x bf16 -> f32/bf16 matmul here at all (fast or emulated): false on
// AVX2-only CPUs with oneDNN 2.x, where kernels::gemm widens instead and no bf16 peak can be measured. Found
// by creating a tiny primitive once; the answer is cached; thread-safe. cpu_has_fast_bf16() implies it.
bool bf16_matmul_supported();
// "oneDNN has no bf16 matmul for ISA avx2 on this CPU": why bf16_matmul_supported() is false, for messages.
std::string bf16_matmul_unavailable_reason();
// oneDNN's effective ISA is AVX-512 (avx512_core or later): its matmuls are brgemm kernels then.
bool cpu_isa_at_least_avx512();
// oneDNN's effective ISA, e.g. "avx512_core_bf16", for logs and `coretrain version`.
std::string cpu_isa_name();

}  // namespace ct::kernels
