#include "model/param_layout.h"

#include <algorithm>

#include "core/error.h"
#include "kernels/activation.h"
#include "model/config_fields.h"
#include "model/modernbert.h"

namespace ct::model {

int64_t ParamLayout::index_at(int64_t offset) const {
  auto it = std::lower_bound(params.begin(), params.end(), offset,
                             [](const ParamInfo& p, int64_t off) { return p.offset < off; });
  if (it == params.end() || it->offset != offset) return -1;
  return it - params.begin();
}

std::vector<std::string> ParamLayout::head_param_names() const {
  std::vector<std::string> names;
  for (const auto& p : params)
    if (p.offset >= head.begin && p.offset < head.end) names.push_back(p.name);
  return names;
}

void validate_model_config(const ModelConfig& c) {
  CT_CHECK(
      c.model_type == "bert" || c.model_type == "distilbert" || c.is_roberta_like() || c.is_electra() ||
          c.is_modernbert() || c.is_deberta(),
      "model config: model_type '", c.model_type,
      "' is not supported (expected bert, distilbert, roberta, xlm-roberta, camembert, electra, modernbert "
      "or deberta-v2)");
  auto positive = [](int64_t v, const char* name) {
    CT_CHECK(v > 0, "model config: ", name, " must be > 0, got ", v);
  };
  positive(c.vocab_size, "vocab_size");
  positive(c.hidden_size, "hidden_size");
  positive(c.num_hidden_layers, "num_hidden_layers");
  positive(c.num_attention_heads, "num_attention_heads");
  positive(c.intermediate_size, "intermediate_size");
  positive(c.max_position_embeddings, "max_position_embeddings");
  positive(c.num_labels, "num_labels");
  CT_CHECK(c.hidden_size % c.num_attention_heads == 0, "model config: hidden_size ", c.hidden_size,
           " is not divisible by num_attention_heads ", c.num_attention_heads);
  if (!c.is_distilbert() && !c.is_modernbert() && !c.is_deberta())
    positive(c.type_vocab_size, "type_vocab_size");
  CT_CHECK(c.embedding_size >= 0, "model config: embedding_size must be > 0, got ", c.embedding_size);
  CT_CHECK(c.embedding_size == 0 || c.is_electra() || c.is_deberta(),
           "model config: embedding_size is ELECTRA's and DeBERTa's field, not ", c.model_type, "'s");
  CT_CHECK(!c.sinusoidal_pos_embds, "model config: sinusoidal_pos_embds=true is not supported");
  CT_CHECK(c.pad_token_id >= 0 && c.pad_token_id < c.vocab_size, "model config: pad_token_id ",
           c.pad_token_id, " outside [0, vocab_size ", c.vocab_size, ")");
  CT_CHECK(c.positions == PositionScheme::absolute || c.pad_token_id < c.max_position_embeddings,
           "model config: pad_token_id ", c.pad_token_id, " is the padding position, outside ",
           "max_position_embeddings ", c.max_position_embeddings);
  auto prob = [](double p, const char* name) {
    CT_CHECK(p >= 0.0 && p < 1.0, "model config: ", name, " must be in [0, 1), got ", p);
  };
  prob(c.hidden_dropout_prob, "hidden_dropout_prob");
  prob(c.attention_probs_dropout_prob, "attention_probs_dropout_prob");
  prob(c.qa_dropout, "qa_dropout");
  prob(c.seq_classif_dropout, "seq_classif_dropout");
  if (c.classifier_dropout >= 0.0) prob(c.classifier_dropout, "classifier_dropout");
  CT_CHECK(c.layer_norm_eps > 0.0, "model config: layer_norm_eps must be > 0, got ", c.layer_norm_eps);
  activation_field("model config", "hidden_act", c.hidden_act, false);
}

namespace {

// DebertaV2Embeddings, then the encoder's relative embeddings (see ParamLayout::rel_emb).
template <class Add>
void add_deberta_embeddings(const ModelConfig& c, ParamLayout& lay, Add& add) {
  const int64_t H = c.hidden_size, E = c.embedding_width();
  const std::string e = "deberta.embeddings.";
  lay.word_emb = add(e + "word_embeddings.weight", {c.vocab_size, E}, true);
  lay.pos_emb = -1;
  if (c.position_biased_input)
    lay.pos_emb = add(e + "position_embeddings.weight", {c.max_position_embeddings, E}, true);
  if (c.type_vocab_size > 0)
    lay.type_emb = add(e + "token_type_embeddings.weight", {c.type_vocab_size, E}, true);
  if (c.projects_embeddings()) lay.emb_proj_w = add(e + "embed_proj.weight", {H, E}, true);
  lay.emb_ln_w = add(e + "LayerNorm.weight", {H}, false);
  lay.emb_ln_b = add(e + "LayerNorm.bias", {H}, false);
  if (c.relative_attention) {
    lay.rel_emb = add("deberta.encoder.rel_embeddings.weight", {2 * c.relative_span(), H}, true);
    if (c.norm_rel_ebd) {
      lay.rel_ln_w = add("deberta.encoder.LayerNorm.weight", {H}, false);
      lay.rel_ln_b = add("deberta.encoder.LayerNorm.bias", {H}, false);
    }
  }
  lay.emb_end = lay.params.back().offset + lay.params.back().numel();
}

// ElectraForMultipleChoice's SequenceSummary as run here: the first token, projected to hidden_size, an
// activation the kernels have (or tanh).
void check_electra_summary(const ModelConfig& c) {
  const char* what = "model: ElectraForMultipleChoice with ";
  if (c.summary_type != "first")
    fail(what, "summary_type \"", c.summary_type, "\" is not supported (only \"first\")");
  if (!c.summary_use_proj) fail(what, "summary_use_proj false is not supported (only true)");
  if (c.summary_proj_to_labels)
    fail(what, "summary_proj_to_labels true is not supported (the summary projects to hidden_size)");
  if (c.summary_activation != "tanh") {
    try {
      if (kernels::activation_from_name(c.summary_activation) == kernels::Activation::silu)
        fail("silu");  // the encoders' heads are checked with the GELU forms and ReLU only
    } catch (const Error&) {
      fail(what, "summary_activation ",
           c.summary_activation.empty() ? std::string("null") : "\"" + c.summary_activation + "\"",
           " is not supported (expected gelu, gelu_new, gelu_pytorch_tanh, relu or tanh)");
    }
  }
}

}  // namespace

ParamLayout make_param_layout(const ModelConfig& c, HeadKind head) {
  validate_model_config(c);
  if (c.is_modernbert()) return make_modernbert_layout(c, head);
  const bool distil = c.is_distilbert();
  const int64_t H = c.hidden_size, I = c.intermediate_size, E = c.embedding_width();
  const std::string base = c.base_prefix();
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
  if (c.is_deberta()) {
    add_deberta_embeddings(c, lay, add);
    off = lay.emb_end;
  } else {
    lay.word_emb = add(base + "embeddings.word_embeddings.weight", {c.vocab_size, E}, true);
    lay.pos_emb = add(base + "embeddings.position_embeddings.weight", {c.max_position_embeddings, E}, true);
    if (!distil)
      lay.type_emb = add(base + "embeddings.token_type_embeddings.weight", {c.type_vocab_size, E}, true);
    lay.emb_ln_w = add(base + "embeddings.LayerNorm.weight", {E}, false);
    lay.emb_ln_b = add(base + "embeddings.LayerNorm.bias", {E}, false);
    if (c.projects_embeddings()) {
      lay.emb_proj_w = add(base + "embeddings_project.weight", {H, E}, true);
      lay.emb_proj_b = add(base + "embeddings_project.bias", {H}, false);
    }
    lay.emb_end = off;
  }

  for (int64_t l = 0; l < c.num_hidden_layers; ++l) {
    LayerOffsets lo;
    lo.begin = off;
    const std::string p = base + (distil ? "transformer.layer." : "encoder.layer.") + std::to_string(l) + ".";
    const char* proj = c.is_deberta() ? "_proj" : "";  // DeBERTa: query_proj, key_proj, value_proj
    const std::string q = distil ? p + "attention.q_lin" : p + "attention.self.query" + proj;
    const std::string k = distil ? p + "attention.k_lin" : p + "attention.self.key" + proj;
    const std::string v = distil ? p + "attention.v_lin" : p + "attention.self.value" + proj;
    lo.qkv_w = add(q + ".weight", {H, H}, true);
    add(k + ".weight", {H, H}, true);
    add(v + ".weight", {H, H}, true);
    lo.qkv_b = add(q + ".bias", {H}, false);
    add(k + ".bias", {H}, false);
    add(v + ".bias", {H}, false);
    if (c.is_deberta() && !c.share_att_key) {
      if (c.has_c2p()) {
        lo.pos_key_w = add(p + "attention.self.pos_key_proj.weight", {H, H}, true);
        lo.pos_key_b = add(p + "attention.self.pos_key_proj.bias", {H}, false);
      }
      if (c.has_p2c()) {
        lo.pos_query_w = add(p + "attention.self.pos_query_proj.weight", {H, H}, true);
        lo.pos_query_b = add(p + "attention.self.pos_query_proj.bias", {H}, false);
      }
    }
    const std::string ao = distil ? p + "attention.out_lin" : p + "attention.output.dense";
    lo.attn_out_w = add(ao + ".weight", {H, H}, true);
    lo.attn_out_b = add(ao + ".bias", {H}, false);
    const std::string ln1 = distil ? p + "sa_layer_norm" : p + "attention.output.LayerNorm";
    lo.ln1_w = add(ln1 + ".weight", {H}, false);
    lo.ln1_b = add(ln1 + ".bias", {H}, false);
    const std::string f1 = distil ? p + "ffn.lin1" : p + "intermediate.dense";
    lo.ffn_in_w = add(f1 + ".weight", {I, H}, true);
    lo.ffn_in_b = add(f1 + ".bias", {I}, false);
    const std::string f2 = distil ? p + "ffn.lin2" : p + "output.dense";
    lo.ffn_out_w = add(f2 + ".weight", {H, I}, true);
    lo.ffn_out_b = add(f2 + ".bias", {H}, false);
    const std::string ln2 = distil ? p + "output_layer_norm" : p + "output.LayerNorm";
    lo.ln2_w = add(ln2 + ".weight", {H}, false);
    lo.ln2_b = add(ln2 + ".bias", {H}, false);
    lo.end = off;
    lay.layers.push_back(lo);
  }

  // The head, under the family's HF names.
  lay.head_kind = head;
  HeadOffsets& h = lay.head;
  h.begin = off;
  auto dense = [&](const std::string& name, int64_t out) {
    h.dense_out = out;
    h.dense_w = add(name + ".weight", {out, H}, true);
    h.dense_b = add(name + ".bias", {out}, false);
  };
  auto out = [&](const std::string& name, int64_t n) {
    h.out_features = n;
    h.out_w = add(name + ".weight", {n, H}, true);
    h.out_b = add(name + ".bias", {n}, false);
  };
  // The pooler HF puts in the base model (BERT, RoBERTa), or what stands in for it.
  auto pooled = [&](int64_t n) {
    if (distil) {
      dense("pre_classifier", H);
      out("classifier", n);
    } else if (c.is_deberta()) {  // ContextPooler, outside the base model
      dense("pooler.dense", H);
      out("classifier", n);
    } else if (c.is_electra() && head == HeadKind::multiple_choice) {
      check_electra_summary(c);
      dense("sequence_summary.summary", H);
      out("classifier", n);
    } else if (c.is_electra()) {
      dense("classifier.dense", H);
      out("classifier.out_proj", n);
    } else if (c.is_roberta_like() && head == HeadKind::sequence_classification) {
      dense("classifier.dense", H);
      out("classifier.out_proj", n);
    } else {
      dense(base + "pooler.dense", H);
      out("classifier", n);
    }
  };
  switch (head) {
    case HeadKind::span:
      out("qa_outputs", 2);
      lay.qa_w = h.out_w;
      lay.qa_b = h.out_b;
      break;
    case HeadKind::sequence_classification:
      pooled(c.num_labels);
      break;
    case HeadKind::multiple_choice:
      pooled(1);
      break;
    case HeadKind::token_classification:
      out("classifier", c.num_labels);
      break;
    case HeadKind::masked_lm: {
      if (c.is_deberta() && c.projects_embeddings())
        fail("model: DebertaV2ForMaskedLM with embedding_size ", E, " != hidden_size ", H,
             " (its decoder multiplies hidden states by the word embeddings) is not supported");
      // The decoder weight is the word-embedding table itself (tied), so it has no slab entry.
      std::string transform, norm, bias;
      int64_t width = H;
      if (distil) {
        transform = "vocab_transform", norm = "vocab_layer_norm", bias = "vocab_projector.bias";
      } else if (c.is_roberta_like()) {
        transform = "lm_head.dense", norm = "lm_head.layer_norm", bias = "lm_head.bias";
      } else if (c.is_deberta() && !c.legacy) {
        transform = "lm_predictions.lm_head.dense", norm = "lm_predictions.lm_head.LayerNorm";
        bias = "lm_predictions.lm_head.bias";
      } else if (c.is_electra()) {
        transform = "generator_predictions.dense", norm = "generator_predictions.LayerNorm";
        bias = "generator_lm_head.bias";
        width = E;
      } else {
        transform = "cls.predictions.transform.dense", norm = "cls.predictions.transform.LayerNorm";
        bias = "cls.predictions.bias";
      }
      dense(transform, width);
      h.norm_w = add(norm + ".weight", {width}, false);
      h.norm_b = add(norm + ".bias", {width}, false);
      h.out_features = c.vocab_size;
      h.out_b = add(bias, {c.vocab_size}, false);
      break;
    }
  }
  h.end = off;
  lay.qa_begin = h.begin;
  lay.qa_end = h.end;
  lay.total = off;
  return lay;
}

}  // namespace ct::model
