// Test helper for torch_load_test.py: the C++ side of the checkpoint exchange with PyTorch.
//   ct_checkpoint_tool write <dir> <bert|distilbert|roberta|electra|modernbert> <seed> [head]
//     a tiny model (QA unless a head is named: seq-cls, token-cls, mlm, multiple-choice), HF-initialized
//     from <seed>, saved as <dir>/config.json + <dir>/model.safetensors, plus <dir>/coretrain_logits.json:
//     its eval-mode logits on fixed inputs (QA: start_logits / end_logits; others: "logits", flat, every
//     token projected for mlm, the 2 rows as one example's 2 choices for multiple-choice).
//   ct_checkpoint_tool init <config.json> <dir> <head> <seed>
//     a fresh HF-initialized checkpoint of any config (head: qa, seq-cls, token-cls, mlm, multiple-choice).
//   ct_checkpoint_tool forward <dir>
//     loads <dir>/config.json and the weights as `coretrain qa` would (fresh head when missing) and writes
//     the logits on <dir>/inputs.json to <dir>/coretrain_logits.json, with the load report.
//   ct_checkpoint_tool diff <dir_a> <dir_b> [skip...]
//     prints "max_abs_diff <x> max_abs <y> params <n> worst <name>" over the weights of two checkpoints (the
//     model of dir_a's config.json and head) but the parameters whose names end in a skip, so shell tests
//     compare trained weights without Python.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/fs.h"
#include "model/checkpoint.h"
#include "model/config.h"
#include "model/encoder_model.h"
#include "qa_model.h"

namespace {

using nlohmann::json;
using namespace ct;
using namespace ct::model;

ModelConfig tiny(const std::string& type) {
  if (type == "modernbert")  // 3 layers (global, local, global), a window of 2 each side
    return config_from_json(json{{"model_type", "modernbert"},
                                 {"vocab_size", 50},
                                 {"hidden_size", 16},
                                 {"num_hidden_layers", 3},
                                 {"num_attention_heads", 4},
                                 {"intermediate_size", 24},
                                 {"max_position_embeddings", 32},
                                 {"global_attn_every_n_layers", 2},
                                 {"local_attention", 4},
                                 {"pad_token_id", 0}},
                            "tiny modernbert");
  if (type == "roberta" || type == "electra") {
    json j{{"model_type", type},
           {"vocab_size", 50},
           {"hidden_size", 16},
           {"num_hidden_layers", 2},
           {"num_attention_heads", 4},
           {"intermediate_size", 24},
           {"max_position_embeddings", 34},
           {"type_vocab_size", 2}};
    if (type == "roberta") j["pad_token_id"] = 1, j["type_vocab_size"] = 1, j["layer_norm_eps"] = 1e-5;
    if (type == "electra") j["embedding_size"] = 8;
    return config_from_json(j, "tiny " + type);
  }
  json j = type == "bert"
               ? json{{"model_type", "bert"},          {"vocab_size", 50},         {"hidden_size", 16},
                      {"num_hidden_layers", 2},        {"num_attention_heads", 4}, {"intermediate_size", 24},
                      {"max_position_embeddings", 32}, {"type_vocab_size", 2}}
               : json{{"model_type", "distilbert"},
                      {"vocab_size", 50},
                      {"dim", 16},
                      {"n_layers", 2},
                      {"n_heads", 4},
                      {"hidden_dim", 24},
                      {"max_position_embeddings", 32}};
  return config_from_json(j, "tiny " + type);
}

json fixed_inputs(const ModelConfig& c) {
  const int64_t B = 2, T = 10;
  std::vector<std::vector<int32_t>> ids(B), mask(B), types(B);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < T; ++t) {
      ids[b].push_back(static_cast<int32_t>((7 * b + 3 * t + 1) % c.vocab_size));
      mask[b].push_back(b == 1 && t >= 7 ? 0 : 1);
      types[b].push_back(c.is_distilbert() || c.type_vocab_size < 2 ? 0 : (t >= 5 ? 1 : 0));
    }
  return {{"input_ids", ids}, {"attention_mask", mask}, {"token_type_ids", types}};
}

