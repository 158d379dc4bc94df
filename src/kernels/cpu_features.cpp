// CPU capabilities through oneDNN's effective ISA (honours DNNL_MAX_CPU_ISA).
#include "kernels/cpu_features.h"

#include <oneapi/dnnl/dnnl.hpp>

namespace ct::kernels {
namespace {

dnnl::cpu_isa isa() {
  return dnnl::get_effective_cpu_isa();
}

}  // namespace

bool cpu_has_amx_bf16() {
  const auto i = isa();
  return i == dnnl::cpu_isa::avx512_core_amx;
}

bool cpu_has_avx512_bf16() {
  const auto i = isa();
  return i == dnnl::cpu_isa::avx512_core_bf16 || i == dnnl::cpu_isa::avx512_core_amx;
}

bool cpu_isa_at_least_avx512() {
  const auto i = isa();
  return i == dnnl::cpu_isa::avx512_core || i == dnnl::cpu_isa::avx512_core_vnni ||
         i == dnnl::cpu_isa::avx512_core_bf16 || i == dnnl::cpu_isa::avx512_core_amx;
}

bool cpu_has_fast_bf16() {
  return cpu_has_avx512_bf16() || cpu_has_amx_bf16();
}

bool bf16_matmul_supported() {
  static const bool supported = [] {
    using DT = dnnl::memory::data_type;
    using Tag = dnnl::memory::format_tag;
    try {
      const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
      const dnnl::memory::desc a({4, 8}, DT::bf16, Tag::ab), b({8, 4}, DT::bf16, Tag::ab);
      // Both outputs the gemm uses: f32 and bf16.
      for (const DT c_type : {DT::f32, DT::bf16}) {
        const dnnl::memory::desc c({4, 4}, c_type, Tag::ab);
        dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a, b, c), engine);
      }
      return true;
    } catch (const dnnl::error&) {
      return false;
    }
  }();
  return supported;
}

std::string bf16_matmul_unavailable_reason() {
  return "oneDNN has no bf16 matmul for ISA " + cpu_isa_name() + " on this CPU";
}

std::string cpu_isa_name() {
  switch (isa()) {
    case dnnl::cpu_isa::sse41:
      return "sse41";
    case dnnl::cpu_isa::avx:
      return "avx";
    case dnnl::cpu_isa::avx2:
      return "avx2";
    case dnnl::cpu_isa::avx512_core:
      return "avx512_core";
    case dnnl::cpu_isa::avx512_core_vnni:
      return "avx512_core_vnni";
    case dnnl::cpu_isa::avx512_core_bf16:
      return "avx512_core_bf16";
    case dnnl::cpu_isa::avx512_core_amx:
      return "avx512_core_amx";
    default:
      return "other";
  }
}

}  // namespace ct::kernels
