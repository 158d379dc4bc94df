// What the Trainer drives (train/trainer.h, task_runner.h, ddp_reducer.h, node_shard.h, checkpoints): a model
// over one flat f32 parameter slab and a gradient slab of the same layout (ParamInfo, HF names), run on a
// collated Batch. The encoders (model/encoder_model.h: a body and one of model/heads/) and the decoders
// (model/causal_lm_model.h: the decoder body and its causal-LM head) implement it, so the training loop,
// data parallelism, the optimizer and checkpoints are one flow for every task.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "core/bf16.h"
#include "core/row_set.h"
#include "kernels/row_flags.h"
#include "model/param_info.h"

namespace ct::model {

enum class Precision { f32, bf16 };

// What --bf16 runs here: bf16 where the CPU has AVX512-BF16 or AMX. Elsewhere f32, with one warning, since
// bf16 arithmetic there runs on f32 units and only costs time; CORETRAIN_BF16_EMULATE=1 runs it anyway (to
// get a bf16 run's numbers on any machine). f32 when bf16 is not requested.
Precision resolve_precision(bool bf16_requested);

// One batch of features, row-major [B, T]. Pointers are borrowed for the duration of forward/backward.
//
// Packed (seq_lens set): the B features are laid end to end with no padding, N = sum(seq_lens) tokens;
// input_ids/token_type_ids (and per-token labels) are [N], attention_mask must be null, per-token logits come
// out [N] in the same order, each feature attends over its own tokens, and a sequence head reads each
// feature's first token. T is the padded length the batch replaces (every length <= T): dropout then draws
// exactly the masks the padded batch [B, T] would, so real tokens get the padded computation's values
// whenever pads cannot change them (HF's dynamic padding).
struct Batch {
  int64_t B = 0, T = 0;
  const int32_t* seq_lens = nullptr;  // [B] optional: packed layout (see above)
  const int32_t* input_ids = nullptr;
  const int32_t* token_type_ids = nullptr;  // optional (zeros when null; DistilBERT: ignored)
  const int32_t* attention_mask = nullptr;  // optional 0/1 (null: attend everywhere)
  const int32_t* start_positions =
      nullptr;  // span head: [B], optional; outside [0, T) means "ignored" as in HF
  const int32_t* end_positions = nullptr;  // span head: [B], optional (both or neither)
  // Other heads' labels, optional (no labels: logits only, NaN loss):
  //   sequence classification: labels [B] (single label) or float_labels [B, num_labels] (regression,
  //     multi-label); multiple choice: labels [B / num_choices];
  //   token classification and masked LM: labels per token ([B, T] or [N] packed), -100 = ignored (masked LM:
  //     the vocabulary projection runs only where a label is set).
  //   causal LM: per token and already shifted (token t is trained to predict labels[t]; -100 = none, as at
  //     each sequence's last token), so counting labels counts the loss's targets.
  const int32_t* labels = nullptr;
  const float* float_labels = nullptr;
  int64_t num_choices = 0;  // multiple choice: rows are examples x choices, B % num_choices == 0
};

struct StepOptions {
  bool train = false;  // dropout on (and activations kept for backward either way)
  uint64_t seed = 42;  // dropout key: (seed, step, site)
  uint64_t step = 0;
  // Optional [B] per-row dropout keys (replacing `step`): row b's masks are a function of (seed, row_keys[b],
  // site) only, so a feature drops the same units whichever rank and batch row train it (data parallelism
  // with any world size replays one trajectory).
  std::vector<uint64_t> row_keys;
  // false (inference, e.g. evaluation): each layer's activations overwrite the previous layer's, so memory
  // holds one layer's worth instead of all of them (torch.no_grad()); backward() then refuses.
  bool keep_activations = true;
  // Compute every row of the last layer even when the head reads only some rows (Head::rows_read; the body
  // otherwise skips the others): the two give the same results up to the order of sums; tests compare them.
  bool every_row = false;
};

// Called once per parameter as its gradient becomes final during backward, in descending slab offset order:
// (offset, count) of the parameter in the gradient slab.
using GradReadyFn = std::function<void(int64_t offset, int64_t count)>;

// The word embeddings as a [rows, width] tensor of the slab: where the optimizer, the norm and DDP may skip
// rows whose gradient is known to be zero.
struct WordEmbeddingRows {
  int64_t offset = 0, rows = 0, width = 0;
};

class Model {
 public:
  virtual ~Model() = default;

