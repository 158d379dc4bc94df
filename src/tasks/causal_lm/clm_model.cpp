#include "tasks/causal_lm/clm_model.h"

#include <cmath>
#include <filesystem>
#include <vector>

#include "core/error.h"
#include "core/fs.h"
#include "core/log.h"
#include "core/rng.h"
#include "kernels/linear.h"
#include "tasks/config_overrides.h"

namespace ct::tasks {
namespace {

using nlohmann::json;

// LlamaConfig() of transformers 4.5x: head_dim and num_key_value_heads are resolved by __init__, so an
// override of hidden_size or num_attention_heads leaves them as they are (as update_from_string does).
json llama_defaults() {
  return json{{"model_type", "llama"},
              {"architectures", json::array({"LlamaForCausalLM"})},
              {"vocab_size", 32000},
              {"hidden_size", 4096},
              {"intermediate_size", 11008},
              {"num_hidden_layers", 32},
              {"num_attention_heads", 32},
              {"num_key_value_heads", 32},
              {"head_dim", 128},
              {"hidden_act", "silu"},
              {"max_position_embeddings", 2048},
              {"initializer_range", 0.02},
              {"rms_norm_eps", 1e-6},
              {"use_cache", true},
              {"bos_token_id", 1},
              {"eos_token_id", 2},
              {"pretraining_tp", 1},
              {"tie_word_embeddings", false},
              {"rope_theta", 10000.0},
              {"rope_scaling", nullptr},
              {"attention_bias", false},
              {"attention_dropout", 0.0},
              {"mlp_bias", false}};
}

// Rows [old_rows, new_rows) of the [new_rows, h] table at `t`, from the first old_rows: the mean, plus a
// draw of N(0, 1e-9 cov) when the covariance is positive-definite (its Cholesky factor exists).
void mean_resize(float* t, int64_t old_rows, int64_t new_rows, int64_t h, Generator& g) {
  std::vector<double> mean(static_cast<size_t>(h), 0.0);
  for (int64_t r = 0; r < old_rows; ++r)
    for (int64_t c = 0; c < h; ++c) mean[c] += t[r * h + c];
  for (double& m : mean) m /= static_cast<double>(old_rows);
  // cov = Xc^T Xc / n as one product: the centred table transposed, times itself.
  std::vector<float> xt(static_cast<size_t>(h * old_rows)), cov(static_cast<size_t>(h * h));
  for (int64_t r = 0; r < old_rows; ++r)
    for (int64_t c = 0; c < h; ++c) xt[c * old_rows + r] = static_cast<float>(t[r * h + c] - mean[c]);
  kernels::linear_forward(cov.data(), DType::f32, xt.data(), xt.data(), nullptr, h, old_rows, h, DType::f32);
  std::vector<double> L(static_cast<size_t>(h * h), 0.0);
  bool pd = true;
  for (int64_t i = 0; i < h && pd; ++i)
    for (int64_t j = 0; j <= i && pd; ++j) {
      double s = 1e-9 * cov[i * h + j] / static_cast<double>(old_rows);
      for (int64_t k = 0; k < j; ++k) s -= L[i * h + k] * L[j * h + k];
      if (i == j) {
        pd = s > 0;
        if (pd) L[i * h + i] = std::sqrt(s);
      } else {
        L[i * h + j] = s / L[j * h + j];
      }
    }
  if (!pd)
    log::warn(
        "resize_token_embeddings: the old embeddings' covariance is not positive-definite; the "
        "new rows are their mean");
  std::vector<double> z(static_cast<size_t>(h));
  for (int64_t r = old_rows; r < new_rows; ++r) {
    for (double& v : z) v = pd ? g.normal() : 0.0;
    for (int64_t i = 0; i < h; ++i) {
      double v = mean[i];
      for (int64_t k = 0; pd && k <= i; ++k) v += L[i * h + k] * z[k];
      t[r * h + i] = static_cast<float>(v);
    }
  }
}

}  // namespace

model::DecoderConfig scratch_decoder_config(const std::string& model_type, const std::string& overrides) {
  if (model_type != "llama")
    fail("--model_type: '", model_type,
         "' is not a type coretrain clm trains from scratch in this version (llama; other families train "
         "from a model folder's config.json via --config_name or --model_name_or_path)");
  json j = llama_defaults();
  update_from_string(j, overrides, model_type, [&](const std::string& k) {
    return j.contains(k) && !j[k].is_null() && k != "model_type" && k != "architectures";
  });
  return model::decoder_config_from_json(
      j, overrides.empty() ? "--model_type " + model_type : "--config_overrides");
}

std::unique_ptr<model::CausalLmModel> resize_token_embeddings(const model::CausalLmModel& from, int64_t vocab,
                                                              int64_t max_positions, uint64_t seed) {
  model::DecoderConfig c = from.config();
  const int64_t old_vocab = c.vocab_size, h = c.hidden_size;
  CT_CHECK(vocab >= old_vocab, "resize_token_embeddings: ", vocab, " rows < ", old_vocab);
  c.vocab_size = vocab;
  auto out = std::make_unique<model::CausalLmModel>(c, max_positions);
  const model::DecoderLayout& a = from.decoder().layout();
  const model::DecoderLayout& b = out->decoder().layout();
  CT_CHECK(a.params.size() == b.params.size(), "resize_token_embeddings: layouts differ");
  const float* src = from.params_data();
  float* dst = out->params_data();
  for (size_t i = 0; i < a.params.size(); ++i)
    std::copy_n(src + a.params[i].offset, a.params[i].numel(), dst + b.params[i].offset);
  Generator g(seed);
  mean_resize(dst + b.embed, old_vocab, vocab, h, g);
  if (b.lm_head >= 0) mean_resize(dst + b.lm_head, old_vocab, vocab, h, g);
  return out;
}

json generation_config(const model::DecoderConfig& c, const std::string& model_dir) {
  const std::string own = model_dir.empty() ? std::string() : model_dir + "/generation_config.json";
  std::error_code ec;
  if (!own.empty() && std::filesystem::exists(own, ec)) {
    try {
      return json::parse(fs::read_file(own));
    } catch (const json::exception& e) {
      fail(own, ": not JSON (", e.what(), ")");
    }
  }
  json g{{"_from_model_config", true}};
  if (c.bos_token_id >= 0) g["bos_token_id"] = c.bos_token_id;
  if (c.eos_token_ids.size() == 1) g["eos_token_id"] = c.eos_token_ids[0];
  if (c.eos_token_ids.size() > 1) g["eos_token_id"] = c.eos_token_ids;
  if (c.pad_token_id >= 0) g["pad_token_id"] = c.pad_token_id;
  return g;
}

}  // namespace ct::tasks
