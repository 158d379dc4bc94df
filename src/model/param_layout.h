// The parameter slab of an encoder with one task head: every tensor by HF name with its offset, in forward
// order (embeddings, [embeddings_project], layer 0 .. L-1, the head), so backward finishes parameters in
// reverse slab order and DDP buckets are contiguous ranges. Within a layer the query/key/value weights sit
// back to back (then their three biases) so the fused QKV projection is one gemm on a [3H, H] weight view
// while names and shapes stay HF's. Names follow the family (bert., roberta., electra., distilbert.).
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
  // DeBERTa with share_att_key false: pos_key_proj (c2p) / pos_query_proj (p2c), [H, H] and [H]; -1: none.
  int64_t pos_key_w = -1, pos_key_b = -1, pos_query_w = -1, pos_query_b = -1;
  int64_t begin = 0, end = 0;  // the layer's slab range
};

// Slab offsets of the head's tensors; -1 where the head has none. What each slot is, per head and family:
//   dense:  BERT/RoBERTa pooler.dense, DistilBERT pre_classifier, RoBERTa/ELECTRA classifier.dense, the MLM
//           transform (cls.predictions.transform.dense, lm_head.dense, vocab_transform,
//           generator_predictions.dense)
//   norm:   the MLM transform's LayerNorm
//   out:    qa_outputs, classifier, classifier.out_proj; MLM: out_w -1 (the decoder is tied to the word
//           embeddings), out_b the decoder bias [V]
struct HeadOffsets {
  int64_t dense_w = -1, dense_b = -1;
  int64_t norm_w = -1, norm_b = -1;
  int64_t out_w = -1, out_b = -1;
  int64_t out_features = 0;  // rows of out_w (2 for QA, num_labels, 1 for multiple choice, V for MLM)
  int64_t dense_out = 0;     // rows of dense_w (H; ELECTRA's generator: embedding_size)
  int64_t begin = 0, end = 0;
};

struct ParamLayout {
  std::vector<ParamInfo> params;                     // slab order
  int64_t word_emb = 0, pos_emb = 0, type_emb = -1;  // type_emb -1: none (DistilBERT)
  int64_t emb_ln_w = 0, emb_ln_b = 0;
  int64_t emb_proj_w = -1, emb_proj_b = -1;  // ELECTRA's embeddings_project [H, E], [H]; -1: none
  int64_t emb_begin = 0, emb_end = 0;        // embeddings, and the projection when there is one
  int64_t final_norm_w = -1;                 // ModernBERT's model.final_norm (model/modernbert_layout.cpp)
  // DeBERTa (-1 elsewhere): embeddings.embed_proj [H, E] sits in emb_proj_w (no bias); the encoder's
  // rel_embeddings [2 span, H] and their LayerNorm follow the embeddings (emb_end covers them: every layer
  // reads them, so their gradient is final after layer 0's backward).
  int64_t rel_emb = -1, rel_ln_w = -1, rel_ln_b = -1;
  std::vector<LayerOffsets> layers;
  HeadKind head_kind = HeadKind::span;
  HeadOffsets head;
  int64_t qa_w = -1, qa_b = -1;      // span head: qa_outputs [2, H], [2] (= head.out_w / out_b)
  int64_t qa_begin = 0, qa_end = 0;  // the head's slab range (= head.begin / end), whatever the head
  int64_t total = 0;                 // slab size in floats

  // Index into params of the tensor starting at `offset`; -1 when none does.
  int64_t index_at(int64_t offset) const;
  // Names of the head's parameters (what a checkpoint of another task leaves to initialize fresh).
  std::vector<std::string> head_param_names() const;
};

// Throws ct::Error naming the field when the config cannot describe a model we run (sizes <= 0, hidden not
// divisible by heads, unknown model_type, sinusoidal positions, an activation other than gelu/relu forms).
void validate_model_config(const ModelConfig& config);

// Throws when the family has no such head here (ELECTRA's multiple choice with a SequenceSummary other than
// its default's shape).
ParamLayout make_param_layout(const ModelConfig& config, HeadKind head = HeadKind::span);

}  // namespace ct::model
