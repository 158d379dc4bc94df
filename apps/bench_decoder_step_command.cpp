// `coretrain bench decoder-step`: times forward + backward of a decoder with its causal-LM loss (every token
// a target) at a released model's shape or given dimensions, random init and tokens, and prints tokens/s, ms
// per step, model-FLOP utilization against the matmul peak measured in the same run, and peak RSS. --packed
// splits each row into documents end to end (positions restarting). bench/decoder_step_vs_torch.py runs it
// beside the plain-PyTorch reference and prints the ratio.
#include <sys/resource.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "apps/cli_checks.h"
#include "apps/command.h"
#include "core/error.h"
#include "core/fs.h"
#include "core/rng.h"
#include "kernels/peak.h"
#include "model/decoder_io.h"

namespace {

using nlohmann::json;

// Released configs' shapes (decoders.md §1.9), as config.json fields.
json preset(const std::string& name) {
  if (name == "smollm2-135m")
    return {{"model_type", "llama"},
            {"hidden_size", 576},
            {"intermediate_size", 1536},
            {"num_hidden_layers", 30},
            {"num_attention_heads", 9},
            {"num_key_value_heads", 3},
            {"vocab_size", 49152},
            {"rope_theta", 100000.0},
            {"tie_word_embeddings", true},
            {"rms_norm_eps", 1e-5},
            {"max_position_embeddings", 8192}};
  if (name == "qwen2.5-0.5b")
    return {{"model_type", "qwen2"},       {"hidden_size", 896},
            {"intermediate_size", 4864},   {"num_hidden_layers", 24},
            {"num_attention_heads", 14},   {"num_key_value_heads", 2},
            {"vocab_size", 151936},        {"rope_theta", 1000000.0},
            {"tie_word_embeddings", true}, {"max_position_embeddings", 32768}};
  if (name == "qwen3-0.6b")
    return {{"model_type", "qwen3"},
            {"hidden_size", 1024},
            {"intermediate_size", 3072},
            {"num_hidden_layers", 28},
            {"num_attention_heads", 16},
            {"num_key_value_heads", 8},
            {"head_dim", 128},
            {"vocab_size", 151936},
            {"rope_theta", 1000000.0},
            {"tie_word_embeddings", true},
            {"max_position_embeddings", 40960}};
  if (name == "gemma3-270m")
    return {{"model_type", "gemma3_text"},
            {"hidden_size", 640},
            {"intermediate_size", 2048},
            {"num_hidden_layers", 18},
            {"num_attention_heads", 4},
            {"num_key_value_heads", 1},
            {"head_dim", 256},
            {"vocab_size", 262144},
            {"sliding_window", 512},
            {"max_position_embeddings", 32768}};
  ct::fail("--preset: '", name, "' is not smollm2-135m, qwen2.5-0.5b, qwen3-0.6b or gemma3-270m");
}

double peak_rss_mb() {
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_maxrss) / 1024.0;
}

// Matmul FLOPs of one forward over `rows` tokens in documents of `doc` tokens: projections, the LM head, and
// the causal attention's two products over the lower triangle (and only the window on sliding layers).
double forward_flops(const ct::model::DecoderConfig& c, int64_t rows, int64_t doc) {
  const double h = static_cast<double>(c.hidden_size), d = static_cast<double>(c.head_dim);
  const double qkv = static_cast<double>(c.num_heads + 2 * c.num_kv_heads) * d;
  const double proj = 2.0 * rows * (h * qkv + c.num_heads * d * h + 3.0 * h * c.intermediate_size);
  double attn = 0.0;
  for (const auto& l : c.layers) {
    const double keys = l.window ? std::min<double>(l.window, (doc + 1) / 2.0) : (doc + 1) / 2.0;
    attn += 2.0 * 2.0 * rows * keys * c.num_heads * d;
  }
  return c.num_layers * proj + attn + 2.0 * rows * h * c.vocab_size;
}

