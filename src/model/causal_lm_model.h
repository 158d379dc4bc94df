// A decoder (model/decoder_model.h: the shared body and its causal-LM head) as the Trainer's model::Model:
// the collated Batch (padded [B, T] rows with no pads, or packed sequences) becomes the decoder's packed
// batch with positions restarting per sequence and the labels taken as already-shifted targets; the loss is
// each micro-batch's mean over its targets, and the backward weight the Trainer passes turns it into HF's
// sum / num_items_in_batch over the optimizer step and the ranks. For evaluation logits() holds each token's
// argmax (-1 where the token has no target), what run_clm's preprocess_logits_for_metrics keeps, since the
// [tokens, vocab] logits are never formed.
//
// f32 only (the body has no bf16 path yet); every rank keeps its own weights (no node-shared storage).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "model/decoder_model.h"
#include "model/model.h"

namespace ct::model {

class CausalLmModel : public Model {
 public:
  // `max_positions`: the longest sequence a batch will hold (the RoPE tables' length).
  CausalLmModel(DecoderConfig config, int64_t max_positions);

  DecoderModel& decoder() { return m_; }
  const DecoderModel& decoder() const { return m_; }
  const DecoderConfig& config() const { return m_.config(); }

  const std::vector<ParamInfo>& params() const override { return m_.layout().params; }
  int64_t num_params() const override { return m_.layout().total; }
  float* params_data() override { return m_.params().data(); }
  const float* params_data() const override { return m_.params().data(); }
  float* grads_data() override { return m_.grads().data(); }
  const float* grads_data() const override { return m_.grads().data(); }
  void mark_weights_changed(bool /*low_precision_written*/ = false) override {}
  bf16* low_precision_weights() override { return nullptr; }
  bool can_use_external_weights() const override { return false; }
  void use_external_weights(float* params, bf16* weights_bf16) override;
  Precision precision() const override { return Precision::f32; }
  void set_precision(Precision precision) override;

  // The decoder does not track which embedding rows its gradient touches: every row, dense.
  WordEmbeddingRows word_embedding() const override;
  bool word_embedding_grad_is_lookup_only() const override { return false; }
  RowSet& word_grad_rows() override { return every_row_; }
  kernels::RowFlags word_embedding_rows(const RowSet& rows) const override;

  // forward() alone is evaluation; followed by backward() (outside the Trainer) the backward runs the
  // forward again, since the decoder's training step is one pass: forward_backward() is that pass.
  float forward(const Batch& batch, const StepOptions& options) override;
  const std::vector<float>& logits() const override { return argmax_; }
  void backward(const GradReadyFn& on_ready = {}, float loss_scale = 1.0f, bool accumulate = false) override;
  float forward_backward(const Batch& batch, const StepOptions& options, const GradReadyFn& on_ready,
                         float loss_scale, bool accumulate) override;

  // Per sequence: the layers' products, the causal half of the two attention products, and the LM head at
  // the rows that have a target.
  double forward_matmul_flops(std::span<const int64_t> lengths) const override;
  double flos_per_token() const override;
  int64_t hidden_size() const override { return config().hidden_size; }
  int64_t intermediate_size() const override { return config().intermediate_size; }
  std::string config_json() const override;

 private:
  // The batch in the decoder's form, over buffers kept here.
  struct Packed {
    std::vector<int32_t> ids, positions, targets;
    DecoderBatch batch;
    int64_t targets_count = 0;
  };
  Packed pack(const Batch& b) const;
  float run(const Packed& p, float loss_scale, bool backward, bool accumulate, const GradReadyFn& on_ready);

  DecoderModel m_;
  RowSet every_row_;
  std::vector<float> argmax_;
  Packed last_;  // the last forward's batch, for a backward() that follows it
};

}  // namespace ct::model
