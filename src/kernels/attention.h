// Multi-head self-attention core: given Q, K, V rows ([B, T, NH*HS], any row stride, e.g. slices of one fused
// [B, T, 3H] QKV buffer) and HF's attention mask, computes softmax(Q K^T / sqrt(HS) + mask) with
// attention-prob dropout, times V, into a context [B, T, H]. Each (sequence, group of heads) is one task on
// one thread, its products strided straight on the row layout (no transposes), so the results do not depend
// on which thread runs which task. Softmax is f32; Q/K/V/context may be bf16 (autocast).
//
// Saved for backward: probs [B, NH, T, T] f32 (after softmax, BEFORE dropout); the dropout mask is not stored
// (backward reads it off the dropped probabilities, recomputed from the Philox counters unless the caller
// keeps forward's copy: saved_pd below). Mask: mask[b, j] == 0 (key j padding) adds the most negative float
// to the score (HF's additive mask), so its probability is exactly 0. A fully masked row then softmaxes over
// equal -FLT_MAX scores, uniformly, as HF does. Keys past a sequence's last attended key (right padding) are
// skipped: the products run over the first L keys only (L rounded up to 32), and their probabilities are
// written as the exact zeros the mask would give. The dropout counter of probs[b, h, i, j] is ((b * NH + h) *
// T + i) * T + j, whatever is skipped.
#pragma once

#include <cstdint>

#include "core/tensor.h"
#include "kernels/dropout.h"

