#include "model/causal_lm_model.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.h"
#include "model/decoder_io.h"

namespace ct::model {

CausalLmModel::CausalLmModel(DecoderConfig config, int64_t max_positions)
    : m_(std::move(config), max_positions), every_row_(m_.config().vocab_size, /*all=*/true) {}

void CausalLmModel::use_external_weights(float* /*params*/, bf16* /*weights_bf16*/) {
  fail("decoder: the weights cannot move to external storage (can_use_external_weights() is false)");
}

void CausalLmModel::set_precision(Precision precision) {
  if (precision == Precision::bf16)
    fail("--bf16_full_eval: the decoder body is f32-only in this version (run without it)");
}

WordEmbeddingRows CausalLmModel::word_embedding() const {
  return {m_.layout().embed, config().vocab_size, config().hidden_size};
}

kernels::RowFlags CausalLmModel::word_embedding_rows(const RowSet& /*rows*/) const {
  return {m_.layout().embed, config().vocab_size, config().hidden_size, nullptr};
}

CausalLmModel::Packed CausalLmModel::pack(const Batch& b) const {
  CT_CHECK(b.attention_mask == nullptr,
           "causal LM: a batch with padding must come packed (seq_lens), not with an attention mask");
  Packed p;
  int64_t rows = 0;
  for (int64_t r = 0; r < b.B; ++r) {
    const int64_t len = b.seq_lens ? b.seq_lens[r] : b.T;
    p.batch.seq_start.push_back(rows);
    p.batch.seq_len.push_back(len);
    for (int64_t t = 0; t < len; ++t) p.positions.push_back(static_cast<int32_t>(t));
    rows += len;
  }
  p.ids.assign(b.input_ids, b.input_ids + rows);
  p.targets.assign(static_cast<size_t>(rows), -100);
  if (b.labels) std::copy_n(b.labels, rows, p.targets.begin());
  for (int32_t t : p.targets) p.targets_count += t >= 0;
  p.batch.rows = rows;
  p.batch.input_ids = p.ids.data();
  p.batch.position_ids = p.positions.data();
  p.batch.targets = p.targets.data();
  return p;
}

float CausalLmModel::run(const Packed& p, float loss_scale, bool backward, bool accumulate,
                         const GradReadyFn& on_ready) {
  if (backward && !accumulate) std::fill(m_.grads().begin(), m_.grads().end(), 0.0f);
  const int64_t n = p.targets_count;
  // The loss is the batch's mean over its targets, so d(loss_scale * loss) / d(a target's nll) is
  // loss_scale / n.
  const float grad_scale = n > 0 ? loss_scale / static_cast<float>(n) : 0.0f;
  std::vector<int32_t> arg(static_cast<size_t>(p.batch.rows));
  const kernels::LmHeadLossSums sums = m_.step(p.batch, grad_scale, backward, arg.data());
  argmax_.assign(arg.begin(), arg.end());
  if (backward && on_ready) {
    // The decoder's gradients are all final together: every parameter in descending offset order.
    const auto& ps = params();
    for (auto it = ps.rbegin(); it != ps.rend(); ++it) on_ready(it->offset, it->numel());
  }
  if (n == 0) return std::numeric_limits<float>::quiet_NaN();
  return static_cast<float>(sums.nll / static_cast<double>(n));
}

float CausalLmModel::forward(const Batch& batch, const StepOptions& options) {
  Packed p = pack(batch);
  const float loss = run(p, 0.0f, /*backward=*/false, /*accumulate=*/true, {});
  if (options.keep_activations) last_ = std::move(p);
  return loss;
}

void CausalLmModel::backward(const GradReadyFn& on_ready, float loss_scale, bool accumulate) {
  CT_CHECK(!last_.ids.empty(), "decoder: backward() without a forward() that kept its activations");
  run(last_, loss_scale, /*backward=*/true, accumulate, on_ready);
}

float CausalLmModel::forward_backward(const Batch& batch, const StepOptions& /*options*/,
                                      const GradReadyFn& on_ready, float loss_scale, bool accumulate) {
  return run(pack(batch), loss_scale, /*backward=*/true, accumulate, on_ready);
}

double CausalLmModel::forward_matmul_flops(std::span<const int64_t> lengths) const {
  const DecoderConfig& c = config();
  const double h = static_cast<double>(c.hidden_size), d = static_cast<double>(c.head_dim);
  const double H = static_cast<double>(c.num_heads), KV = static_cast<double>(c.num_kv_heads);
  const double I = static_cast<double>(c.intermediate_size), V = static_cast<double>(c.vocab_size);
  const double L = static_cast<double>(c.num_layers);
  // q|k|v, o, gate|up, down per token and layer.
  const double per_token = 2.0 * L * (h * (H + 2 * KV) * d + H * d * h + 2 * h * I + I * h);
  double total = 0;
  for (const int64_t n64 : lengths) {
    const double n = static_cast<double>(n64);
    total += n * per_token;
    total += L * 2.0 * 2.0 * H * d * n * (n + 1) / 2;  // QK^T and PV over the causal pairs
    total += 2.0 * std::max(0.0, n - 1) * h * V;       // the head at the targets
  }
  return total;
}

double CausalLmModel::flos_per_token() const {
  // transformers' num_parameters(exclude_embeddings=True): the embedding table out (a tied head with it).
  const int64_t embed = config().vocab_size * config().hidden_size;
  return 6.0 * static_cast<double>(num_params() - embed);
}

std::string CausalLmModel::config_json() const {
  return decoder_config_text(config());
}

}  // namespace ct::model