int run_bench_decoder_step(int argc, char** argv) {
  CLI::App app{"Time decoder forward + backward with the causal-LM loss on random tokens",
               "coretrain bench decoder-step"};
  std::string name = "smollm2-135m", config_path;
  int64_t block = 1024, batch = 1, doc = 0, layers = 0;
  int steps = 2, warmup = 1;
  bool checkpointing = false;
  app.add_option("--preset", name, "smollm2-135m, qwen2.5-0.5b, qwen3-0.6b or gemma3-270m");
  app.add_option("--config", config_path, "a config.json instead of a preset");
  app.add_option("--block_size", block, "tokens per row")->transform(ct::app::kPositiveSize);
  app.add_option("--batch", batch, "rows per step")->transform(ct::app::kPositiveSize);
  app.add_option("--packed", doc, "documents of this many tokens end to end in each row (0: one per row)")
      ->check(ct::app::kNonNegative);
  app.add_option("--layers", layers, "override the layer count (0: the model's)")
      ->check(ct::app::kNonNegative);
  app.add_option("--steps", steps, "timed steps")->check(CLI::PositiveNumber);
  app.add_flag("--gradient_checkpointing", checkpointing, "recompute each layer in backward");
  app.add_option("--warmup", warmup, "untimed steps first")->check(ct::app::kNonNegative);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  json cj = config_path.empty() ? preset(name) : json::parse(ct::fs::read_file(config_path));
  if (layers > 0) cj["num_hidden_layers"] = layers;
  if (cj.value("model_type", "") == "gemma3_text") cj.erase("layer_types");
  const ct::model::DecoderConfig c =
      ct::model::decoder_config_from_json(cj, config_path.empty() ? name : config_path);
  ct::model::DecoderModel m(c, block);
  ct::model::init_decoder_weights(m, 1);
  m.set_gradient_checkpointing(checkpointing);
  const int64_t rows = block * batch, d = doc > 0 ? std::min(doc, block) : block;
  std::vector<int32_t> ids(rows), pos(rows), targets(rows);
  ct::Generator g(7);
  for (auto& x : ids) x = static_cast<int32_t>(g.below(static_cast<uint64_t>(c.vocab_size)));
  ct::model::DecoderBatch b;
  b.rows = rows;
  for (int64_t r0 = 0; r0 < rows; r0 += block)
    for (int64_t s = r0; s < r0 + block; s += d) {
      b.seq_start.push_back(s);
      b.seq_len.push_back(std::min(d, r0 + block - s));
    }
  for (size_t s = 0; s < b.seq_start.size(); ++s)
    for (int64_t i = 0; i < b.seq_len[s]; ++i) {
      const int64_t r = b.seq_start[s] + i;
      pos[r] = static_cast<int32_t>(i);
      targets[r] = i + 1 < b.seq_len[s] ? ids[r + 1] : -100;
    }
  b.input_ids = ids.data();
  b.position_ids = pos.data();
  b.targets = targets.data();
  int64_t n_targets = 0;
  for (int32_t t : targets) n_targets += t >= 0;
  double best = 1e30, total = 0.0;
  ct::model::DecoderStepTimes times;
  for (int s = 0; s < warmup + steps; ++s) {
    m.set_timers(s >= warmup ? &times : nullptr);
    std::fill(m.grads().begin(), m.grads().end(), 0.0f);
    const auto t0 = std::chrono::steady_clock::now();
    m.step(b, 1.0f / static_cast<float>(n_targets), true);
    const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (s >= warmup) {
      best = std::min(best, sec);
      total += sec;
    }
  }
  const double flops = 3.0 * forward_flops(c, rows, d);
  const double peak =
      ct::kernels::measure_matmul_gflops(ct::DType::f32, 1024, c.intermediate_size, c.hidden_size, 5, 0.5);
  const double accounted =
      times.projections + times.attention + times.norms + times.activation + times.lm_head_loss;
  std::printf(
      "{\"breakdown_ms\": {\"projections\": %.1f, \"attention\": %.1f, \"norms\": %.1f, "
      "\"activation\": %.1f, \"lm_head_loss\": %.1f, \"other\": %.1f}}\n",
      1e3 * times.projections / steps, 1e3 * times.attention / steps, 1e3 * times.norms / steps,
      1e3 * times.activation / steps, 1e3 * times.lm_head_loss / steps, 1e3 * (total - accounted) / steps);
  std::printf(
      "{\"model\": \"%s\", \"params\": %lld, \"block_size\": %lld, \"batch\": %lld, \"doc\": %lld, "
      "\"ms_per_step\": %.1f, \"best_ms\": %.1f, \"tokens_per_s\": %.1f, \"mfu\": %.3f, "
      "\"peak_gflops\": %.1f, \"peak_rss_mb\": %.0f}\n",
      name.c_str(), static_cast<long long>(m.layout().total), static_cast<long long>(block),
      static_cast<long long>(batch), static_cast<long long>(d), 1e3 * total / steps, 1e3 * best,
      rows / (total / steps), flops / best / 1e9 / peak, peak, peak_rss_mb());
  return 0;
}

}  // namespace

CT_COMMAND("bench decoder-step", "time decoder forward + backward with the causal-LM loss on random tokens",
           run_bench_decoder_step);