json run_head_forward(EncoderModel& model, const json& inputs) {
  const auto ids = inputs.at("input_ids").get<std::vector<std::vector<int32_t>>>();
  const auto mask = inputs.at("attention_mask").get<std::vector<std::vector<int32_t>>>();
  const auto types = inputs.at("token_type_ids").get<std::vector<std::vector<int32_t>>>();
  const int64_t B = static_cast<int64_t>(ids.size()), T = static_cast<int64_t>(ids.at(0).size());
  std::vector<int32_t> flat_ids, flat_mask, flat_types;
  for (int64_t b = 0; b < B; ++b) {
    flat_ids.insert(flat_ids.end(), ids[b].begin(), ids[b].end());
    flat_mask.insert(flat_mask.end(), mask[b].begin(), mask[b].end());
    flat_types.insert(flat_types.end(), types[b].begin(), types[b].end());
  }
  Batch batch;
  batch.B = B;
  batch.T = T;
  batch.input_ids = flat_ids.data();
  batch.attention_mask = flat_mask.data();
  batch.token_type_ids = flat_types.data();
  batch.num_choices = model.head_kind() == HeadKind::multiple_choice ? B : 0;
  model.forward(batch, StepOptions{});
  json out = inputs;
  out["logits"] = model.logits();
  return out;
}

// The span head's logits are (start, end) per token: written apart, as the QA tests read them.
json run_forward(QaModel& model, const json& inputs) {
  json out = run_head_forward(model, inputs);
  std::vector<float> start, end;
  const auto logits = out.at("logits").get<std::vector<float>>();
  for (size_t i = 0; i + 1 < logits.size(); i += 2) {
    start.push_back(logits[i]);
    end.push_back(logits[i + 1]);
  }
  out.erase("logits");
  out["start_logits"] = start;
  out["end_logits"] = end;
  return out;
}

int write_head_mode(const std::string& dir, const std::string& type, uint64_t seed, const std::string& head) {
  ModelConfig config = tiny(type);
  config.num_labels = 3;
  EncoderModel model(config, head_from_name(head), Precision::f32);
  model.init_weights(seed);
  float* p = model.params_data();
  for (const auto& info : model.params())
    if (!info.decay)
      for (int64_t i = 0; i < info.numel(); ++i)
        p[info.offset + i] += 0.01f * static_cast<float>((i * 7 + info.offset) % 13) - 0.06f;
  model.mark_weights_changed();
  fs::write_file_atomic(dir + "/config.json", config_to_json(config, model.head_kind()));
  save_hf_weights(dir + "/model.safetensors", model.params(), model.params_data());
  fs::write_file_atomic(dir + "/coretrain_logits.json", run_head_forward(model, fixed_inputs(config)).dump());
  return 0;
}

int write_mode(const std::string& dir, const std::string& type, uint64_t seed) {
  const ModelConfig config = tiny(type);
  QaModel model(config, Precision::f32);
  model.init_weights(seed);
  // Make biases and LayerNorm parameters non-trivial too, so a swapped name cannot pass unnoticed.
  float* p = model.params_data();
  for (const auto& info : model.params())
    if (!info.decay)
      for (int64_t i = 0; i < info.numel(); ++i)
        p[info.offset + i] += 0.01f * static_cast<float>((i * 7 + info.offset) % 13) - 0.06f;
  model.mark_weights_changed();
  fs::write_file_atomic(dir + "/config.json", config_to_json(config));
  save_hf_weights(dir + "/model.safetensors", model.params(), model.params_data());
  fs::write_file_atomic(dir + "/coretrain_logits.json", run_forward(model, fixed_inputs(config)).dump());
  return 0;
}

int forward_mode(const std::string& dir) {
  const ModelConfig config = load_config(dir + "/config.json");
  QaModel model(config, Precision::f32);
  const LoadReport report = load_hf_weights(find_weights_file(dir), model.params(), model.params_data());
  if (!check_missing(report).empty()) model.init_weights(0, "qa_outputs.");
  model.mark_weights_changed();
  json out = run_forward(model, json::parse(fs::read_file(dir + "/inputs.json")));
  out["loaded"] = report.loaded.size();
  out["missing"] = report.missing;
  out["unexpected"] = report.unexpected;
  out["renamed"] = report.renamed.size();
  fs::write_file_atomic(dir + "/coretrain_logits.json", out.dump());
  return 0;
}

