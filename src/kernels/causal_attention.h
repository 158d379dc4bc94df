// Causal self-attention for decoders, flash-style: softmax(scale * Q K^T + causal mask) V computed over tiles
// of 64 queries x 64 keys with a running max and sum per row, so no [T, T] probability matrix ever exists
// (forward keeps one log-sum-exp per row and head; backward recomputes each tile's probabilities from it).
// Only tiles on or below the diagonal are visited, and with a sliding window only those that reach into the
// window.
//
// Grouped-query attention: NH query heads share NKV key/value heads (head h reads kv head h / (NH / NKV)),
// and a task holds the whole group's queries for a tile, so each K/V tile is read once for its group and no
// K/V is copied per query head. Sequences are spans of rows (seq_start, seq_len): a padded batch gives b * T
// and its real length, a packed batch its cu_seqlens; every sequence attends only to itself, keys at or
// before the query (and, with a window W, after query - W: W keys including itself, as transformers' sliding
// mask). Rows outside every span are neither read as keys nor written.
//
// Each task is one (sequence, kv head, tile) on one thread, its tile products run by oneDNN on that thread in
// fixed 64-row shapes (zero-padded copies), and backward computes dQ and dK/dV in two passes that each own
// their rows, so results do not depend on the thread count. Arithmetic is f32 (bf16 operands are widened).
#pragma once

#include <cstdint>

#include "core/tensor.h"

namespace ct::kernels {

struct CausalAttentionDims {
  int64_t n_seqs = 0;       // spans in seq_start / seq_len
  int64_t NH = 0, NKV = 0;  // query heads, key/value heads (NH % NKV == 0)
  int64_t HS = 0;           // head size
  int64_t ld_q = 0;         // row stride of q, out, dq, dout (elements); 0 = NH * HS
  int64_t ld_kv = 0;        // row stride of k, v, dk, dv; 0 = NKV * HS
  int64_t window = 0;       // sliding window W (keys including the query's own); 0 = full causal
  float scale = 0.0f;       // score scale; 0 = 1 / sqrt(HS) (Gemma 3: query_pre_attn_scalar^-0.5)
};

// Forward. q: rows of NH heads (head h at column h * HS), k and v: rows of NKV heads, of type dt. Writes
// (OVERWRITES) out (rows like q, type dt) and lse ([row, NH] f32: lse[row * NH + h], the log of the row's
// softmax denominator after the scale), at the rows of the spans only.
void causal_attention_forward(void* out, float* lse, const void* q, const void* k, const void* v,
                              const int64_t* seq_start, const int64_t* seq_len, const CausalAttentionDims& d,
                              DType dt);

// Backward. dout: f32 rows like q; q, k, v, out and lse as forward saw or wrote them. ADDS (+=) into dq (rows
// like q) and dk, dv (rows like k), f32.
void causal_attention_backward(float* dq, float* dk, float* dv, const float* dout, const void* q,
                               const void* k, const void* v, const void* out, const float* lse,
                               const int64_t* seq_start, const int64_t* seq_len, const CausalAttentionDims& d,
                               DType dt);

// Plain-loop reference of both directions over f32 rows (double math, dense softmax per row): what the tests
// compare against. Same layouts and contracts as above (out overwritten, grads added).
void causal_attention_forward_reference(float* out, const float* q, const float* k, const float* v,
                                        const int64_t* seq_start, const int64_t* seq_len,
                                        const CausalAttentionDims& d);
void causal_attention_backward_reference(float* dq, float* dk, float* dv, const float* dout, const float* q,
                                         const float* k, const float* v, const int64_t* seq_start,
                                         const int64_t* seq_len, const CausalAttentionDims& d);

}  // namespace ct::kernels
