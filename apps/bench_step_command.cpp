// `coretrain bench step`: times full training steps (forward, backward, grad clipping, AdamW) of a BERT (or
// DistilBERT) QA model on random tokens and prints samples/s, ms/step, model-FLOP utilization on real tokens
// against the matmul peak measured on this machine in the same run, and peak RSS. --lengths gives rows real
// lengths (the rest padding), --packed runs them unpadded (tokens end to end). bench/step_vs_torch.py runs it
// beside PyTorch and prints the ratio.
#include <sys/resource.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "apps/cli_checks.h"
#include "apps/command.h"
#include "core/error.h"
#include "core/parallel.h"
#include "core/rng.h"
#include "core/row_set.h"
#include "kernels/grad_norm.h"
#include "kernels/optimizer.h"
#include "kernels/peak.h"
#include "model/encoder_model.h"
#include "model/flops.h"

namespace {

// Per matmul-peak probe: enough repetitions that a stall of the host does not cover all of them.
constexpr double kPeakProbeSeconds = 0.5;

using ct::model::ModelConfig;
using ct::model::Precision;

double peak_rss_mb() {
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

// Minor page faults so far: a steady-state step that maps fresh memory (buffers freed and allocated again,
// returned to the kernel by malloc) shows here as thousands per step, independent of the machine's load.
int64_t minor_faults() {
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<int64_t>(ru.ru_minflt);
}

int run_bench_step(int argc, char** argv) {
  CLI::App app{"Time encoder training steps (forward, backward, clip, AdamW) on random tokens",
               "coretrain bench step"};
  int64_t layers = 12, hidden = 768, heads = 12, intermediate = 3072, seq = 384, batch = 4, vocab = 30522;
  int steps = 3, warmup = 1;
  bool bf16 = false, distilbert = false, packed = false;
  std::string model_type = "bert", head_name = "qa";
  int64_t embedding_size = 0;
  std::vector<int64_t> lengths;
  uint64_t seed = 42;
  app.add_option("--layers", layers, "encoder layers")->transform(ct::app::kPositiveSize);
  app.add_option("--hidden", hidden, "hidden size")->transform(ct::app::kPositiveSize);
  app.add_option("--heads", heads, "attention heads")->transform(ct::app::kPositiveSize);
  app.add_option("--intermediate", intermediate, "FFN size")->transform(ct::app::kPositiveSize);
  app.add_option("--seq", seq, "sequence length")->transform(ct::app::kPositiveSize);
  app.add_option("--batch", batch, "batch size")->transform(ct::app::kPositiveSize);
  app.add_option("--vocab", vocab, "vocabulary size")->transform(ct::app::kPositiveSize);
  app.add_option("--steps", steps, "timed steps")->check(ct::app::kPositive);
  app.add_option("--warmup", warmup, "untimed steps first")->check(ct::app::kNonNegative);
  app.add_option("--seed", seed, "init / data / dropout seed");
  app.add_flag("--bf16", bf16, "bf16 matmuls with f32 master weights (autocast-style)");
  app.add_flag("--distilbert", distilbert,
               "DistilBERT instead of BERT (no token types); --model_type distilbert");
  app.add_option("--model_type", model_type,
                 "bert, distilbert, roberta, xlm-roberta, camembert, electra, modernbert or deberta-v2")
      ->check(CLI::IsMember({"bert", "distilbert", "roberta", "xlm-roberta", "camembert", "electra",
                             "modernbert", "deberta-v2"}));
  app.add_option("--head", head_name,
                 "qa, seq-cls, token-cls, mlm or multiple-choice (4 choices per example)")
      ->check(CLI::IsMember({"qa", "seq-cls", "token-cls", "mlm", "multiple-choice"}));
  app.add_option("--embedding_size", embedding_size, "ELECTRA's embedding width (default: --hidden)")
      ->check(ct::app::kNonNegative);
  app.add_option(
         "--lengths", lengths,
         "real tokens of each row, cycled over the batch (default: every row --seq long); the rest is "
         "padding")
      ->delimiter(',')
      ->check(CLI::PositiveNumber);
  app.add_flag("--packed", packed, "run the rows unpadded, tokens end to end (--pad_to_max_length False)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }

  if (distilbert) model_type = "distilbert";
  distilbert = model_type == "distilbert";
  const ct::model::HeadKind head = ct::model::head_from_name(head_name);
  ModelConfig c;
  c.model_type = model_type;
  c.vocab_size = vocab;
  c.hidden_size = hidden;
  c.num_hidden_layers = layers;
  c.num_attention_heads = heads;
  c.intermediate_size = intermediate;
  c.max_position_embeddings = std::max<int64_t>(512, seq);
  c.type_vocab_size = distilbert ? 0 : 2;
  if (c.is_roberta_like()) {  // roberta-base's shape of the embeddings
    c.positions = ct::model::PositionScheme::after_padding_idx;
    c.pad_token_id = 1;
    c.type_vocab_size = 1;
    c.layer_norm_eps = 1e-5;
    c.max_position_embeddings = std::max<int64_t>(514, seq + 2);
  }
  if (c.is_electra() && embedding_size > 0) c.embedding_size = embedding_size;
  if (c.is_modernbert()) {  // ModernBERT-base's attention pattern and norms (sizes from the flags)
    c.type_vocab_size = 0;
    c.max_position_embeddings = std::max<int64_t>(8192, seq);
    c.global_attn_every_n_layers = 3;
    c.local_attention = 128;
    c.layer_norm_eps = 1e-5;
    c.hidden_dropout_prob = c.attention_probs_dropout_prob = 0.0;
    c.classifier_dropout = 0.0;
  }
  if (c.is_deberta()) {  // deberta-v3-base's attention and embeddings
    c.type_vocab_size = 0;
    c.layer_norm_eps = 1e-7;
    c.relative_attention = c.share_att_key = c.norm_rel_ebd = true;
    c.position_biased_input = false;
    c.position_buckets = 256;
    c.pos_att_type = {"p2c", "c2p"};
  }
  constexpr int64_t kChoices = 4;
  c.num_labels = head == ct::model::HeadKind::token_classification ? 9 : 2;
  CT_CHECK(head != ct::model::HeadKind::multiple_choice || batch % kChoices == 0,
           "--head multiple-choice: --batch ", batch, " is not a multiple of the ", kChoices, " choices");
  CT_CHECK(hidden % heads == 0, "--hidden ", hidden, " is not divisible by --heads ", heads);
  if (lengths.empty()) lengths.push_back(seq);
  for (int64_t len : lengths) CT_CHECK(len <= seq, "--lengths: ", len, " is longer than --seq ", seq);
  std::vector<int64_t> row_len(static_cast<size_t>(batch));
  for (int64_t b = 0; b < batch; ++b) row_len[b] = lengths[static_cast<size_t>(b) % lengths.size()];

  ct::model::EncoderModel model(c, head, ct::model::resolve_precision(bf16));
  model.init_weights(seed);
  const bool ran_bf16 = model.precision() == Precision::bf16;

  // Random features: a question segment then a context segment, a span inside the context.
  ct::Generator gen(seed + 1);
  const int64_t N = batch * seq;
  const int32_t pad = static_cast<int32_t>(c.pad_token_id);
  std::vector<int32_t> ids(N, pad), types(N, 0), mask(N, 0), start(batch), end(batch), lens32, labels;
  int64_t real_tokens = 0;
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t len = row_len[b];
    for (int64_t t = 0; t < len; ++t) {
      ids[b * seq + t] = static_cast<int32_t>(2 + gen.below(static_cast<uint64_t>(vocab - 2)));
      types[b * seq + t] = t >= len / 4 && c.type_vocab_size > 1 ? 1 : 0;
      mask[b * seq + t] = 1;
    }
    start[b] =
        static_cast<int32_t>(len / 4 + gen.below(static_cast<uint64_t>(std::max<int64_t>(1, len / 2))));
    end[b] = static_cast<int32_t>(std::min<int64_t>(len - 1, start[b] + gen.below(8)));
    real_tokens += len;
    lens32.push_back(static_cast<int32_t>(len));
  }
  // Labels of the other heads: a class per row or per token, or run_mlm's 15% of tokens masked.
  const bool per_token =
      head == ct::model::HeadKind::token_classification || head == ct::model::HeadKind::masked_lm;
  if (head == ct::model::HeadKind::sequence_classification)
    for (int64_t b = 0; b < batch; ++b) labels.push_back(static_cast<int32_t>(gen.below(2)));
  if (head == ct::model::HeadKind::multiple_choice)
    for (int64_t e = 0; e < batch / kChoices; ++e)
      labels.push_back(static_cast<int32_t>(gen.below(kChoices)));
  if (per_token) {
    labels.assign(N, -100);
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t t = 0; t < row_len[b]; ++t) {
        if (head == ct::model::HeadKind::token_classification)
          labels[b * seq + t] = static_cast<int32_t>(gen.below(9));
        else if (gen.below(100) < 15)
          labels[b * seq + t] = ids[b * seq + t];
      }
  }
  if (packed) {  // the real tokens end to end
    std::vector<int32_t> pi, pt;
    for (int64_t b = 0; b < batch; ++b) {
      pi.insert(pi.end(), ids.begin() + b * seq, ids.begin() + b * seq + row_len[b]);
      pt.insert(pt.end(), types.begin() + b * seq, types.begin() + b * seq + row_len[b]);
    }
    ids = std::move(pi);
    types = std::move(pt);
    if (per_token) {
      std::vector<int32_t> pl;
      for (int64_t b = 0; b < batch; ++b)
        pl.insert(pl.end(), labels.begin() + b * seq, labels.begin() + b * seq + row_len[b]);
      labels = std::move(pl);
    }
  }
  ct::model::Batch bt;
  bt.B = batch;
  bt.T = seq;
  bt.input_ids = ids.data();
  bt.token_type_ids = distilbert ? nullptr : types.data();
  bt.attention_mask = packed ? nullptr : mask.data();
  bt.seq_lens = packed ? lens32.data() : nullptr;
  if (head == ct::model::HeadKind::span) {
    bt.start_positions = start.data();
    bt.end_positions = end.data();
  } else {
    bt.labels = labels.data();
    bt.num_choices = head == ct::model::HeadKind::multiple_choice ? kChoices : 0;
  }

  const int64_t P = model.num_params();
  std::vector<float> exp_avg(P, 0.0f), exp_avg_sq(P, 0.0f);
  std::vector<ct::kernels::SlabRange> ranges;
  for (const auto& p : model.params()) ranges.push_back({p.offset, p.numel(), p.decay});
  ct::RowSet touched(c.vocab_size);  // word-embedding rows that ever had a gradient
  ct::kernels::AdamWHyper hyper;
  hyper.lr = 3e-5;
  hyper.weight_decay = 0.01;

  std::printf(
      "bench step: %s %s, %lld layers, hidden %lld, heads %lld, intermediate %lld, seq %lld, batch %lld, "
      "vocab %lld, %s, %d threads, %lld parameters, %lld real tokens of %lld (%s)\n",
      c.model_type.c_str(), head_name.c_str(), static_cast<long long>(layers), static_cast<long long>(hidden),
      static_cast<long long>(heads), static_cast<long long>(intermediate), static_cast<long long>(seq),
      static_cast<long long>(batch), static_cast<long long>(vocab), ran_bf16 ? "bf16" : "f32",
      ct::num_threads(), static_cast<long long>(P), static_cast<long long>(real_tokens),
      static_cast<long long>(N), packed ? "packed" : "padded");
  std::fflush(stdout);

  // The peak of the model's biggest matmul shape (FFN: [B*T, H] x [H, I]) in the run's precision, probed
  // before the steps and again after them, the best of both: one probe of a fraction of a second read half
  // the usual peak on a shared VM now and then ("MFU 131%").
  const ct::DType peak_dt = ct::kernels::peak_dtype(ran_bf16 ? ct::DType::bf16 : ct::DType::f32);
  const double peak_before =
      ct::kernels::measure_matmul_gflops(peak_dt, N, intermediate, hidden, 5, kPeakProbeSeconds);

  std::vector<double> times;
  float loss = 0.0f;
  int64_t faults = 0;  // over the timed steps
  for (int s = 0; s < warmup + steps; ++s) {
    using clock = std::chrono::steady_clock;
    const int64_t faults0 = minor_faults();
    const auto t0 = clock::now();
    loss = model.forward(bt, ct::model::StepOptions{true, seed, static_cast<uint64_t>(s), {}});
    const auto t1 = clock::now();
    model.backward();
    const auto t2 = clock::now();
    // As the trainer: the word embeddings' untouched rows skipped exactly, clipping's coefficient and the
    // bf16 weight copies applied and written by the update itself.
    const ct::kernels::RowFlags live = model.word_embedding_rows(model.word_grad_rows());
    float grad_scale =
        ct::kernels::clip_coefficient(ct::kernels::grad_norm(model.grads_data(), P, live), 1.0);
    if (std::isnan(grad_scale)) {
      ct::kernels::scale_grads(model.grads_data(), P, grad_scale, live);
      model.word_grad_rows().add_all();
      grad_scale = 1.0f;
    }
    touched.add(model.word_grad_rows());
    ct::kernels::adamw_step(model.params_data(), model.grads_data(), exp_avg.data(), exp_avg_sq.data(),
                            ranges, hyper, s + 1, model.low_precision_weights(),
                            model.word_embedding_rows(touched), grad_scale);
    model.mark_weights_changed(/*low_precision_written=*/model.low_precision_weights() != nullptr);
    const auto t3 = clock::now();
    const int64_t step_faults = minor_faults() - faults0;
    auto ms = [](clock::time_point a, clock::time_point b) {
      return std::chrono::duration<double, std::milli>(b - a).count();
    };
    const double sec = ms(t0, t3) / 1e3;
    std::printf(
        "  step %d%s: %.1f ms (forward %.1f, backward %.1f, clip+AdamW %.1f), loss %.4f, %lld minor faults\n",
        s, s < warmup ? " (warm-up)" : "", sec * 1e3, ms(t0, t1), ms(t1, t2), ms(t2, t3), loss,
        static_cast<long long>(step_faults));
    std::fflush(stdout);
    if (s >= warmup) {
      times.push_back(sec);
      faults += step_faults;
    }
  }
  double total = 0;
  for (double t : times) total += t;
  const double sec_per_step = total / static_cast<double>(times.size());
  const double samples_per_s = static_cast<double>(batch) / sec_per_step;
  int64_t projected = 0;  // masked LM: the tokens the vocabulary projection runs on
  if (head == ct::model::HeadKind::masked_lm)
    for (int32_t l : labels) projected += l != -100;
  const double model_flops =
      3.0 * ct::model::forward_matmul_flops(c, row_len, head, projected);  // real tokens
  const double achieved = model_flops / sec_per_step / 1e9;
  const double faults_per_step = static_cast<double>(faults) / static_cast<double>(times.size());
  // The steps' peak: the probes' matrices are smaller than the steps' activations.
  const double rss_mb = peak_rss_mb();
  const double peak_after =
      ct::kernels::measure_matmul_gflops(peak_dt, N, intermediate, hidden, 5, kPeakProbeSeconds);
  const double peak = std::max(peak_before, peak_after);
  std::printf(
      "samples/s %.3f  real tokens/s %.0f  ms/step %.1f  model GFLOP/s %.1f  matmul peak %.1f GFLOP/s  MFU "
      "%.1f%% (real tokens)  peak RSS %.0f MB  minor faults/step %.0f\n",
      samples_per_s, static_cast<double>(real_tokens) / sec_per_step, sec_per_step * 1e3, achieved, peak,
      100.0 * achieved / peak, rss_mb, faults_per_step);
  std::printf(
      "json: {\"samples_per_s\": %.4f, \"ms_per_step\": %.2f, \"model_gflops\": %.2f, \"peak_gflops\": %.2f, "
      "\"mfu\": %.4f, \"peak_rss_mb\": %.1f, \"minor_faults_per_step\": %.1f, \"precision\": \"%s\", "
      "\"threads\": %d, \"loss\": %.5f, "
      "\"real_tokens\": %lld, \"padded_tokens\": %lld, \"packed\": %s, \"peak_probes_gflops\": [%.2f, "
      "%.2f]}\n",
      samples_per_s, sec_per_step * 1e3, achieved, peak, achieved / peak, rss_mb, faults_per_step,
      ran_bf16 ? "bf16" : "f32", ct::num_threads(), loss, static_cast<long long>(real_tokens),
      static_cast<long long>(N), packed ? "true" : "false", peak_before, peak_after);
  return 0;
}

}  // namespace

CT_COMMAND("bench step", "time encoder training steps (forward, backward, AdamW) on random tokens",
           run_bench_step);
