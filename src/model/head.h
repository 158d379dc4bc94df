// A task head over the encoder body's final hidden state: what EncoderModel hands it (HeadPass) and what it
// does (forward to logits and loss, backward to the hidden state's gradient and its own parameters'). The
// heads are small: they read the family from the config and their tensors from ParamLayout::head.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "core/tensor.h"
#include "kernels/dropout.h"
#include "model/config.h"
#include "model/encoder_model.h"
#include "model/param_layout.h"

namespace ct::model {

// The body's pass as a head sees it.
struct HeadPass {
  const ModelConfig* config = nullptr;
  const ParamLayout* layout = nullptr;
  DType dt = DType::f32;  // matmul operand type (bf16: autocast)
  int64_t B = 0, T = 0, N = 0, H = 0;
  const std::vector<int64_t>* cu = nullptr;    // packed: sequence b is rows [cu[b], cu[b + 1]); empty padded
  const float* P = nullptr;                    // parameter slab
  float* G = nullptr;                          // gradient slab
  std::function<const void*(int64_t)> weight;  // matmul operand of a slab tensor
  // The dropout site of head dropout `id` (0, 1, ...) over `row_elems`-wide rows (per-row keys).
  std::function<kernels::DropoutSite(double p, uint64_t id, int64_t row_elems)> site;
  bool accumulate = false;
  float loss_scale = 1.0f;

  bool packed() const { return cu && !cu->empty(); }
  // First token row of sequence b.
  int64_t first_row(int64_t b) const { return packed() ? (*cu)[b] : b * T; }
};

class Head {
 public:
  virtual ~Head() = default;
  // hidden: the final hidden state [N, H] in the run precision, valid until backward; hidden_f32: the same in
  // f32, valid during this call only. Returns the loss, NaN without labels.
  virtual float forward(const HeadPass& pass, const Batch& batch, const void* hidden,
                        const float* hidden_f32) = 0;
  virtual const std::vector<float>& logits() const = 0;
  virtual bool has_loss() const = 0;
  // Writes d loss / d hidden (times loss_scale) into dhidden [N, H] (OVERWRITES) and ADDS the head's
  // parameter gradients into pass.G (the caller zeroes the head's range unless accumulating; a tied decoder
  // adds into the word embeddings' rows, zeroed before the head runs).
  virtual void backward(const HeadPass& pass, float* dhidden) = 0;
  // When this forward will read only some rows of the hidden state (and backward write zeros elsewhere):
  // true, with those token rows in `rows`, ascending; the body may then leave the last layer's other rows
  // uncomputed. False: every row.
  virtual bool rows_read(const HeadPass&, const Batch&, std::vector<int64_t>&) const { return false; }
};

std::unique_ptr<Head> make_span_head();
std::unique_ptr<Head> make_sequence_head(HeadKind kind);  // sequence classification, multiple choice
std::unique_ptr<Head> make_token_classification_head();
std::unique_ptr<Head> make_masked_lm_head();

}  // namespace ct::model
