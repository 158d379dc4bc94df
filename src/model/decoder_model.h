// The shared decoder body of the Llama family and Gemma 3 with its causal-LM head, forward and backward in
// f32 over a packed batch: sequences laid end to end (a padded batch is the same with each row's real
// length), positions restarting per sequence, every sequence attending only to itself
// (kernels/causal_attention.h), the LM head and loss computed only at rows that have a target
// (kernels/lm_head_loss.h). What differs by family is DecoderConfig data: norm kind, q/k norms, sandwich
// norms, embedding and score scales, biases, sliding layers and their RoPE.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/lm_head_loss.h"
#include "kernels/rotary.h"
#include "model/decoder_config.h"
#include "model/decoder_layout.h"

namespace ct::model {

struct DecoderBatch {
  int64_t rows = 0;
  const int32_t* input_ids = nullptr;       // [rows]
  const int32_t* position_ids = nullptr;    // [rows]
  std::vector<int64_t> seq_start, seq_len;  // the sequences as spans of rows
  // [rows], already shifted: row r is trained to predict targets[r]; -100 (any negative) for none. A
  // sequence's last row has none (transformers' shift pads the labels with -100).
  const int32_t* targets = nullptr;
};

// HF's unshifted labels of packed rows into targets: row r predicts labels[r + 1] of its own sequence.
std::vector<int32_t> shift_labels(const int32_t* labels, const std::vector<int64_t>& seq_start,
                                  const std::vector<int64_t>& seq_len, int64_t rows);

// Seconds a step spent by kind of work, for the benchmark's breakdown (DecoderModel::set_timers).
struct DecoderStepTimes {
  double projections = 0, attention = 0, norms = 0, activation = 0, lm_head_loss = 0;
};

class DecoderModel {
 public:
  // `max_positions`: the RoPE tables' length (the longest position the batches will use).
  DecoderModel(DecoderConfig config, int64_t max_positions);

  const DecoderConfig& config() const { return c_; }
  const DecoderLayout& layout() const { return layout_; }
  std::vector<float>& params() { return params_; }
  const std::vector<float>& params() const { return params_; }
  std::vector<float>& grads() { return grads_; }
  const std::vector<float>& grads() const { return grads_; }

  // Forward over the batch and the loss sums at its target rows; with `backward`, the gradients of
  // grad_scale * (sum of the rows' nll) ADDED into grads(). argmax (optional, [rows]): each target row's
  // prediction, -1 elsewhere.
  kernels::LmHeadLossSums step(const DecoderBatch& b, float grad_scale, bool backward,
                               int32_t* argmax = nullptr);
  // Logits of every row, [rows, V] (tests and generation).
  void logits(const DecoderBatch& b, float* out);
  // --gradient_checkpointing: forward keeps only each layer's input and backward recomputes the layer from
  // it (the same arithmetic, so the same bits), holding one layer's activations at a time.
  void set_gradient_checkpointing(bool on) { checkpointing_ = on; }
  // Where the following steps' time goes is added to `t` (null: not measured).
  void set_timers(DecoderStepTimes* t) { times_ = t; }

 private:
  struct LayerActs;
  // One layer: x (the residual stream) in and out; A what its backward reads.
  void forward_layer(const DecoderBatch& b, int64_t li, std::vector<float>& x, LayerActs& A);
  void forward_body(const DecoderBatch& b, std::vector<LayerActs>& acts, std::vector<float>& hidden,
                    std::vector<float>& final_rstd, std::vector<float>& x_final);
  void backward_body(const DecoderBatch& b, std::vector<LayerActs>& acts, std::vector<float>& dhidden,
                     const std::vector<float>& final_rstd, const std::vector<float>& x_final);
  const float* head_weight() const;

  DecoderConfig c_;
  DecoderLayout layout_;
  std::vector<float> params_, grads_;
  std::vector<kernels::RotaryTable> rope_;  // per DecoderConfig::ropes
  DecoderStepTimes* times_ = nullptr;
  bool checkpointing_ = false;
};

}  // namespace ct::model
