#include "train/encoder_loader.h"

#include <filesystem>

#include "core/error.h"
#include "core/log.h"
#include "model/checkpoint.h"
#include "train/run_setup.h"

namespace ct::train {
namespace stdfs = std::filesystem;

namespace {

bool is_dir(const std::string& p) {
  std::error_code ec;
  return stdfs::is_directory(p, ec);
}

}  // namespace

std::string config_json_path(const std::string& flag, const std::string& p) {
  std::error_code ec;
  if (is_dir(p)) {
    const std::string c = p + "/config.json";
    if (!stdfs::exists(c, ec)) fail(flag, ": ", p, " has no config.json");
    return c;
  }
  if (!stdfs::exists(p, ec)) fail(flag, ": ", p, " does not exist");
  return p;
}

model::ModelConfig load_task_config(const ModelArguments& m, int64_t num_labels) {
  const std::string flag = m.config_name.empty() ? "--model_name_or_path" : "--config_name";
  const std::string src = m.config_name.empty() ? m.model_name_or_path : m.config_name;
  if (src.empty()) fail("--model_name_or_path: required (or --config_name)");
  model::ModelConfig c;
  try {
    c = model::load_config(config_json_path(flag, src));
  } catch (const Error& e) {
    const std::string msg = e.what();
    if (msg.rfind(flag, 0) == 0) throw;
    fail(flag, ": ", msg);
  }
  if (num_labels > 0 && num_labels != c.num_labels) {
    c.num_labels = num_labels;
    c.extra.erase("id2label");  // the setter's LABEL_i names (config_to_json writes them)
    c.extra.erase("label2id");
  }
  return c;
}

text::HfTokenizer load_task_tokenizer(const ModelArguments& m, const model::ModelConfig& config,
                                      const nlohmann::json* overrides) {
  std::string src = m.tokenizer_name, flag = "--tokenizer_name";
  if (src.empty()) {
    flag = m.model_name_or_path.empty() ? "--config_name" : "--model_name_or_path";
    src = m.model_name_or_path.empty()
              ? (is_dir(m.config_name) ? m.config_name : stdfs::path(m.config_name).parent_path().string())
              : m.model_name_or_path;
  }
  if (!is_dir(src))
    fail(flag, ": ", src,
         " is not a folder with tokenizer.json, vocab.txt, vocab.json + merges.txt or a SentencePiece model");
  text::HfTokenizer tok = [&] {
    try {
      return text::HfTokenizer::from_dir(src, overrides);
    } catch (const Error& e) {
      fail(flag, ": ", e.what());
    }
  }();
  if (static_cast<int64_t>(tok.vocab_size()) > config.vocab_size)
    fail(flag, ": tokenizer has ", tok.vocab_size(), " tokens but config vocab_size is ", config.vocab_size);
  return tok;
}

void set_label_names(model::ModelConfig& config, const std::vector<std::string>& names) {
  nlohmann::json id2label = nlohmann::json::object(), label2id = nlohmann::json::object();
  for (size_t i = 0; i < names.size(); ++i) {
    id2label[std::to_string(i)] = names[i];
    label2id[names[i]] = i;
  }
  config.num_labels = static_cast<int64_t>(names.size());
  config.extra["id2label"] = id2label;
  config.extra["label2id"] = label2id;
}

std::vector<std::pair<std::string, int64_t>> checkpoint_label2id(const model::ModelConfig& config) {
  std::vector<std::pair<std::string, int64_t>> out;
  const auto it = config.extra.find("label2id");
  if (it == config.extra.end() || !it->is_object()) return out;
  bool defaults = static_cast<int64_t>(it->size()) == config.num_labels;
  for (const auto& [k, v] : it->items()) {
    if (!v.is_number_integer()) fail("config.json: label2id[\"", k, "\"] must be an integer id");
    out.push_back({k, v.get<int64_t>()});
    defaults = defaults && k == "LABEL_" + std::to_string(v.get<int64_t>());
  }
  if (defaults) out.clear();
  return out;
}

std::unique_ptr<model::EncoderModel> build_task_model(const ModelArguments& m,
                                                      const model::ModelConfig& config,
                                                      const TrainingArguments& t, const EncoderBuild& b) {
  const auto precision = model::resolve_precision(t.bf16);
  float* grads = b.grad_alloc ? b.grad_alloc(model::make_param_layout(config, b.head).total) : nullptr;
  auto model = std::make_unique<model::EncoderModel>(config, b.head, precision, grads);
  const uint64_t seed = static_cast<uint64_t>(t.seed);
  if (m.model_name_or_path.empty()) {
    model->init_weights(seed);
    log::info("no --model_name_or_path: training ", config.model_type, " from random init (seed ", seed, ")");
    return model;
  }
  if (!stdfs::exists(m.model_name_or_path))
    fail("--model_name_or_path: ", m.model_name_or_path, " does not exist");
  try {
    const std::string weights = model::find_weights_file(m.model_name_or_path);
    const auto report =
        model::load_hf_weights(weights, model->params(), model->params_data(), b.ignore_mismatched_sizes);
    // set_seed(seed) then from_pretrained: what the file lacks (a new head, or one of another size under
    // --ignore_mismatched_sizes; anything else fails) starts from the seeded init. A parameter's init values
    // depend on its place in the layout only, so initializing just these gives what a whole init would,
    // without drawing the ~100 M values the file overwrites.
    const auto fresh = model::check_missing(report, model->layout().head_param_names());
    if (!fresh.empty()) model->init_weights(seed, fresh);
  } catch (const Error& e) {
    const std::string msg = e.what();
    if (msg.find("ignore_mismatched_sizes") == std::string::npos && msg.find("shape") != std::string::npos)
      fail("--model_name_or_path: ", msg, " (--ignore_mismatched_sizes starts a head of another size fresh)");
    fail("--model_name_or_path: ", msg);
  }
  model->mark_weights_changed();
  return model;
}

}  // namespace ct::train

namespace ct::train {

int64_t fit_max_seq_length(const std::string& flag, int64_t requested, const text::HfTokenizer& tokenizer,
                           const model::ModelConfig& config) {
  int64_t n = requested;
  if (const int64_t mml = tokenizer.model_max_length(); mml > 0 && n > mml) {
    log::warn("The max_seq_length passed (", n, ") is larger than the maximum length for the model (", mml,
              "). Using max_seq_length=", mml, ".");
    n = mml;
  }
  const int64_t first_pos =
      config.positions == model::PositionScheme::after_padding_idx ? config.pad_token_id + 1 : 0;
  if (n + first_pos > config.max_position_embeddings)
    fail(flag, ": ", n, " exceeds the model's max_position_embeddings (", config.max_position_embeddings,
         first_pos ? str(", positions from ", first_pos, ")") : std::string(")"));
  return n;
}

std::unique_ptr<model::EncoderModel> build_shared_model(const ModelArguments& m,
                                                        const model::ModelConfig& config,
                                                        const TrainingArguments& t, model::HeadKind head,
                                                        bool ignore_mismatched_sizes,
                                                        const DistContext& dist) {
  EncoderBuild b;
  b.head = head;
  b.ignore_mismatched_sizes = ignore_mismatched_sizes;
  b.grad_alloc = gradient_allocator(dist);
  auto model = build_task_model(m, config, t, b);
  broadcast_weights(*model, dist);
  return model;
}

void broadcast_weights(model::Model& model, const DistContext& dist) {
  broadcast_floats(dist, model.params_data(), model.num_params());
  model.mark_weights_changed();
}

}  // namespace ct::train
