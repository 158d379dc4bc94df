// One encoder body (BERT, DistilBERT, RoBERTa / XLM-R / CamemBERT, ELECTRA as transformers computes them:
// post-LN layers, exact GELU, additive attention mask; DeBERTa-v2/v3 in model/deberta_body.cpp) with one task
// head (model/head.h), forward and
// backward over one f32 parameter slab and one f32 gradient slab of the same layout (ParamLayout). Tensors
// are views into the slabs. The families differ only in data (ModelConfig: position scheme, embedding width
// and projection, eps, names); heads are small objects over the body's final hidden state.
//
// bf16 mode is torch.autocast("cpu", bfloat16) in spirit: every matmul takes bf16 operands and accumulates in
// f32 (bf16 weight copies are written once per weight update, by the optimizer or by the next forward), the
// FFN's pre-activation is kept in bf16 as autocast keeps a Linear's output, and master weights, gradients,
// layer norm, softmax and the loss stay f32. The model runs the precision it is given (bf16 without
// AVX512-BF16/AMX: the same arithmetic, widened to f32 by kernels::gemm); resolve_precision() is what --bf16
// runs.
//
// Dropout is a pure function of (seed, step, site), so any step can be replayed exactly; backward recomputes
// the masks instead of storing them.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/bf16.h"
#include "core/row_set.h"
#include "core/tensor.h"
#include "kernels/dropout.h"
#include "kernels/row_flags.h"
#include "model/config.h"
#include "model/model.h"
#include "model/param_info.h"
#include "model/param_layout.h"

namespace ct::model {

class Head;
struct HeadPass;

class EncoderModel : public Model {
 public:
  // grad_slab: caller-owned gradient storage of params().size() floats (e.g. shared memory for DDP) or null
  // to own one. Parameters start zeroed: call init_weights() or load weights into params_data(). Throws
  // when the family has no such head.
  EncoderModel(const ModelConfig& config, HeadKind head, Precision precision, float* grad_slab = nullptr);
  ~EncoderModel() override;
  EncoderModel(const EncoderModel&) = delete;
  EncoderModel& operator=(const EncoderModel&) = delete;

  const ModelConfig& config() const { return config_; }
  const ParamLayout& layout() const { return layout_; }
  const std::vector<ParamInfo>& params() const override { return layout_.params; }
  int64_t num_params() const override { return layout_.total; }
  HeadKind head_kind() const { return layout_.head_kind; }
  Precision precision() const override { return precision_; }
  // Changes the precision of the next forward (HF's --bf16_full_eval evaluates an f32-trained model in
  // bf16). Drops the last forward's activations.
  void set_precision(Precision precision) override;
  // True while only the embedding lookup writes the word embeddings' gradient (so it lives in the rows of
  // the step's tokens and DDP may reduce just those); false with a head tied to them (masked LM), whose
  // decoder writes every row.
  bool word_embedding_grad_is_lookup_only() const override {
    return layout_.head_kind != HeadKind::masked_lm;
  }
  WordEmbeddingRows word_embedding() const override {
    return {layout_.word_emb, config_.vocab_size, config_.embedding_width()};
  }

  // Rows of the word embeddings' gradient that may be non-zero; every other row holds exactly +0. The
  // lookups of the backward passes since the last overwriting one add their tokens' rows (every row with a
  // tied decoder, and before the first backward); backward(accumulate=false) zeroes just these rows and
  // starts over. Whoever else writes that gradient adds the rows it wrote (DDP's average over the union of
  // the ranks' rows); a NaN clipping coefficient makes it every row.
  RowSet& word_grad_rows() override { return word_grad_rows_; }
  // `rows` of the word embeddings as the norm, clipping and optimizer kernels take them (every row when
  // rows.all()).
  kernels::RowFlags word_embedding_rows(const RowSet& rows) const override;

  // Writable access marks the weights changed (bf16 copies refresh on the next forward).
  float* params_data() override;
  const float* params_data() const override { return params_; }
  // Whoever writes word-embedding rows of the gradient through this pointer adds them to word_grad_rows().
  // The gradient slab (zeros) is allocated by the first backward or the first call here, so a model that
  // only runs forward (--do_eval / --do_predict alone) never holds one: 436 MB at BERT-base, 2.2 GB at
  // XLM-R large. The const form is nullptr until then.
  float* grads_data() override;
  const float* grads_data() const override { return grads_; }
  // Call after writing through a pointer obtained earlier (e.g. after every optimizer step).
  // low_precision_written: the writer also wrote bf16 copies of every parameter into
  // low_precision_weights() (the optimizer does, in its own pass), so the next forward need not convert.
  void mark_weights_changed(bool low_precision_written = false) override {
    weights_dirty_ = !low_precision_written;
  }
  // bf16 copies of the parameters, laid out like the slab, that bf16 matmuls read; null in f32.
  bf16* low_precision_weights() override { return precision_ == Precision::bf16 ? weights_bf16_ : nullptr; }
  // Moves the model onto parameter storage it does not own (a node's shared memory, where the ranks of a
  // data-parallel run keep one copy: train/node_shard.h): `params` holds num_params() floats equal to this
  // model's parameters and, when the model runs in bf16, `weights_bf16` their bf16 copies (every element);
  // both outlive the model. The model's own storage is freed.
  void use_external_weights(float* params, bf16* weights_bf16) override;