  // ---- parameters
  virtual const std::vector<ParamInfo>& params() const = 0;
  virtual int64_t num_params() const = 0;
  // Writable access marks the weights changed (low-precision copies refresh on the next forward).
  virtual float* params_data() = 0;
  virtual const float* params_data() const = 0;
  // The gradient slab (zeros until a backward writes it); may be allocated by the first call.
  virtual float* grads_data() = 0;
  virtual const float* grads_data() const = 0;
  // Call after writing through a pointer obtained earlier (every optimizer step). low_precision_written: the
  // writer also refreshed low_precision_weights().
  virtual void mark_weights_changed(bool low_precision_written = false) = 0;
  // bf16 copies of the parameters laid out like the slab, or null (an f32 run).
  virtual bf16* low_precision_weights() = 0;
  // Whether use_external_weights() works: the Trainer then keeps the node's one copy of the weights in
  // shared memory (train/node_shard.h); otherwise every rank updates its own copy.
  virtual bool can_use_external_weights() const { return true; }
  virtual void use_external_weights(float* params, bf16* weights_bf16) = 0;

  virtual Precision precision() const = 0;
  // The precision of the next forward (--bf16_full_eval); fails in one line where the model has no such
  // precision.
  virtual void set_precision(Precision precision) = 0;

  // ---- the word embeddings' rows (train/trainer.cpp: sparse norm, clipping, AdamW and DDP)
  virtual WordEmbeddingRows word_embedding() const = 0;
  // True while only the embedding lookup writes the word embeddings' gradient.
  virtual bool word_embedding_grad_is_lookup_only() const = 0;
  // Rows of the word embeddings' gradient that may be non-zero (every row: nothing known).
  virtual RowSet& word_grad_rows() = 0;
  // `rows` as the norm, clipping and optimizer kernels take them (every row when rows.all()).
  virtual kernels::RowFlags word_embedding_rows(const RowSet& rows) const = 0;

  // ---- compute
  // The batch's loss (NaN without labels); the head's evaluation output in logits().
  virtual float forward(const Batch& batch, const StepOptions& options) = 0;
  virtual const std::vector<float>& logits() const = 0;
  // Backward of the last forward's loss times loss_scale; accumulate=false overwrites the gradient slab.
  // on_ready fires per parameter as its gradient is final, in descending slab offset order.
  virtual void backward(const GradReadyFn& on_ready = {}, float loss_scale = 1.0f,
                        bool accumulate = false) = 0;
  // One training micro-batch: forward then backward, returning the loss. A model whose forward and backward
  // are one pass (the decoder) overrides it.
  virtual float forward_backward(const Batch& batch, const StepOptions& options, const GradReadyFn& on_ready,
                                 float loss_scale, bool accumulate) {
    const float loss = forward(batch, options);
    backward(on_ready, loss_scale, accumulate);
    return loss;
  }

  // ---- accounting and files
  // Matmul FLOPs of one forward over sequences of these lengths (MFU).
  virtual double forward_matmul_flops(std::span<const int64_t> lengths) const = 0;
  // HF's floating_point_ops per token: 6 x the parameters outside the embeddings.
  virtual double flos_per_token() const = 0;
  // The [tokens, hidden] x [hidden, intermediate] product whose speed the MFU is measured against.
  virtual int64_t hidden_size() const = 0;
  virtual int64_t intermediate_size() const = 0;
  // config.json's text as save_pretrained writes it.
  virtual std::string config_json() const = 0;
};

}  // namespace ct::model
