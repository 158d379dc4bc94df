// The parameter slab of a BERT / DistilBERT QA model: every tensor by HF name with its offset, in forward
// order (embeddings, layer 0 .. L-1, qa_outputs), so backward finishes parameters in reverse slab order and
// DDP buckets are contiguous ranges. Within a layer the query/key/value weights sit back to back (then their
// three biases) so the fused QKV projection is one gemm on a [3H, H] weight view while names and shapes stay
// HF's.
#pragma once

#include <cstdint>
#include <vector>

#include "model/config.h"
#include "model/param_info.h"

namespace ct::model {

// Slab offsets of one encoder layer's tensors (HF names in comments: BERT / DistilBERT).
struct LayerOffsets {
  int64_t qkv_w = 0;  // query|key|value.weight / q_lin|k_lin|v_lin.weight, [3H, H] contiguous
  int64_t qkv_b = 0;  // the three biases, [3H]
  int64_t attn_out_w = 0, attn_out_b = 0;  // attention.output.dense / attention.out_lin
  int64_t ln1_w = 0, ln1_b = 0;            // attention.output.LayerNorm / sa_layer_norm
  int64_t ffn_in_w = 0, ffn_in_b = 0;      // intermediate.dense / ffn.lin1
  int64_t ffn_out_w = 0, ffn_out_b = 0;    // output.dense / ffn.lin2
  int64_t ln2_w = 0, ln2_b = 0;            // output.LayerNorm / output_layer_norm
  int64_t begin = 0, end = 0;              // the layer's slab range
};

struct ParamLayout {
  std::vector<ParamInfo> params;                     // slab order
  int64_t word_emb = 0, pos_emb = 0, type_emb = -1;  // type_emb -1: none (DistilBERT)
  int64_t emb_ln_w = 0, emb_ln_b = 0;
  int64_t emb_begin = 0, emb_end = 0;
  std::vector<LayerOffsets> layers;
  int64_t qa_w = 0, qa_b = 0;  // qa_outputs [2, H], [2]
  int64_t qa_begin = 0, qa_end = 0;
  int64_t total = 0;  // slab size in floats

  // Index into params of the tensor starting at `offset`; -1 when none does.
  int64_t index_at(int64_t offset) const;
};

// Throws ct::Error naming the field when the config cannot describe a model we run (sizes <= 0, hidden not
// divisible by heads, unknown model_type, sinusoidal positions, an activation other than gelu/relu forms).
void validate_model_config(const ModelConfig& config);

ParamLayout make_param_layout(const ModelConfig& config);

}  // namespace ct::model