  // HF _init_weights from ct::Generator(seed): N(0, initializer_range) for Linear and Embedding weights
  // (padding rows zeroed), zero biases, LayerNorm weight 1 / bias 0. Same values for any thread count.
  void init_weights(uint64_t seed);
  // Re-initializes just the parameters whose names start with `prefix` (e.g. a fresh "qa_outputs." head).
  void init_weights(uint64_t seed, const std::string& prefix);
  // Re-initializes the named parameters (e.g. layout().head_param_names(): a fresh head whatever its names).
  void init_weights(uint64_t seed, const std::vector<std::string>& names);

  // Runs the model and returns the head's loss, or NaN when the batch has no labels. The head's logits are
  // in logits() (span: [N, 2] start/end pairs; sequence classification [B, num_labels]; token
  // classification [N, num_labels]; masked LM [masked tokens, vocab] in token order; multiple choice
  // [B / num_choices, num_choices]). Activations are kept for backward().
  float forward(const Batch& batch, const StepOptions& options) override;
  const std::vector<float>& logits() const override;

  // Backward of the last forward's loss times loss_scale. accumulate=false overwrites the gradient slab,
  // true adds to it (gradient accumulation). on_ready fires per parameter as its gradient is final.
  void backward(const GradReadyFn& on_ready = {}, float loss_scale = 1.0f, bool accumulate = false) override;

  double forward_matmul_flops(std::span<const int64_t> lengths) const override;
  // Parameters named *embeddings.* are the embeddings.
  double flos_per_token() const override;
  int64_t hidden_size() const override { return config_.hidden_size; }
  int64_t intermediate_size() const override { return config_.intermediate_size; }
  std::string config_json() const override;

  // Bytes held for activations and scratch at the current batch shape (for logs and the bench).
  int64_t activation_bytes() const;

 private:
  struct Buffers;
  void ensure_buffers(int64_t B, int64_t T, int64_t tokens, int64_t probs_elems, bool all_layers);
  void refresh_low_precision_weights();
  // Zeroes the rows of word_grad_rows() (an overwriting backward without a tied decoder) and empties it.
  void zero_word_grad();
  // The backward's lookup wrote the rows of these tokens (a tied decoder: every row).
  void note_word_grad(const int32_t* ids, int64_t n);
  void init_weights_if(uint64_t seed, const std::function<bool(const std::string&)>& selected_name);
  const void* weight(int64_t offset) const;  // matmul operand of the run precision
  HeadPass head_pass(const StepOptions& options, float loss_scale, bool accumulate);
  // DeBERTa-v2's body (model/deberta_body.cpp): its own activations, forward and backward, the same heads.
  struct DebertaState;
  float deberta_forward(const Batch& batch, const StepOptions& options, std::vector<int64_t> cu);
  void deberta_backward(const GradReadyFn& on_ready, float loss_scale, bool accumulate);
  void deberta_pass_shape(HeadPass& pass) const;
  int64_t deberta_bytes() const;
  kernels::DropoutSite dropout_site(const StepOptions& options, double p, uint64_t id, int64_t T) const;

  // ModernBERT's body (model/modernbert_body.cpp), dispatched to on config_.is_modernbert().
  struct ModernBuffers;
  float forward_modernbert(const Batch& batch, const StepOptions& options);
  void backward_modernbert(const GradReadyFn& on_ready, float loss_scale, bool accumulate);
  void init_weights_modernbert(uint64_t seed, const std::function<bool(const std::string&)>& selected_name);
  int64_t modernbert_activation_bytes() const;

  ModelConfig config_;
  ParamLayout layout_;
  Precision precision_;
  std::shared_ptr<void> params_owner_, grads_owner_, weights_bf16_owner_;
  float* params_ = nullptr;
  float* grads_ = nullptr;
  bf16* weights_bf16_ = nullptr;
  bool weights_dirty_ = true;
  RowSet word_grad_rows_;
  std::unique_ptr<Buffers> buf_;
  std::shared_ptr<ModernBuffers> mb_;      // shared_ptr: its type is complete in modernbert_body.cpp only
  std::shared_ptr<DebertaState> deberta_;  // null for the BERT-family body (shared_ptr: type erased deleter)
  std::unique_ptr<Head> head_;
};

}  // namespace ct::model