namespace ct::kernels {

struct AttentionDims {
  int64_t B = 0, T = 0, NH = 0, HS = 0;
  int64_t ld_qkv = 0;  // row stride (elements) of q, k, v (3 * NH * HS for fused QKV); 0 = NH * HS
  int64_t ld_ctx = 0;  // row stride (elements) of ctx / dctx; 0 = NH * HS
  // Dropout counters as if every sequence were drop_T long: probs[b, h, i, j] uses counter ((b * NH + h) *
  // drop_T + i) * drop_T + j. The varlen entry points set it to the padded length a packed batch replaces, so
  // a sequence drops exactly the units it would drop padded. 0 = T.
  int64_t drop_T = 0;
  // Sliding window (ModernBERT's local layers): query i attends to keys j with |i - j| <= window only, the
  // others masked like padding (probability exactly 0; backward then needs nothing more). 0 = global. The
  // products still span every key (O(T^2)); only the softmax rows see the band.
  int64_t window = 0;
};

// Forward. q, k, v: [B, T, *] rows of type dt (f32 or bf16) with row stride ld_qkv, head h at column h*HS.
// mask: [B, T] of 0/1 floats (null = attend everywhere). Writes (OVERWRITES) probs [B, NH, T, T] f32 and
// ctx [B, T, ld_ctx] of type dt. drop.p = attention_probs_dropout_prob (0 in eval); drop's counter space
// covers B*NH*T*T elements starting at drop.offset (with row streams, row_elems must be NH*T*T: one per
// sequence).
//
// saved_pd (optional, [B, NH, T, T] of dt): where forward writes the dropped probabilities that the context
// product multiplies, when they differ from probs (bf16, or dropout on); backward given the same buffer
// multiplies them again instead of recomputing them (a pass over [B, NH, T, T] and its Philox draws) and
// then OVERWRITES it (dS goes there). Null: a per-thread scratch, recomputed in backward.
void attention_forward(void* ctx, float* probs, const void* q, const void* k, const void* v,
                       const float* mask, const AttentionDims& d, DType dt, const DropoutSite& drop,
                       void* saved_pd = nullptr);

// Backward. dctx [B, T, ld_ctx] f32; q, k, v as in forward (type dt); probs, mask and drop exactly as forward
// saw them. ADDS (+=) into dq, dk, dv: f32 rows with row stride ld_qkv (e.g. slices of one fused dQKV [B, T,
// 3H]). Passing the mask lets backward skip the padded keys past each sequence's last attended one, as
// forward does (same result, less work); the overload without it computes over all T keys.
void attention_backward(float* dq, float* dk, float* dv, const float* dctx, const void* q, const void* k,
                        const void* v, const float* probs, const float* mask, const AttentionDims& d,
                        DType dt, const DropoutSite& drop, void* saved_pd = nullptr);
void attention_backward(float* dq, float* dk, float* dv, const float* dctx, const void* q, const void* k,
                        const void* v, const float* probs, const AttentionDims& d, DType dt,
                        const DropoutSite& drop);

// Varlen (packed) attention: sequence b's rows are rows [cu_seqlens[b], cu_seqlens[b + 1]) of q/k/v/ctx
// (B = d.B sequences laid end to end, no padding), and it attends over its own rows only. d.T is the padded
// length the batch replaces (every sequence no longer than it): it only keys the dropout counters, which
// equal the padded computation's for the same site (row streams: sequence b uses row_streams[b]). probs holds
// each sequence's [NH, L, L] block after the previous ones (varlen_probs_elems), saved_pd likewise in dt
// elements. Same overwrite/add contract as the padded forms; no mask (every row is a real token).
int64_t varlen_probs_elems(const int64_t* cu_seqlens, int64_t B, int64_t NH);
void attention_forward_varlen(void* ctx, float* probs, const void* q, const void* k, const void* v,
                              const int64_t* cu_seqlens, const AttentionDims& d, DType dt,
                              const DropoutSite& drop, void* saved_pd = nullptr);
void attention_backward_varlen(float* dq, float* dk, float* dv, const float* dctx, const void* q,
                               const void* k, const void* v, const float* probs, const int64_t* cu_seqlens,
                               const AttentionDims& d, DType dt, const DropoutSite& drop,
                               void* saved_pd = nullptr);

// Attention of selected query rows only, for a last layer whose output feeds a head that reads some rows
// (classification and multiple choice: each sequence's first token; a masked LM: its masked tokens): the
// other queries' rows change nothing downstream, so they are not computed. Keys and values are every row, as
// in the full forms. rows: n_rows ascending token rows (of the [B*T] padded or the packed layout). Padded
// (cu_seqlens null): keys masked by mask as the full forms do; packed: sequence b is rows [cu_seqlens[b],
// cu_seqlens[b + 1]), d.T the padded length. ctx_rows: [n_rows, ld_ctx] of type dt; probs_rows: [n_rows, NH,
// T] f32 (keys past a sequence's last attended one 0). The dropout units, operand roundings (bf16) and mask
// are those of the full forms' rows, so results equal theirs up to the order of the sums. Backward ADDS into
// dq (at the selected rows), dk and dv (every key row of their sequences), rows of stride ld_qkv. Loops, not
// matmuls: meant for a few rows per sequence.
void attention_rows_forward(void* ctx_rows, float* probs_rows, const void* q, const void* k, const void* v,
                            const float* mask, const int64_t* cu_seqlens, const int64_t* rows, int64_t n_rows,
                            const AttentionDims& d, DType dt, const DropoutSite& drop);
void attention_rows_backward(float* dq, float* dk, float* dv, const float* dctx_rows, const void* q,
                             const void* k, const void* v, const float* probs_rows, const float* mask,
                             const int64_t* cu_seqlens, const int64_t* rows, int64_t n_rows,
                             const AttentionDims& d, DType dt, const DropoutSite& drop);

// Plain-loop reference of both directions (double math, f32 operands, dense output ctx [B, T, NH*HS] and
// dense dq/dk/dv [B, T, NH*HS] ADDED into), for the tests.
void attention_forward_reference(float* ctx, float* probs, const float* q, const float* k, const float* v,
                                 const float* mask, const AttentionDims& d, const DropoutSite& drop);
void attention_backward_reference(float* dq, float* dk, float* dv, const float* dctx, const float* q,
                                  const float* k, const float* v, const float* probs, const AttentionDims& d,
                                  const DropoutSite& drop);

}  // namespace ct::kernels
