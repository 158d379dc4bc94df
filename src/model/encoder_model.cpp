// The encoder body: embeddings (absolute or RoBERTa positions, ELECTRA's projection), post-LN layers, the
// head on the final hidden state, and the backward of all three.
#include "model/encoder_model.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "core/error.h"
#include "core/log.h"
#include "core/rng.h"
#include "kernels/activation.h"
#include "kernels/attention.h"
#include "kernels/cpu_features.h"
#include "kernels/dropout.h"
#include "kernels/embedding.h"
#include "kernels/gemm.h"
#include "kernels/layernorm.h"
#include "kernels/linear.h"
#include "kernels/normal_init.h"
#include "model/flops.h"
#include "model/head.h"
#include "model/model_ops.h"
#include "model/modernbert.h"

namespace ct::model {

namespace {

// Activations of one encoder layer kept for backward. Matmul inputs (x, qkv, ctx, h1, act) are in the run
// precision ("dt"); what f32 ops need in backward (layer-norm inputs, the pre-activation, probs) is f32.
struct LayerActs {
  char* x = nullptr;       // [N, H] layer input
  char* qkv = nullptr;     // [N, 3H]
  float* probs = nullptr;  // [B, NH, T, T] softmax before dropout
  char* pd = nullptr;     // [B, NH, T, T] after dropout, run precision (training, when it differs from probs)
  char* ctx = nullptr;    // [N, H]
  float* res1 = nullptr;  // [N, H] attention output + residual (LN1 input)
  float* mean1 = nullptr;
  float* rstd1 = nullptr;
  char* h1 = nullptr;     // [N, H] LN1 output
  char* inter = nullptr;  // [N, I] pre-activation, run precision (bf16 as autocast keeps a Linear's output)
  char* act = nullptr;    // [N, I] activation output
  float* res2 = nullptr;  // [N, H] FFN output + residual (LN2 input)
  float* mean2 = nullptr;
  float* rstd2 = nullptr;
};

}  // namespace

struct EncoderModel::Buffers {
  int64_t B = 0, T = 0;
  int64_t cap_tokens = 0, cap_probs = 0;  // allocated rows and attention-probability elements per layer
  int64_t cap_rows = 0;                   // batch rows B the buffers were made for
  bool all_layers = true;  // false: layer 0's activations and two hidden-state slots only (inference)
  int64_t bytes = 0;
  std::vector<std::shared_ptr<void>> owners;
  std::vector<LayerActs> layers;  // L + 1: entry L holds only x (the final hidden state)
  float* emb_sum = nullptr;       // [N, E] word + position + type
  float* emb_mean = nullptr;
  float* emb_rstd = nullptr;
  float* emb_out =
      nullptr;  // [N, E] ELECTRA: embeddings after LayerNorm and dropout (f32), projected to X(0)
  char* emb_out_mm = nullptr;    // the same as the projection's operand (run precision)
  float* demb = nullptr;         // [N, E] ELECTRA: gradient of emb_out
  float* demb_sum = nullptr;     // [N, E] ELECTRA: gradient of emb_sum
  float* mask = nullptr;         // [B, T] 0/1
  int64_t N = 0;                 // token rows of the last forward
  std::vector<int64_t> cu;       // packed: sequence b is rows [cu[b], cu[b + 1]); empty when padded
  std::vector<int64_t> row_pos;  // packed: token row r's row b * T + t in the padded layout (its dropout)
  // Scratch shared by forward (as temporaries) and backward (as gradients).
  float *dx = nullptr, *dres = nullptr, *dctx = nullptr, *dact = nullptr, *dinter = nullptr, *dqkv = nullptr;
  bf16 *dres_b = nullptr, *dinter_b = nullptr, *dqkv_b = nullptr;

  // The last layer when the head reads only some rows (head_rows non-empty: each sequence's first token for
  // classification, the masked tokens for a masked LM): that layer runs its queries, projections and FFN on
  // those rows alone, compacted ([R, H]; the layer's activation buffers hold them in their first R rows), and
  // scatters its output into the final hidden state's rows.
  std::vector<int64_t> head_rows;  // token rows the head reads, ascending
  std::vector<int64_t> head_pos;   // their rows in the padded layout (dropout counters)
  std::vector<float> head_in, head_out, head_probs, head_dx;
  std::vector<bf16> head_out_b;

  // What the last forward saw, for backward.
  bool have_forward = false;
  bool kept = false;  // the last forward kept every layer's activations
  bool have_loss = false;
  bool has_mask = false;
  StepOptions opts;
  std::vector<int32_t> ids, type_ids, pos_ids;  // pos_ids: RoBERTa's position ids (empty: 0..T-1)

