// ModernBERT (model_type "modernbert") as transformers' modeling_modernbert.py computes it, inside the
// encoder engine: the parameter layout under HF names (modernbert_layout.cpp), the body's forward and
// backward as EncoderModel members (modernbert_body.cpp: pre-norm layers, fused Wqkv, rotary q/k, global
// attention every global_attn_every_n_layers-th layer and a local_attention / 2 band elsewhere, computed in
// query blocks so long inputs cost O(T x window) there, GeGLU MLP, final norm) and its heads
// (heads/modernbert_heads.cpp: the prediction head dense -> act -> norm, then the classifier or the tied
// decoder). EncoderModel dispatches here on config.is_modernbert(); the BERT-family code paths are untouched.
#pragma once

#include <memory>

#include "model/config.h"
#include "model/param_layout.h"

namespace ct::model {

class Head;

// Slab (HF named_parameters order):
//   model.embeddings.tok_embeddings.weight [V, H], model.embeddings.norm.weight [H]
//   per layer l: [attn_norm.weight (l > 0)], attn.Wqkv.weight [3H, H], attn.Wo.weight [H, H],
//                mlp_norm.weight, mlp.Wi.weight [2I, H], mlp.Wo.weight [H, I]
//   model.final_norm.weight
//   head.dense.weight [H, H], head.norm.weight, then classifier.{weight,bias} [C, H], [C] (QA: C = 2,
//   multiple choice: 1) or
//   decoder.bias [V]
// Norms have no bias and the linears none (the configs refuse the bias options). LayerOffsets maps
// ln1 = attn_norm (-1 on layer 0: the identity), ln2 = mlp_norm, qkv = Wqkv, attn_out = attn.Wo,
// ffn_in = mlp.Wi, ffn_out = mlp.Wo; every bias offset is -1.
ParamLayout make_modernbert_layout(const ModelConfig& config, HeadKind head);

// Question answering, sequence classification and multiple choice (cls or mean pooling), token
// classification, masked LM.
std::unique_ptr<Head> make_modernbert_head(HeadKind head);

}  // namespace ct::model