// A fresh checkpoint of any config.json, HF-initialized from `seed` (what the task commands' tests start
// from: their scripts, like HF's, need --model_name_or_path).
int init_mode(const std::string& config_path, const std::string& dir, const std::string& head,
              uint64_t seed) {
  const ModelConfig config = load_config(config_path);
  const HeadKind kind = head_from_name(head);
  EncoderModel model(config, kind, Precision::f32);
  model.init_weights(seed);
  fs::write_file_atomic(dir + "/config.json", config_to_json(config, kind));
  save_hf_weights(dir + "/model.safetensors", model.params(), model.params_data());
  return 0;
}

// Two runs that should agree (1 rank vs 2 ranks with the same global batch) differ by float summation order
// only, so the weights are compared to a tolerance the caller picks from this line. `skip` (name endings)
// leaves out weights the loss does not determine: a multiple-choice classifier's bias shifts every choice's
// logit alike, an attention key bias every key's score for a query alike, so their gradients are rounding
// noise, which Adam scales up to +-lr per step in a direction each run draws its own.
int diff_mode(const std::string& dir_a, const std::string& dir_b, const std::vector<std::string>& skip) {
  const ModelConfig config = load_config(dir_a + "/config.json");
  const HeadKind kind = head_from_architectures(config, HeadKind::span);
  EncoderModel a(config, kind, Precision::f32), b(config, kind, Precision::f32);
  for (auto [dir, model] : {std::pair{dir_a, &a}, std::pair{dir_b, &b}}) {
    const LoadReport report = load_hf_weights(find_weights_file(dir), model->params(), model->params_data());
    if (!report.missing.empty() || !report.unexpected.empty())
      ct::fail(dir, ": the weights do not match ", dir_a, "/config.json (", report.missing.size(),
               " missing, ", report.unexpected.size(), " unexpected)");
  }
  double max_diff = 0, max_abs = 0;
  int64_t compared = 0;
  std::string worst = "-";
  const float *pa = a.params_data(), *pb = b.params_data();
  for (const auto& info : a.params()) {
    if (std::any_of(skip.begin(), skip.end(), [&](const std::string& k) { return info.name.ends_with(k); }))
      continue;
    for (int64_t i = info.offset; i < info.offset + info.numel(); ++i) {
      const double d = std::fabs(pa[i] - pb[i]);
      if (d > max_diff) max_diff = d, worst = info.name;
      max_abs = std::max(max_abs, static_cast<double>(std::fabs(pa[i])));
    }
    compared += info.numel();
  }
  std::printf("max_abs_diff %.9g max_abs %.9g params %lld worst %s\n", max_diff, max_abs,
              static_cast<long long>(compared), worst.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const std::vector<std::string> a(argv + 1, argv + argc);
    if (a.size() == 4 && a[0] == "write") return write_mode(a[1], a[2], std::stoull(a[3]));
    if (a.size() == 5 && a[0] == "write") return write_head_mode(a[1], a[2], std::stoull(a[3]), a[4]);
    if (a.size() == 2 && a[0] == "forward") return forward_mode(a[1]);
    if (a.size() == 5 && a[0] == "init") return init_mode(a[1], a[2], a[3], std::stoull(a[4]));
    if (a.size() >= 3 && a[0] == "diff") return diff_mode(a[1], a[2], {a.begin() + 3, a.end()});
    std::fprintf(
        stderr,
        "usage: ct_checkpoint_tool write <dir> <bert|distilbert|roberta|electra|modernbert> <seed> [head] | "
        "forward <dir> | init <config.json> <dir> <head> <seed> | diff <dir_a> <dir_b> [skip...]\n");
    return 2;
  } catch (const ct::Error& e) {
    std::fprintf(stderr, "ct_checkpoint_tool: %s\n", e.what());
    return 1;
  }
}
