#include "kernels/lm_head_loss.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/bf16.h"
#include "core/error.h"
#include "kernels/gemm.h"
#include "kernels/vec_math.h"

namespace ct::kernels {

namespace {

constexpr int64_t kChunkBytes = 64 << 20;

}  // namespace

LmHeadLossSums lm_head_loss(const void* hidden, const void* weight, const int32_t* targets,
                            const LmHeadLossSpec& s, float* dhidden, float* dweight, int32_t* argmax) {
  CT_CHECK(s.N >= 0 && s.C > 0 && s.V > 0, "lm_head_loss: rows ", s.N, ", hidden ", s.C, ", vocab ", s.V);
  for (int64_t r = 0; r < s.N; ++r)
    CT_CHECK(targets[r] >= 0 && targets[r] < s.V, "lm_head_loss: row ", r, " has target ", targets[r],
             ", outside the vocabulary [0, ", s.V, ")");
  LmHeadLossSums sums;
  if (s.N == 0) return sums;
  const bool bf = s.dt == DType::bf16;
  const bool backward = dhidden || dweight;
  // Chunks of a multiple of 64 rows: gemm splits other row counts into two products, and dW's then reads and
  // writes its [V, C] accumulator twice per chunk.
  const int64_t chunk = s.chunk_rows > 0
                            ? s.chunk_rows
                            : std::min(s.N, std::max<int64_t>(64, kChunkBytes / (s.V * 4) / 64 * 64));
  const int64_t esz = dtype_size(s.dt);
  std::vector<float> logits(chunk * s.V), dh;
  std::vector<bf16> dl_bf16(bf && backward ? chunk * s.V : 0);
  std::vector<float> dw_sum(bf && dweight ? s.V * s.C : 0, 0.0f);
  if (bf && dhidden) dh.resize(chunk * s.C);
  std::vector<double> nll(chunk), ent(chunk);
  std::vector<int32_t> best(chunk);
  for (int64_t r0 = 0; r0 < s.N; r0 += chunk) {
    const int64_t n = std::min(chunk, s.N - r0);
    const auto* h = static_cast<const char*>(hidden) + r0 * s.C * esz;
    Gemm g;
    g.M = n;
    g.N = s.V;
    g.K = s.C;
    g.trans_b = true;
    g.a_type = g.b_type = s.dt;
    gemm(g, h, weight, logits.data());
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < n; ++r) {
      float* z = logits.data() + r * s.V;
      if (bf)
        for (int64_t j = 0; j < s.V; ++j) z[j] = round_bf16(z[j]);
      float mx = z[0];
      int32_t arg = 0;
      for (int64_t j = 1; j < s.V; ++j)
        if (z[j] > mx) {
          mx = z[j];
          arg = static_cast<int32_t>(j);
        }
      // f32 exps summed in double by blocks: the order of a vocabulary-long sum should not move the loss.
      double sum = 0.0, ez = 0.0;
      for (int64_t j0 = 0; j0 < s.V; j0 += 1024) {
        float part = 0.0f, part_z = 0.0f;
        const int64_t j1 = std::min(s.V, j0 + 1024);
#pragma omp simd reduction(+ : part, part_z)
        for (int64_t j = j0; j < j1; ++j) {
          const float e = fast_exp(z[j] - mx);
          part += e;
          part_z += e * z[j];
        }
        sum += part;
        ez += part_z;
      }
      const double lse = mx + std::log(sum);
      const double pz = ez / sum;
      nll[r] = lse - z[targets[r0 + r]];
      ent[r] = lse - pz;
      best[r] = arg;
      if (backward) {
        const float inv = static_cast<float>(1.0 / sum);
#pragma omp simd
        for (int64_t j = 0; j < s.V; ++j) z[j] = fast_exp(z[j] - mx) * inv * s.grad_scale;
        z[targets[r0 + r]] -= s.grad_scale;
        if (bf) f32_to_bf16(z, dl_bf16.data() + r * s.V, s.V);
      }
    }
    for (int64_t r = 0; r < n; ++r) {
      sums.nll += nll[r];
      sums.entropy += ent[r];
      sums.correct += best[r] == targets[r0 + r];
      if (argmax) argmax[r0 + r] = best[r];
    }
    if (!backward) continue;
    const void* dl = bf ? static_cast<const void*>(dl_bf16.data()) : logits.data();
    if (dhidden) {
      Gemm gh;  // dh = dl W
      gh.M = n;
      gh.N = s.C;
      gh.K = s.V;
      gh.a_type = gh.b_type = s.dt;
      if (bf) {
        gemm(gh, dl, weight, dh.data());
        float* out = dhidden + r0 * s.C;
        for (int64_t i = 0; i < n * s.C; ++i) out[i] += round_bf16(dh[i]);
      } else {
        gh.accumulate = true;
        gemm(gh, dl, weight, dhidden + r0 * s.C);
      }
    }
    if (dweight) {
      Gemm gw;  // dW += dl^T h
      gw.M = s.V;
      gw.N = s.C;
      gw.K = n;
      gw.trans_a = true;
      gw.a_type = gw.b_type = s.dt;
      gw.accumulate = true;
      gemm(gw, dl, h, bf ? dw_sum.data() : dweight);
    }
  }
  if (bf && dweight) {
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < s.V * s.C; ++i) dweight[i] += round_bf16(dw_sum[i]);
  }
  return sums;
}

LmHeadLossSums lm_head_loss_reference(const float* hidden, const float* weight, const int32_t* targets,
                                      const LmHeadLossSpec& s, float* dhidden, float* dweight) {
  LmHeadLossSums sums;
  std::vector<double> z(s.V);
  for (int64_t r = 0; r < s.N; ++r) {
    double mx = -1e300;
    int64_t arg = 0;
    for (int64_t j = 0; j < s.V; ++j) {
      double acc = 0.0;
      for (int64_t c = 0; c < s.C; ++c) acc += static_cast<double>(hidden[r * s.C + c]) * weight[j * s.C + c];
      z[j] = acc;
      if (acc > mx) {
        mx = acc;
        arg = j;
      }
    }
    double sum = 0.0;
    for (int64_t j = 0; j < s.V; ++j) sum += std::exp(z[j] - mx);
    const double lse = mx + std::log(sum);
    double pz = 0.0;
    for (int64_t j = 0; j < s.V; ++j) pz += std::exp(z[j] - lse) * z[j];
    sums.nll += lse - z[targets[r]];
    sums.entropy += lse - pz;
    sums.correct += arg == targets[r];
    for (int64_t j = 0; j < s.V; ++j) {
      const double d = (std::exp(z[j] - lse) - (j == targets[r] ? 1.0 : 0.0)) * s.grad_scale;
      for (int64_t c = 0; c < s.C; ++c) {
        if (dhidden) dhidden[r * s.C + c] += static_cast<float>(d * weight[j * s.C + c]);
        if (dweight) dweight[j * s.C + c] += static_cast<float>(d * hidden[r * s.C + c]);
      }
    }
  }
  return sums;
}

}  // namespace ct::kernels