  template <class T>
  T* alloc(int64_t n) {
    auto p = aligned_alloc_shared(n * static_cast<int64_t>(sizeof(T)));
    owners.push_back(p);
    bytes += n * static_cast<int64_t>(sizeof(T));
    return static_cast<T*>(p.get());
  }
  char* alloc_dt(int64_t n, DType dt) { return alloc<char>(n * dtype_size(dt)); }
};

EncoderModel::EncoderModel(const ModelConfig& config, HeadKind head, Precision precision, float* grad_slab)
    : config_(config),
      layout_(make_param_layout(config, head)),
      precision_(precision),
      word_grad_rows_(config.vocab_size, /*all=*/true) {
  switch (head) {
    case HeadKind::span:
      head_ = make_span_head();
      break;
    case HeadKind::sequence_classification:
    case HeadKind::multiple_choice:
      head_ = make_sequence_head(head);
      break;
    case HeadKind::token_classification:
      head_ = make_token_classification_head();
      break;
    case HeadKind::masked_lm:
      head_ = make_masked_lm_head();
      break;
  }
  if (config.is_modernbert()) head_ = make_modernbert_head(head);
  params_owner_ = aligned_alloc_shared(layout_.total * 4);
  params_ = static_cast<float*>(params_owner_.get());
  grads_ = grad_slab;  // else grads_data() allocates one when a backward first needs it
  if (precision_ == Precision::bf16) set_precision(Precision::bf16);
}

void EncoderModel::set_precision(Precision precision) {
  precision_ = precision;
  if (precision_ == Precision::bf16 && !weights_bf16_) {
    weights_bf16_owner_ = aligned_alloc_shared(layout_.total * 2);
    weights_bf16_ = static_cast<bf16*>(weights_bf16_owner_.get());
  }
  buf_.reset();  // activations are laid out in the run precision
  mb_.reset();
  deberta_.reset();
  weights_dirty_ = true;
}

Precision resolve_precision(bool bf16_requested) {
  if (!bf16_requested) return Precision::f32;
  if (kernels::cpu_has_fast_bf16()) return Precision::bf16;
  const char* env = std::getenv("CORETRAIN_BF16_EMULATE");
  const bool emulate = env && std::string(env) == "1";
  static std::once_flag warned;
  std::call_once(warned, [emulate] {
    if (emulate)
      log::warn("--bf16: this CPU has neither AVX512-BF16 nor AMX (oneDNN ISA ", kernels::cpu_isa_name(),
                "); CORETRAIN_BF16_EMULATE=1: running bf16 arithmetic on f32 units (slower than f32)");
    else
      log::warn("--bf16: this CPU has neither AVX512-BF16 nor AMX (oneDNN ISA ", kernels::cpu_isa_name(),
                "); running f32 instead of emulating bf16 slowly (CORETRAIN_BF16_EMULATE=1 emulates it)");
  });
  return emulate ? Precision::bf16 : Precision::f32;
}

EncoderModel::~EncoderModel() = default;

void EncoderModel::use_external_weights(float* params, bf16* weights_bf16) {
  CT_CHECK(params, "use_external_weights: no parameter storage");
  CT_CHECK(precision_ != Precision::bf16 || weights_bf16,
           "use_external_weights: a bf16 model needs bf16 copies");
  params_ = params;
  params_owner_.reset();
  if (precision_ == Precision::bf16) {
    weights_bf16_ = weights_bf16;
    weights_bf16_owner_.reset();
    weights_dirty_ = false;  // the caller wrote every copy
  }
}

float* EncoderModel::params_data() {
  weights_dirty_ = true;
  return params_;
}

void EncoderModel::init_weights(uint64_t seed) {
  init_weights(seed, "");
}

void EncoderModel::init_weights(uint64_t seed, const std::string& prefix) {
  init_weights_if(seed, [&](const std::string& name) { return name.compare(0, prefix.size(), prefix) == 0; });
}

void EncoderModel::init_weights(uint64_t seed, const std::vector<std::string>& names) {
  init_weights_if(seed, [&](const std::string& name) {
    return std::find(names.begin(), names.end(), name) != names.end();
  });
}

void EncoderModel::init_weights_if(uint64_t seed,
                                   const std::function<bool(const std::string&)>& selected_name) {
  if (config_.is_modernbert()) return init_weights_modernbert(seed, selected_name);
  const float stdev = static_cast<float>(config_.initializer_range);
  uint64_t counter = 0;  // Generator words consumed so far: each normal() takes four
  for (const ParamInfo& p : layout_.params) {
    const bool is_ln =
        p.name.find("LayerNorm") != std::string::npos || p.name.find("layer_norm") != std::string::npos;
    const bool is_bias = p.name.size() >= 5 && p.name.compare(p.name.size() - 5, 5, ".bias") == 0;
    const bool random = !is_ln && !is_bias;
    const int64_t n = p.numel();
    const bool selected = selected_name(p.name);
    if (selected) {
      float* w = params_ + p.offset;
      if (random) {
        constexpr int64_t kChunk = 4096;
        const int64_t chunks = (n + kChunk - 1) / kChunk;
#pragma omp parallel for schedule(static)
        for (int64_t c = 0; c < chunks; ++c) {
          const int64_t e = std::min(n, (c + 1) * kChunk);
          kernels::normal_init(w + c * kChunk, e - c * kChunk, seed,
                               counter + static_cast<uint64_t>(c * kChunk) * 4, stdev);
        }
        // nn.Embedding(padding_idx): the padding row starts at zero (RoBERTa's positions have one too).
        const int64_t E = config_.embedding_width();
        if (p.offset == layout_.word_emb ||
            (p.offset == layout_.pos_emb && config_.positions == PositionScheme::after_padding_idx))
          std::memset(w + config_.pad_token_id * E, 0, static_cast<size_t>(E) * sizeof(float));
      } else {
        const float v = (is_ln && !is_bias) ? 1.0f : 0.0f;
        for (int64_t i = 0; i < n; ++i) w[i] = v;
      }
    }
    if (random) counter += static_cast<uint64_t>(n) * 4;
  }
  weights_dirty_ = true;
}

const void* EncoderModel::weight(int64_t offset) const {
  if (precision_ == Precision::bf16) return weights_bf16_ + offset;
  return params_ + offset;
}

void EncoderModel::refresh_low_precision_weights() {
  weights_dirty_ = false;
  if (precision_ != Precision::bf16) return;
  if (config_.is_modernbert()) {  // every weight but the norms is a matmul operand
    to_bf16(weights_bf16_, params_, layout_.total);
    return;
  }
  const int64_t H = config_.hidden_size, I = config_.intermediate_size;
  auto conv = [&](int64_t off, int64_t n) { to_bf16(weights_bf16_ + off, params_ + off, n); };
  for (const LayerOffsets& lo : layout_.layers) {
    conv(lo.qkv_w, 3 * H * H);
    conv(lo.attn_out_w, H * H);
    conv(lo.ffn_in_w, I * H);
    conv(lo.ffn_out_w, H * I);
    if (lo.pos_key_w >= 0) conv(lo.pos_key_w, H * H);  // DeBERTa without share_att_key
    if (lo.pos_query_w >= 0) conv(lo.pos_query_w, H * H);
  }
  const HeadOffsets& h = layout_.head;
  if (h.dense_w >= 0) conv(h.dense_w, h.dense_out * H);
  if (h.out_w >= 0) conv(h.out_w, h.out_features * H);
  if (layout_.emb_proj_w >= 0) conv(layout_.emb_proj_w, H * config_.embedding_width());
  // A tied decoder reads the word embeddings as its weight.
  if (layout_.head_kind == HeadKind::masked_lm)
    conv(layout_.word_emb, config_.vocab_size * config_.embedding_width());
}

kernels::RowFlags EncoderModel::word_embedding_rows(const RowSet& rows) const {
  CT_CHECK(rows.rows() == config_.vocab_size, "word embedding rows: a set of ", rows.rows(),
           " rows for a vocabulary of ", config_.vocab_size);
  return {layout_.word_emb, config_.vocab_size, config_.embedding_width(),
          rows.all() ? nullptr : rows.flags()};
}

void EncoderModel::zero_word_grad() {
  const int64_t E = config_.embedding_width();
  float* g = grads_ + layout_.word_emb;
  if (word_grad_rows_.all())
    zero_f32(g, config_.vocab_size * E);
  else
    for (int32_t r : word_grad_rows_.list()) zero_f32(g + static_cast<int64_t>(r) * E, E);
  word_grad_rows_.clear();
}

void EncoderModel::note_word_grad(const int32_t* ids, int64_t n) {
  if (layout_.head_kind == HeadKind::masked_lm)
    word_grad_rows_.add_all();
  else
    word_grad_rows_.add(ids, n);
}

const std::vector<float>& EncoderModel::logits() const {
  return head_->logits();
}

int64_t EncoderModel::activation_bytes() const {
  if (config_.is_modernbert()) return modernbert_activation_bytes();
  if (deberta_) return deberta_bytes();
  return buf_ ? buf_->bytes : 0;
}

void EncoderModel::ensure_buffers(int64_t B, int64_t T, int64_t tokens, int64_t probs_elems,
                                  bool all_layers) {
  // Reused while big enough: packed batches change their token count every step.
  if (buf_ && buf_->cap_tokens >= tokens && buf_->cap_probs >= probs_elems && buf_->cap_rows >= B &&
      (buf_->all_layers || !all_layers)) {
    buf_->B = B;
    buf_->T = T;
    return;
  }
  if (buf_) {  // grow to cover both the old and the new batch, so alternating shapes settle
    tokens = std::max(tokens, buf_->cap_tokens);
    probs_elems = std::max(probs_elems, buf_->cap_probs);
    B = std::max<int64_t>(B, buf_->cap_rows);
  }
  // Headroom (model_ops.h): an MRPC-shaped glue run, BERT-base, faulted ~150k pages a step without it.
  tokens = with_headroom(tokens, B * T);
  probs_elems = with_headroom(probs_elems, B * config_.num_attention_heads * T * T);
  buf_.reset();  // free the old set first: peak memory is one set
  auto b = std::make_unique<Buffers>();
  b->B = B;
  b->T = T;
  b->cap_tokens = tokens;
  b->cap_probs = probs_elems;
  b->cap_rows = B;
  b->all_layers = all_layers;
  const DType dt = precision_ == Precision::bf16 ? DType::bf16 : DType::f32;
  const int64_t N = tokens, H = config_.hidden_size, I = config_.intermediate_size;
  const int64_t L = config_.num_hidden_layers;
  b->layers.resize(L + 1);
  for (int64_t l = 0; l <= L; ++l) {
    LayerActs& a = b->layers[l];
    if (!all_layers && l >= 2) break;  // inference: hidden states alternate between slots 0 and 1
    a.x = b->alloc_dt(N * H, dt);
    if (l == L || (!all_layers && l >= 1)) break;
    a.qkv = b->alloc_dt(N * 3 * H, dt);
    a.probs = b->alloc<float>(probs_elems);
    // Forward's dropped probabilities, which backward multiplies again: keeping them costs half (bf16) or all
    // (f32) of probs again, and saves backward a pass over [B, NH, T, T] that redraws every Philox word.
    if (all_layers && (dt == DType::bf16 || config_.attention_probs_dropout_prob > 0.0))
      a.pd = b->alloc_dt(probs_elems, dt);
    a.ctx = b->alloc_dt(N * H, dt);
    a.res1 = b->alloc<float>(N * H);
    a.mean1 = b->alloc<float>(N);
    a.rstd1 = b->alloc<float>(N);
    a.h1 = b->alloc_dt(N * H, dt);
    if (all_layers) a.inter = b->alloc_dt(N * I, dt);  // inference fuses the activation into the matmul
    a.act = b->alloc_dt(N * I, dt);
    a.res2 = b->alloc<float>(N * H);
    a.mean2 = b->alloc<float>(N);
    a.rstd2 = b->alloc<float>(N);
  }
  const int64_t E = config_.embedding_width();
  b->emb_sum = b->alloc<float>(N * E);
  b->emb_mean = b->alloc<float>(N);
  b->emb_rstd = b->alloc<float>(N);
  if (config_.projects_embeddings()) {
    b->emb_out = b->alloc<float>(N * E);
    b->emb_out_mm = b->alloc_dt(N * E, dt);
    if (all_layers) {
      b->demb = b->alloc<float>(N * E);
      b->demb_sum = b->alloc<float>(N * E);
    }
  }
  b->mask = b->alloc<float>(N);
  b->dx = b->alloc<float>(N * H);
  b->dres = b->alloc<float>(N * H);
  b->dctx = b->alloc<float>(N * H);
  if (all_layers) {  // backward only (the forward's scratch is dx, dres, dctx and, training, dinter)
    b->dact = b->alloc<float>(N * I);
    b->dinter = b->alloc<float>(N * I);
    b->dqkv = b->alloc<float>(N * 3 * H);
  }
  if (dt == DType::bf16 && all_layers) {
    b->dres_b = b->alloc<bf16>(N * H);
    b->dinter_b = b->alloc<bf16>(N * I);
    b->dqkv_b = b->alloc<bf16>(N * 3 * H);
  }
  buf_ = std::move(b);
}

float EncoderModel::forward(const Batch& batch, const StepOptions& options) {
  if (config_.is_modernbert()) return forward_modernbert(batch, options);
  const int64_t B = batch.B, T = batch.T;
  CT_CHECK(B > 0 && T > 0, "model forward: batch shape [", B, ", ", T, "] must be positive");
  CT_CHECK(options.row_keys.empty() || static_cast<int64_t>(options.row_keys.size()) == B,
           "model forward: ", options.row_keys.size(), " dropout row keys for a batch of ", B);
  CT_CHECK(batch.input_ids != nullptr, "model forward: batch has no input_ids");
  // RoBERTa's positions start past the padding index.
  const bool roberta_positions = config_.positions == PositionScheme::after_padding_idx;
  const int64_t first_pos = roberta_positions ? config_.pad_token_id + 1 : 0;
  // DeBERTa-v3's positions are relative only: any length runs.
  const bool absolute = !config_.is_deberta() || config_.position_biased_input;
  CT_CHECK(!absolute || first_pos + T <= config_.max_position_embeddings, "model forward: sequence length ",
           T, first_pos ? str(" (positions from ", first_pos, ")") : std::string(),
           " exceeds max_position_embeddings ", config_.max_position_embeddings);
  CT_CHECK((batch.start_positions == nullptr) == (batch.end_positions == nullptr),
           "model forward: start_positions and end_positions must be given together");
  const bool packed = batch.seq_lens != nullptr;
  const int64_t NH = config_.num_attention_heads, L = config_.num_hidden_layers;
  std::vector<int64_t> cu;
  if (packed) {
    CT_CHECK(batch.attention_mask == nullptr,
             "model forward: a packed batch (seq_lens) has no padding, so it takes no attention_mask");
    cu.assign(static_cast<size_t>(B + 1), 0);
    for (int64_t b = 0; b < B; ++b) {
      CT_CHECK(batch.seq_lens[b] >= 1 && batch.seq_lens[b] <= T, "model forward: seq_lens[", b, "] is ",
               batch.seq_lens[b], ", expected 1..", T, " (T = the padded length the packed batch replaces)");
      cu[b + 1] = cu[b] + batch.seq_lens[b];
    }
    // Checked here, not in the embedding kernel, whose message would number every sequence's tokens as row 0.
    const bool types = batch.token_type_ids && !config_.is_distilbert() && config_.type_vocab_size > 0;
    for (int64_t b = 0; b < B; ++b)
      for (int64_t i = cu[b]; i < cu[b + 1]; ++i) {
        CT_CHECK(batch.input_ids[i] >= 0 && batch.input_ids[i] < config_.vocab_size,
                 "model forward: input_ids of ", "packed sequence ", b, " at position ", i - cu[b], " is ",
                 batch.input_ids[i], ", outside the vocabulary [0, ", config_.vocab_size, ")");
        CT_CHECK(
            !types || (batch.token_type_ids[i] >= 0 && batch.token_type_ids[i] < config_.type_vocab_size),
            "model forward: token_type_ids of packed sequence ", b, " at position ", i - cu[b], " is ",
            batch.token_type_ids[i], ", outside [0, ", config_.type_vocab_size, ")");
      }
  }
  const int64_t N = packed ? cu[B] : B * T;
  if (weights_dirty_) refresh_low_precision_weights();
  if (config_.is_deberta()) return deberta_forward(batch, options, std::move(cu));
  const bool keep = options.keep_activations;
  ensure_buffers(B, T, N, packed ? kernels::varlen_probs_elems(cu.data(), B, NH) : B * NH * T * T, keep);
  Buffers& bf = *buf_;
  bf.B = B;
  bf.T = T;
  bf.N = N;
  bf.cu = std::move(cu);
  padded_row_positions(bf.row_pos, bf.cu, T);
  const bool distil = config_.is_distilbert();
  const DType dt = precision_ == Precision::bf16 ? DType::bf16 : DType::f32;
  const bool lowp = dt == DType::bf16;
  const int64_t esz = dtype_size(dt);
  const int64_t H = config_.hidden_size, I = config_.intermediate_size;
  const float eps = static_cast<float>(config_.layer_norm_eps);
  const kernels::Activation act = kernels::activation_from_name(config_.hidden_act);
  const int64_t E = config_.embedding_width();
  const bool project = config_.projects_embeddings();

  bf.opts = options;
  bf.have_forward = true;
  bf.kept = keep;
  bf.ids.assign(batch.input_ids, batch.input_ids + N);
  if (!distil) {
    if (batch.token_type_ids)
      bf.type_ids.assign(batch.token_type_ids, batch.token_type_ids + N);
    else
      bf.type_ids.assign(N, 0);
  }
  bf.has_mask = batch.attention_mask != nullptr;
  if (bf.has_mask) {
    for (int64_t i = 0; i < N; ++i) {
      const int32_t m = batch.attention_mask[i];
      CT_CHECK(m == 0 || m == 1, "model forward: attention_mask[", i / T, ", ", i % T, "] is ", m,
               ", expected 0 or 1");
      bf.mask[i] = static_cast<float>(m);
    }
  }
  const float* mask = bf.has_mask ? bf.mask : nullptr;
  const int64_t* row_pos = packed ? bf.row_pos.data() : nullptr;
  // RoBERTa: padding_idx + the running count of non-pad tokens (pads stay at padding_idx), per sequence.
  bf.pos_ids.clear();
  if (roberta_positions) {
    bf.pos_ids.resize(N);
    const int32_t pad = static_cast<int32_t>(config_.pad_token_id);
    for (int64_t b = 0; b < B; ++b) {
      const int64_t r0 = packed ? bf.cu[b] : b * T, r1 = packed ? bf.cu[b + 1] : (b + 1) * T;
      int32_t count = 0;
      for (int64_t i = r0; i < r1; ++i) bf.pos_ids[i] = bf.ids[i] != pad ? pad + ++count : pad;
    }
  }

  auto site = [&](double p, uint64_t id) { return dropout_site(options, p, id, T); };
  const double p_hidden = config_.hidden_dropout_prob, p_attn = config_.attention_probs_dropout_prob;
  const float* P = params_;
  // Hidden state entering layer l in the run precision (X): its own buffer, or one of two alternating slots
  // in inference. Its f32 form (xf): X itself in f32 mode, a scratch in bf16 mode (backward needs only X).
  auto X = [&](int64_t l) { return bf.layers[keep ? l : l % 2].x; };
  auto xf = [&](int64_t l) { return lowp ? bf.dx : reinterpret_cast<float*>(X(l)); };
  auto as_bf = [&](char* p) { return lowp ? reinterpret_cast<bf16*>(p) : nullptr; };

  // Embeddings -> LayerNorm -> dropout (-> ELECTRA's projection to the hidden width).
  // Positions restart in every sequence: packed, each sequence is its own [1, L] batch.
  for (int64_t b = 0; b < (packed ? B : 1); ++b) {
    const int64_t r0 = packed ? bf.cu[b] : 0, rows = packed ? bf.cu[b + 1] - r0 : T;
    kernels::embedding_forward(
        bf.emb_sum + r0 * E, bf.ids.data() + r0, distil ? nullptr : bf.type_ids.data() + r0,
        P + layout_.word_emb, P + layout_.pos_emb, distil ? nullptr : P + layout_.type_emb, packed ? 1 : B,
        rows, E, config_.vocab_size, config_.max_position_embeddings, distil ? 0 : config_.type_vocab_size,
        roberta_positions ? bf.pos_ids.data() + r0 : nullptr);
  }
  auto drop_rows = [&](float* out, bf16* out_b, const float* inp, const kernels::DropoutSite& st) {
    apply_dropout_rows(out, out_b, inp, N, H, T, bf.cu, st);
  };
  if (project) {
    kernels::layernorm_forward(bf.emb_out, nullptr, bf.emb_mean, bf.emb_rstd, bf.emb_sum,
                               P + layout_.emb_ln_w, P + layout_.emb_ln_b, N, E, eps);
    apply_dropout_rows(bf.emb_out, as_bf(bf.emb_out_mm), bf.emb_out, N, E, T, bf.cu, site(p_hidden, 0));
    const void* in = lowp ? static_cast<const void*>(bf.emb_out_mm) : bf.emb_out;
    kernels::linear_forward(xf(0), DType::f32, in, weight(layout_.emb_proj_w), P + layout_.emb_proj_b, N, E,
                            H, dt);
    if (lowp) to_bf16(as_bf(X(0)), xf(0), N * H);
  } else {
    kernels::layernorm_forward(xf(0), nullptr, bf.emb_mean, bf.emb_rstd, bf.emb_sum, P + layout_.emb_ln_w,
                               P + layout_.emb_ln_b, N, H, eps);
    drop_rows(xf(0), as_bf(X(0)), xf(0), site(p_hidden, 0));
  }

  // A head that reads only some rows needs only those rows of the last layer's output (its other rows feed
  // nothing, and get a zero gradient): the layer computes keys and values for every row, the rest for those
  // rows alone (~5/6 of a layer's matmuls, each direction). Worth it while they are at most half the rows
  // (the attention of the selected rows runs as loops, not matmuls).
  bf.head_rows.clear();
  bf.head_pos.clear();
  if (L > 0 && !options.every_row && head_->rows_read(head_pass(options, 1.0f, false), batch, bf.head_rows) &&
      !bf.head_rows.empty() && 2 * static_cast<int64_t>(bf.head_rows.size()) <= N) {
    for (int64_t row : bf.head_rows) bf.head_pos.push_back(packed ? bf.row_pos[row] : row);
  } else {
    bf.head_rows.clear();
  }

  for (int64_t l = 0; l < L; ++l) {
    const LayerOffsets& lo = layout_.layers[l];
    LayerActs& a = bf.layers[keep ? l : 0];
    float* tmp = bf.dres;
    float* h1f = lowp ? bf.dctx : reinterpret_cast<float*>(a.h1);
    const uint64_t sid = 1 + 3 * static_cast<uint64_t>(l);
    // After attention, on `rows` rows of a.ctx: output projection, dropout + residual (res_in) + LayerNorm,
    // FFN, dropout + residual + LayerNorm into out (f32) and out_b (bf16 mode). rpos: the rows' dropout rows.
    auto post_attention = [&](int64_t rows, const float* res_in, float* out, bf16* out_b,
                              const int64_t* rpos) {
      // Where the dropout between a Linear and its residual is the identity (evaluation; DistilBERT's
      // attention output has none), the residual add rides on the matmul.
      if (distil || site(p_hidden, sid + 1).p == 0.0f) {
        kernels::linear_residual_forward(a.res1, a.ctx, weight(lo.attn_out_w), P + lo.attn_out_b, res_in,
                                         rows, H, H, dt);
        kernels::layernorm_forward(h1f, as_bf(a.h1), a.mean1, a.rstd1, a.res1, P + lo.ln1_w, P + lo.ln1_b,
                                   rows, H, eps);
      } else {
        kernels::linear_forward(tmp, DType::f32, a.ctx, weight(lo.attn_out_w), P + lo.attn_out_b, rows, H, H,
                                dt);
        kernels::dropout_residual_layernorm_forward(a.res1, h1f, as_bf(a.h1), a.mean1, a.rstd1, tmp, res_in,
                                                    P + lo.ln1_w, P + lo.ln1_b, rows, H, eps,
                                                    site(p_hidden, sid + 1), rpos);
      }
      if (keep) {  // backward reads the pre-activation
        kernels::linear_forward(a.inter, dt, a.h1, weight(lo.ffn_in_w), P + lo.ffn_in_b, rows, H, I, dt);
        if (lowp)
          kernels::activation_forward(nullptr, as_bf(a.act), reinterpret_cast<const bf16*>(a.inter), rows * I,
                                      act);
        else
          kernels::activation_forward(reinterpret_cast<float*>(a.act), nullptr,
                                      reinterpret_cast<const float*>(a.inter), rows * I, act);
      } else {  // inference: bias and activation ride on the matmul, straight into the next operand
        kernels::linear_act_forward(a.act, dt, a.h1, weight(lo.ffn_in_w), P + lo.ffn_in_b, rows, H, I, dt,
                                    act);
      }
      if (site(p_hidden, sid + 2).p == 0.0f) {
        kernels::linear_residual_forward(a.res2, a.act, weight(lo.ffn_out_w), P + lo.ffn_out_b, h1f, rows, I,
                                         H, dt);
        kernels::layernorm_forward(out, out_b, a.mean2, a.rstd2, a.res2, P + lo.ln2_w, P + lo.ln2_b, rows, H,
                                   eps);
      } else {
        kernels::linear_forward(tmp, DType::f32, a.act, weight(lo.ffn_out_w), P + lo.ffn_out_b, rows, I, H,
                                dt);
        kernels::dropout_residual_layernorm_forward(a.res2, out, out_b, a.mean2, a.rstd2, tmp, h1f,
                                                    P + lo.ln2_w, P + lo.ln2_b, rows, H, eps,
                                                    site(p_hidden, sid + 2), rpos);
      }
    };

    kernels::linear_forward(a.qkv, dt, X(l), weight(lo.qkv_w), P + lo.qkv_b, N, H, 3 * H, dt);
    kernels::AttentionDims dims;
    dims.B = B;
    dims.T = T;
    dims.NH = NH;
    dims.HS = H / NH;
    dims.ld_qkv = 3 * H;
    if (l == L - 1 && !bf.head_rows.empty()) {  // see bf.head_rows: R rows, compacted
      const int64_t R = static_cast<int64_t>(bf.head_rows.size());
      bf.head_in.resize(R * H);
      bf.head_out.resize(R * H);
      bf.head_out_b.resize(lowp ? R * H : 0);
      bf.head_probs.resize(R * NH * T);
      for (int64_t r = 0; r < R; ++r) copy_f32(bf.head_in.data() + r * H, xf(l) + bf.head_rows[r] * H, H);
      kernels::attention_rows_forward(a.ctx, bf.head_probs.data(), a.qkv, a.qkv + H * esz,
                                      a.qkv + 2 * H * esz, mask, packed ? bf.cu.data() : nullptr,
                                      bf.head_rows.data(), R, dims, dt, site(p_attn, sid));
      bf16* out_b = lowp ? bf.head_out_b.data() : nullptr;
      post_attention(R, bf.head_in.data(), bf.head_out.data(), out_b, bf.head_pos.data());
      // The final hidden state's head rows; its other rows are left as they were (no reader).
      for (int64_t r = 0; r < R; ++r) {
        const int64_t row = bf.head_rows[r];
        copy_f32(xf(l + 1) + row * H, bf.head_out.data() + r * H, H);
        if (lowp) std::memcpy(as_bf(X(l + 1)) + row * H, out_b + r * H, H * sizeof(bf16));
      }
      break;
    }
    if (packed)
      kernels::attention_forward_varlen(a.ctx, a.probs, a.qkv, a.qkv + H * esz, a.qkv + 2 * H * esz,
                                        bf.cu.data(), dims, dt, site(p_attn, sid), a.pd);
    else
      kernels::attention_forward(a.ctx, a.probs, a.qkv, a.qkv + H * esz, a.qkv + 2 * H * esz, mask, dims, dt,
                                 site(p_attn, sid), a.pd);
    post_attention(N, xf(l), xf(l + 1), as_bf(X(l + 1)), row_pos);
  }

  HeadPass pass = head_pass(options, 1.0f, false);
  return head_->forward(pass, batch, X(L), xf(L));
}

HeadPass EncoderModel::head_pass(const StepOptions& options, float loss_scale, bool accumulate) {
  HeadPass pass;
  pass.config = &config_;
  pass.layout = &layout_;
  pass.dt = precision_ == Precision::bf16 ? DType::bf16 : DType::f32;
  if (deberta_) {
    deberta_pass_shape(pass);
  } else {
    const Buffers& bf = *buf_;
    pass.B = bf.B;
    pass.T = bf.T;
    pass.N = bf.N;
    pass.cu = &bf.cu;
  }
  pass.H = config_.hidden_size;
  pass.P = params_;
  pass.G = grads_;
  pass.weight = [this](int64_t offset) { return weight(offset); };
  // Head dropouts follow the body's sites: 1 + 3L + k.
  const uint64_t first = 1 + 3 * static_cast<uint64_t>(config_.num_hidden_layers);
  const int64_t T = pass.T;
  pass.site = [this, options, first, T](double p, uint64_t k, int64_t row_elems) {
    kernels::DropoutSite s = dropout_site(options, p, first + k, T);
    if (s.row_streams) s.row_elems = row_elems;
    return s;
  };
  pass.accumulate = accumulate;
  pass.loss_scale = loss_scale;
  return pass;
}

// Site ids: 0 embeddings, 1 + 3l attention probs of layer l, 2 + 3l / 3 + 3l its hidden outputs, 1 + 3L + k
// the head's dropouts.
kernels::DropoutSite EncoderModel::dropout_site(const StepOptions& options, double p, uint64_t id,
                                                int64_t T) const {
  const int64_t NH = config_.num_attention_heads, L = config_.num_hidden_layers;
  const bool attention = id % 3 == 1 && id < 1 + 3 * static_cast<uint64_t>(L);
  kernels::DropoutSite s;
  s.p = options.train ? static_cast<float>(p) : 0.0f;
  s.seed = options.seed;
  s.stream = options.step;
  s.offset = id << 40;
  if (!options.row_keys.empty()) {
    s.row_streams = options.row_keys.data();
    s.row_elems = attention ? NH * T * T : T * (id == 0 ? config_.embedding_width() : config_.hidden_size);
  }
  return s;
}

float* EncoderModel::grads_data() {
  if (!grads_) {
    grads_owner_ = aligned_alloc_shared(layout_.total * 4);
    grads_ = static_cast<float*>(grads_owner_.get());
  }
  return grads_;
}

void EncoderModel::backward(const GradReadyFn& on_ready, float loss_scale, bool accumulate) {
  grads_data();  // the slab, on a model's first backward
  if (config_.is_modernbert()) return backward_modernbert(on_ready, loss_scale, accumulate);
  if (config_.is_deberta()) return deberta_backward(on_ready, loss_scale, accumulate);
  CT_CHECK(buf_ && buf_->have_forward, "model backward: no forward pass to differentiate");
  CT_CHECK(buf_->kept, "model backward: the last forward ran with keep_activations off (inference)");
  CT_CHECK(head_->has_loss(), "model backward: the last forward had no labels (",
           layout_.head_kind == HeadKind::span ? "start/end positions" : "labels", "), so there is no loss");
  Buffers& bf = *buf_;
  const bool distil = config_.is_distilbert();
  const DType dt = precision_ == Precision::bf16 ? DType::bf16 : DType::f32;
  const bool lowp = dt == DType::bf16;
  const int64_t esz = dtype_size(dt);
  const int64_t B = bf.B, T = bf.T, N = bf.N, H = config_.hidden_size, I = config_.intermediate_size;
  const int64_t E = config_.embedding_width();
  const bool packed = !bf.cu.empty();
  const int64_t* row_pos = packed ? bf.row_pos.data() : nullptr;
  auto drop_rows = [&](float* out, bf16* out_b, const float* inp, const kernels::DropoutSite& st) {
    apply_dropout_rows(out, out_b, inp, N, H, T, bf.cu, st);
  };
  const int64_t NH = config_.num_attention_heads, L = config_.num_hidden_layers;
  const kernels::Activation act = kernels::activation_from_name(config_.hidden_act);
  const StepOptions& options = bf.opts;
  auto site = [&](double p, uint64_t id) { return dropout_site(options, p, id, T); };
  const double p_hidden = config_.hidden_dropout_prob, p_attn = config_.attention_probs_dropout_prob;
  const float* P = params_;
  float* G = grads_;
  // Gradients that are only ever added to start from zero unless accumulating (linear weights are
  // overwritten by their gemm instead).
  auto prepare = [&](int64_t begin, int64_t end) {
    if (!accumulate) zero_f32(G + begin, end - begin);
  };
  auto prepare_layer = [&](const LayerOffsets& lo) {
    prepare(lo.qkv_b, lo.qkv_b + 3 * H);
    prepare(lo.attn_out_b, lo.attn_out_b + H);
    prepare(lo.ln1_w, lo.ln1_w + H);
    prepare(lo.ln1_b, lo.ln1_b + H);
    prepare(lo.ffn_in_b, lo.ffn_in_b + I);
    prepare(lo.ffn_out_b, lo.ffn_out_b + H);
    prepare(lo.ln2_w, lo.ln2_w + H);
    prepare(lo.ln2_b, lo.ln2_b + H);
  };
  // Parameters starting in [begin, end) are final: report them highest offset first.
  auto report = [&](int64_t begin, int64_t end) {
    if (!on_ready) return;
    for (int64_t i = static_cast<int64_t>(layout_.params.size()) - 1; i >= 0; --i) {
      const ParamInfo& p = layout_.params[i];
      if (p.offset >= begin && p.offset < end) on_ready(p.offset, p.numel());
    }
  };
  // The matmul operand for a gradient: its bf16 copy in bf16 mode.
  auto mm = [&](const float* f, const bf16* b) -> const void* {
    return lowp ? static_cast<const void*>(b) : f;
  };

  // The head: its parameters, and the gradient of the final hidden state into bf.dx. A tied decoder adds
  // into the word embeddings' gradient, so that starts from zero here rather than at the embeddings.
  const bool tied = layout_.head_kind == HeadKind::masked_lm;
  prepare(layout_.head.begin, layout_.head.end);
  if (tied) prepare(layout_.word_emb, layout_.word_emb + config_.vocab_size * E);
  head_->backward(head_pass(options, loss_scale, accumulate), bf.dx);
  report(layout_.head.begin, layout_.head.end);

  // Encoder layers, last first. bf.dx holds the gradient of the layer's output on entry, of its input on
  // exit.
  for (int64_t l = L - 1; l >= 0; --l) {
    const LayerOffsets& lo = layout_.layers[l];
    const LayerActs& a = bf.layers[l];
    const uint64_t sid = 1 + 3 * static_cast<uint64_t>(l);
    prepare_layer(lo);
    kernels::AttentionDims dims;
    dims.B = B;
    dims.T = T;
    dims.NH = NH;
    dims.HS = H / NH;
    dims.ld_qkv = 3 * H;
    // Back to the attention context on `rows` rows: dx holds the layer output's gradient on entry, the
    // residual branch's into the layer input on exit; bf.dctx gets the context's. rpos as in forward.
    auto post_attention_backward = [&](int64_t rows, float* dx, const int64_t* rpos) {
      // dx becomes the residual branch's gradient (into h1), bf.dres the FFN output's.
      kernels::dropout_residual_layernorm_backward(dx, bf.dres, bf.dres_b, G + lo.ln2_w, G + lo.ln2_b, dx,
                                                   a.res2, P + lo.ln2_w, a.mean2, a.rstd2, rows, H,
                                                   site(p_hidden, sid + 2), rpos);
      report(lo.ln2_w, lo.end);
      linear_backward_input(bf.dact, mm(bf.dres, bf.dres_b), weight(lo.ffn_out_w), rows, I, H, dt);
      linear_backward_params(G + lo.ffn_out_w, G + lo.ffn_out_b, bf.dres, mm(bf.dres, bf.dres_b), a.act, rows,
                             I, H, dt, accumulate);
      report(lo.ffn_out_w, lo.ln2_w);
      // Overwrites (no zeroing pass) and writes the bf16 operand copy in the same pass.
      if (lowp)
        kernels::activation_backward(bf.dinter, bf.dact, reinterpret_cast<const bf16*>(a.inter), rows * I,
                                     act,
                                     /*accumulate=*/false, bf.dinter_b);
      else
        kernels::activation_backward(bf.dinter, bf.dact, reinterpret_cast<const float*>(a.inter), rows * I,
                                     act, /*accumulate=*/false, nullptr);
      kernels::linear_backward(dx, nullptr, nullptr, bf.dinter, mm(bf.dinter, bf.dinter_b), a.h1,
                               weight(lo.ffn_in_w), rows, H, I, dt);
      linear_backward_params(G + lo.ffn_in_w, G + lo.ffn_in_b, bf.dinter, mm(bf.dinter, bf.dinter_b), a.h1,
                             rows, H, I, dt, accumulate);
      report(lo.ffn_in_w, lo.ffn_out_w);
      // DistilBERT's attention output has no dropout.
      kernels::dropout_residual_layernorm_backward(
          dx, bf.dres, bf.dres_b, G + lo.ln1_w, G + lo.ln1_b, dx, a.res1, P + lo.ln1_w, a.mean1, a.rstd1,
          rows, H, distil ? kernels::DropoutSite{} : site(p_hidden, sid + 1), rpos);
      report(lo.ln1_w, lo.ffn_in_w);
      linear_backward_input(bf.dctx, mm(bf.dres, bf.dres_b), weight(lo.attn_out_w), rows, H, H, dt);
      linear_backward_params(G + lo.attn_out_w, G + lo.attn_out_b, bf.dres, mm(bf.dres, bf.dres_b), a.ctx,
                             rows, H, H, dt, accumulate);
      report(lo.attn_out_w, lo.ln1_w);
    };

    zero_f32(bf.dqkv, N * 3 * H);
    if (l == L - 1 && !bf.head_rows.empty()) {  // forward's head-rows layer (bf.head_rows)
      const int64_t R = static_cast<int64_t>(bf.head_rows.size());
      bf.head_dx.resize(R * H);
      float* fdx = bf.head_dx.data();
      for (int64_t r = 0; r < R; ++r) copy_f32(fdx + r * H, bf.dx + bf.head_rows[r] * H, H);
      post_attention_backward(R, fdx, bf.head_pos.data());
      kernels::attention_rows_backward(bf.dqkv, bf.dqkv + H, bf.dqkv + 2 * H, bf.dctx, a.qkv, a.qkv + H * esz,
                                       a.qkv + 2 * H * esz, bf.head_probs.data(),
                                       bf.has_mask ? bf.mask : nullptr, packed ? bf.cu.data() : nullptr,
                                       bf.head_rows.data(), R, dims, dt, site(p_attn, sid));
      // The layer input's residual gradient: the head rows', zero elsewhere (the QKV product's adds below).
      zero_f32(bf.dx, N * H);
      for (int64_t r = 0; r < R; ++r) copy_f32(bf.dx + bf.head_rows[r] * H, fdx + r * H, H);
    } else {
      post_attention_backward(N, bf.dx, row_pos);
      if (packed)
        kernels::attention_backward_varlen(bf.dqkv, bf.dqkv + H, bf.dqkv + 2 * H, bf.dctx, a.qkv,
                                           a.qkv + H * esz, a.qkv + 2 * H * esz, a.probs, bf.cu.data(), dims,
                                           dt, site(p_attn, sid), a.pd);
      else  // forward's mask: backward skips the same keys (a.pd holds nothing past them)
        kernels::attention_backward(bf.dqkv, bf.dqkv + H, bf.dqkv + 2 * H, bf.dctx, a.qkv, a.qkv + H * esz,
                                    a.qkv + 2 * H * esz, a.probs, bf.has_mask ? bf.mask : nullptr, dims, dt,
                                    site(p_attn, sid), a.pd);
    }
    if (lowp) to_bf16(bf.dqkv_b, bf.dqkv, N * 3 * H);
    kernels::linear_backward(bf.dx, nullptr, nullptr, bf.dqkv, mm(bf.dqkv, bf.dqkv_b), a.x, weight(lo.qkv_w),
                             N, H, 3 * H, dt);
    linear_backward_params(G + lo.qkv_w, G + lo.qkv_b, bf.dqkv, mm(bf.dqkv, bf.dqkv_b), a.x, N, H, 3 * H, dt,
                           accumulate);
    report(lo.qkv_w, lo.attn_out_w);
  }

  // Embeddings (ELECTRA: back through the projection first). A tied decoder's word-embedding gradient is
  // already in place.
  // The word embeddings come first (emb_begin): only their rows a lookup wrote need zeroing.
  if (!tied && !accumulate) zero_word_grad();
  prepare(layout_.word_emb + config_.vocab_size * E, layout_.emb_end);
  float* dln = bf.dx;  // gradient of the embeddings' LayerNorm output (before dropout)
  float* dsum = bf.dres;
  if (config_.projects_embeddings()) {
    if (lowp) to_bf16(bf.dres_b, bf.dx, N * H);
    linear_backward_input(bf.demb, mm(bf.dx, bf.dres_b), weight(layout_.emb_proj_w), N, E, H, dt);
    const void* in = lowp ? static_cast<const void*>(bf.emb_out_mm) : bf.emb_out;
    linear_backward_params(G + layout_.emb_proj_w, G + layout_.emb_proj_b, bf.dx, mm(bf.dx, bf.dres_b), in, N,
                           E, H, dt, accumulate);
    report(layout_.emb_proj_w, layout_.emb_end);
    apply_dropout_rows(bf.demb, nullptr, bf.demb, N, E, T, bf.cu, site(p_hidden, 0));
    dln = bf.demb;
    dsum = bf.demb_sum;
  } else {
    drop_rows(bf.dx, nullptr, bf.dx, site(p_hidden, 0));
  }
  zero_f32(dsum, N * E);
  kernels::layernorm_backward(dsum, G + layout_.emb_ln_w, G + layout_.emb_ln_b, dln, bf.emb_sum,
                              P + layout_.emb_ln_w, bf.emb_mean, bf.emb_rstd, N, E);
  report(layout_.emb_ln_w, layout_.emb_proj_w >= 0 ? layout_.emb_proj_w : layout_.emb_end);
  // nn.Embedding(padding_idx=pad_token_id) never accumulates the lookup into the padding row (RoBERTa's
  // position table has one too); what else wrote the row (a tied decoder) stays.
  const bool roberta_positions = !bf.pos_ids.empty();
  float* word_pad = G + layout_.word_emb + config_.pad_token_id * E;
  float* pos_pad = G + layout_.pos_emb + config_.pad_token_id * E;
  const std::vector<float> word_row(word_pad, word_pad + E);
  const std::vector<float> pos_row =
      roberta_positions ? std::vector<float>(pos_pad, pos_pad + E) : std::vector<float>();
  for (int64_t b = 0; b < (packed ? B : 1); ++b) {
    const int64_t r0 = packed ? bf.cu[b] : 0, rows = packed ? bf.cu[b + 1] - r0 : T;
    kernels::embedding_backward(G + layout_.word_emb, G + layout_.pos_emb,
                                distil ? nullptr : G + layout_.type_emb, dsum + r0 * E, bf.ids.data() + r0,
                                distil ? nullptr : bf.type_ids.data() + r0, packed ? 1 : B, rows, E,
                                roberta_positions ? bf.pos_ids.data() + r0 : nullptr);
  }
  copy_f32(word_pad, word_row.data(), E);
  note_word_grad(bf.ids.data(), N);
  if (roberta_positions) copy_f32(pos_pad, pos_row.data(), E);
  report(layout_.emb_begin, layout_.emb_ln_w);
}

}  // namespace ct::model

namespace ct::model {

double EncoderModel::forward_matmul_flops(std::span<const int64_t> lengths) const {
  return model::forward_matmul_flops(config_, lengths);
}

double EncoderModel::flos_per_token() const {
  int64_t emb = 0;
  for (const auto& p : params())
    if (p.name.find("embeddings.") != std::string::npos) emb += p.numel();
  return 6.0 * static_cast<double>(num_params() - emb);
}

std::string EncoderModel::config_json() const {
  return config_to_json(config_, layout_.head_kind);
}

}  // namespace ct::model
