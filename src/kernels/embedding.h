// BERT/DistilBERT input embeddings: word + position (+ token type) gather-sum, and its backward as a
// deterministic scatter-add into the tables (each thread owns a slice of channels and walks tokens in order,
// so the sums do not depend on thread count or scheduling). Position ids are 0..T-1 (BERT's default with no
// past) unless given per token (RoBERTa's count of the non-pad tokens so far, offset by padding_idx).
#pragma once

#include <cstdint>

namespace ct::kernels {

// out[b, t, :] = wte[ids[b, t]] + wpe[pos(b, t)] + (tte ? tte[type_ids[b, t]] : 0)   (OVERWRITES out
// [B, T, C]); pos(b, t) = pos_ids[b, t] when pos_ids is given, else t. Throws ct::Error naming the token
// position if an id is outside [0, V), a type id outside [0, TV) or a position outside [0, P)
// (max_position_embeddings). type_ids may be null (DistilBERT, or all zeros with tte given).
void embedding_forward(float* out, const int32_t* ids, const int32_t* type_ids, const float* wte,
                       const float* wpe, const float* tte, int64_t B, int64_t T, int64_t C, int64_t V,
                       int64_t P, int64_t TV, const int32_t* pos_ids = nullptr);

// ADDS (+=) dout rows into dwte[ids], dwpe[t], dtte[type_ids] (dtte / type_ids may be null; dwte/dwpe may be
// null to skip). Indices are trusted here (forward validated them).
void embedding_backward(float* dwte, float* dwpe, float* dtte, const float* dout, const int32_t* ids,
                        const int32_t* type_ids, int64_t B, int64_t T, int64_t C,
                        const int32_t* pos_ids = nullptr);

}  // namespace ct::kernels
