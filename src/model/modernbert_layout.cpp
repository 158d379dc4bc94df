// ModernBERT's parameter slab under HF names (see model/modernbert.h for the order).
#include <string>

#include "core/error.h"
#include "model/modernbert.h"

namespace ct::model {

ParamLayout make_modernbert_layout(const ModelConfig& c, HeadKind head) {
  // What the reader checks, again for configs built in code (the bench's).
  CT_CHECK(c.global_attn_every_n_layers > 0, "model config: global_attn_every_n_layers must be > 0, got ",
           c.global_attn_every_n_layers);
  CT_CHECK(c.local_attention > 0 && c.local_attention % 2 == 0,
           "model config: local_attention must be a positive even window, got ", c.local_attention);
  CT_CHECK(c.head_dim() % 2 == 0, "model config: rotary embeddings need an even head size, got ",
           c.head_dim());
  CT_CHECK(c.classifier_pooling == "cls" || c.classifier_pooling == "mean",
           "model config: classifier_pooling must be cls or mean, got ", c.classifier_pooling);
  const int64_t H = c.hidden_size, I = c.intermediate_size;
  ParamLayout lay;
  int64_t off = 0;
  auto add = [&](const std::string& name, Shape shape, bool decay) {
    ParamInfo p;
    p.name = name;
    p.shape = std::move(shape);
    p.offset = off;
    p.decay = decay;
    off += p.numel();
    lay.params.push_back(std::move(p));
    return lay.params.back().offset;
  };
  lay.emb_begin = off;
  lay.word_emb = add("model.embeddings.tok_embeddings.weight", {c.vocab_size, H}, true);
  lay.pos_emb = -1;
  lay.emb_ln_w = add("model.embeddings.norm.weight", {H}, false);
  lay.emb_ln_b = -1;
  lay.emb_end = off;
  for (int64_t l = 0; l < c.num_hidden_layers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    LayerOffsets lo;
    lo.begin = off;
    lo.qkv_b = lo.attn_out_b = lo.ln1_b = lo.ffn_in_b = lo.ffn_out_b = lo.ln2_b = -1;
    lo.ln1_w = l == 0 ? -1 : add(p + "attn_norm.weight", {H}, false);
    lo.qkv_w = add(p + "attn.Wqkv.weight", {3 * H, H}, true);
    lo.attn_out_w = add(p + "attn.Wo.weight", {H, H}, true);
    lo.ln2_w = add(p + "mlp_norm.weight", {H}, false);
    lo.ffn_in_w = add(p + "mlp.Wi.weight", {2 * I, H}, true);
    lo.ffn_out_w = add(p + "mlp.Wo.weight", {H, I}, true);
    lo.end = off;
    lay.layers.push_back(lo);
  }
  lay.final_norm_w = add("model.final_norm.weight", {H}, false);

  lay.head_kind = head;
  HeadOffsets& h = lay.head;
  h.begin = off;
  h.dense_out = H;
  h.dense_w = add("head.dense.weight", {H, H}, true);
  h.norm_w = add("head.norm.weight", {H}, false);
  if (head == HeadKind::masked_lm) {
    h.out_features = c.vocab_size;
    h.out_b = add("decoder.bias", {c.vocab_size}, false);
  } else {
    // QA: start and end logits; multiple choice: one per choice
    h.out_features = head == HeadKind::span ? 2 : head == HeadKind::multiple_choice ? 1 : c.num_labels;
    h.out_w = add("classifier.weight", {h.out_features, H}, true);
    h.out_b = add("classifier.bias", {h.out_features}, false);
  }
  if (head == HeadKind::span) {
    lay.qa_w = h.out_w;
    lay.qa_b = h.out_b;
  }
  h.end = off;
  lay.qa_begin = h.begin;
  lay.qa_end = h.end;
  lay.total = off;
  return lay;
}

}  // namespace ct::model
