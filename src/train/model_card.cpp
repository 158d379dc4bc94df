#include "train/model_card.h"

#include <dnnl.h>
#include <utf8proc.h>

#include <cctype>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <map>
#include <utility>
#include <vector>

#include "core/error.h"

namespace ct::train {
namespace {

using Row = std::vector<std::pair<std::string, std::string>>;  // ordered (column, cell)

// str.capitalize() of each "_"-separated part, joined by spaces ("exact_match" -> "Exact Match").
std::string camel(const std::string& key) {
  std::string out;
  size_t b = 0;
  while (b <= key.size()) {
    size_t e = key.find('_', b);
    if (e == std::string::npos) e = key.size();
    std::string part = key.substr(b, e - b);
    for (size_t i = 0; i < part.size(); ++i)
      part[i] = static_cast<char>(i == 0 ? std::toupper(static_cast<unsigned char>(part[i]))
                                         : std::tolower(static_cast<unsigned char>(part[i])));
    out += (out.empty() ? "" : " ") + part;
    b = e + 1;
  }
  return out;
}

// str(v) of a JSON number as Python prints it.
std::string py_str(const nlohmann::json& v) {
  if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
  if (v.is_number()) return python_float(v.get<double>());
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "True" : "False";
  return "None";
}

// HF's _maybe_round: floats with more than 4 decimals in their repr print with 4.
std::string maybe_round(const nlohmann::json& v) {
  const std::string s = py_str(v);
  if (v.is_number_float()) {
    const auto dot = s.find('.');
    if (dot != std::string::npos && s.find('e') == std::string::npos && s.size() - dot - 1 > 4) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.4f", v.get<double>());
      return buf;
    }
    if (s.find('e') != std::string::npos) {  // repr like 1.23456e-05: Python splits on "." too
      const auto d = s.find('.');
      if (d != std::string::npos && s.size() - d - 1 > 4) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.4f", v.get<double>());
        return buf;
      }
    }
  }
  return s;
}

std::string markdown_table(const std::vector<Row>& lines) {
  if (lines.empty()) return "";
  std::vector<size_t> w;
  for (const auto& [k, v] : lines[0]) w.push_back(k.size());
  for (const auto& line : lines)
    for (size_t i = 0; i < line.size() && i < w.size(); ++i) w[i] = std::max(w[i], line[i].second.size());
  auto row = [&](const std::vector<std::string>& cells) {
    std::string s;
    for (size_t i = 0; i < cells.size(); ++i)
      s += "| " + cells[i] + std::string(w[i] - cells[i].size() + 1, ' ');
    return s + "|\n";
  };
  std::vector<std::string> head;
  for (const auto& [k, v] : lines[0]) head.push_back(k);
  std::string out = row(head);
  for (size_t x : w) out += "|:" + std::string(x, '-') + ":";
  out += "|\n";
  for (const auto& line : lines) {
    std::vector<std::string> cells;
    for (const auto& [k, v] : line) cells.push_back(v);
    cells.resize(w.size());
    out += row(cells);
  }
  return out;
}

// A YAML scalar as PyYAML's dump would leave it plain, else single-quoted.
std::string yaml_str(const std::string& s) {
  bool quote = s.empty() || s.front() == ' ' || s.back() == ' ' ||
               std::string("-?:,[]{}#&*!|>'\"%@`").find(s.front()) != std::string::npos ||
               s.find(": ") != std::string::npos || s.find(" #") != std::string::npos || s.back() == ':';
  static const char* specials[] = {"true", "false", "yes", "no", "on", "off", "null", "~", "y", "n"};
  std::string low;
  for (char c : s) low += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const char* w : specials) quote |= low == w;
  char* end = nullptr;
  std::strtod(s.c_str(), &end);
  quote |= !s.empty() && end && *end == '\0';
  if (!quote) return s;
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("''") : std::string(1, c);
  return q + "'";
}

// HF's TASK_TAG_TO_NAME_MAPPING for the example scripts' tasks.
std::string task_display_name(const std::string& tag) {
  static const std::pair<const char*, const char*> names[] = {
      {"fill-mask", "Masked Language Modeling"},       {"multiple-choice", "Multiple Choice"},
      {"question-answering", "Question Answering"},    {"text-classification", "Text Classification"},
      {"text-generation", "Causal Language Modeling"}, {"token-classification", "Token Classification"}};
  for (const auto& [t, n] : names)
    if (tag == t) return n;
  return tag;
}

bool is_folder(const std::string& p) {
  std::error_code ec;
  return std::filesystem::is_directory(p, ec);
}

}  // namespace

std::string python_float(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (v == 0) return std::signbit(v) ? "-0.0" : "0.0";
  // Shortest round-trip digits, then Python's repr layout: scientific when exponent < -4 or >= 16.
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  std::string sci(buf, r.ptr);
  const auto epos = sci.find('e');
  std::string mant = sci.substr(0, epos);
  const int exp = std::stoi(sci.substr(epos + 1));
  const bool neg = mant[0] == '-';
  if (neg) mant = mant.substr(1);
  std::string digits;
  for (char c : mant)
    if (c != '.') digits += c;
  std::string out;
  if (exp < -4 || exp >= 16) {
    out = digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    char e[16];
    std::snprintf(e, sizeof e, "e%c%02d", exp < 0 ? '-' : '+', std::abs(exp));
    out += e;
  } else if (exp < 0) {
    out = "0." + std::string(static_cast<size_t>(-exp - 1), '0') + digits;
  } else {
    const size_t ip = static_cast<size_t>(exp) + 1;
    if (digits.size() <= ip)
      out = digits + std::string(ip - digits.size(), '0') + ".0";
    else
      out = digits.substr(0, ip) + "." + digits.substr(ip);
  }
  return (neg ? "-" : "") + out;
}

ModelCardInfo dataset_card_info(const std::string& model_name_or_path, const std::string& tasks,
                                const std::string& dataset_name, const std::string& dataset_config_name) {
  ModelCardInfo card;
  card.finetuned_from = model_name_or_path;
  card.tasks = tasks;
  if (!dataset_name.empty()) {
    card.dataset_tag = dataset_name;
    card.dataset_arg = dataset_config_name;
    card.dataset = dataset_config_name.empty() ? dataset_name : dataset_name + " " + dataset_config_name;
  }
  return card;
}

std::string framework_versions() {
  const dnnl_version_t* d = dnnl_version();
  std::string s = str("- coretrain ", kCoretrainVersion, "\n");
  s += str("- oneDNN ", d->major, ".", d->minor, ".", d->patch, "\n");
  s += str("- utf8proc ", utf8proc_version(), "\n");
  s += str("- nlohmann-json ", NLOHMANN_JSON_VERSION_MAJOR, ".", NLOHMANN_JSON_VERSION_MINOR, ".",
           NLOHMANN_JSON_VERSION_PATCH, "\n");
#if defined(__clang__)
  s += str("- clang ", __clang_major__, ".", __clang_minor__, "\n");
#elif defined(__GNUC__)
  s += str("- GCC ", __GNUC__, ".", __GNUC_MINOR__, ".", __GNUC_PATCHLEVEL__, "\n");
#endif
  return s;
}

std::string model_card(const ModelCardInfo& info, const TrainingArguments& t,
                       const nlohmann::json& log_history, int world) {
  const std::string& finetuned_from = info.finetuned_from;
  const std::string& dataset_tag = info.dataset_tag;
  const std::string& dataset_arg = info.dataset_arg;
  const std::string& dataset = info.dataset;
  std::string name = t.output_dir;
  while (name.size() > 1 && name.back() == '/') name.pop_back();
  name = std::filesystem::path(name).filename().string();
  if (name.empty()) name = finetuned_from;

  // parse_log_history, with EM/F1 standing where HF looks for eval_loss.
  auto is_eval = [](const nlohmann::json& e) {
    for (const auto& [k, v] : e.items())
      if (k.rfind("eval_", 0) == 0 && k != "eval_runtime" && k != "eval_samples_per_second" &&
          k != "eval_steps_per_second" && k != "eval_samples")
        return true;
    return false;
  };
  size_t train_idx = 0;
  while (train_idx < log_history.size() && !log_history[train_idx].contains("train_runtime")) ++train_idx;
  const bool trained = train_idx < log_history.size();
  std::vector<Row> lines;
  if (trained) {
    nlohmann::json training_loss = "No log";
    for (size_t i = 0; i < train_idx; ++i) {
      const auto& e = log_history[i];
      if (e.contains("loss")) training_loss = e["loss"];
      if (!is_eval(e)) continue;
      Row r{{"Training Loss", maybe_round(training_loss)},
            {"Epoch", e.contains("epoch") ? maybe_round(e["epoch"]) : "None"},
            {"Step", e.contains("step") ? maybe_round(e["step"]) : "None"}};
      for (const auto& [k, v] : e.items()) {
        if (k == "epoch" || k == "step" || k == "total_flos" || k == "eval_runtime" ||
            k == "eval_samples_per_second" || k == "eval_steps_per_second")
          continue;
        r.push_back({camel(k.rfind("eval_", 0) == 0 ? k.substr(5) : k), maybe_round(v)});
      }
      lines.push_back(std::move(r));
    }
  }
  std::vector<std::pair<std::string, nlohmann::json>> eval_results;
  for (size_t i = log_history.size(); i-- > 0;) {
    const auto& e = log_history[i];
    if (!is_eval(e)) continue;
    for (const auto& [k, v] : e.items()) {
      const std::string key = k.rfind("eval_", 0) == 0 ? k.substr(5) : k;
      if (key == "runtime" || key == "samples_per_second" || key == "steps_per_second" || key == "epoch" ||
          key == "step" || key == "samples")
        continue;
      eval_results.push_back({camel(key), v});
    }
    break;
  }
  // Metric tags: HF's list (f1, accuracy, ...) plus exact_match, SQuAD's headline number.
  std::vector<std::pair<std::string, std::string>> metric_tags;  // (type, name)
  for (const auto& [n, v] : eval_results) {
    std::string low;
    for (char c : n) low += c == ' ' ? '_' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    static const char* tags[] = {"accuracy",  "bleu",      "f1",     "matthews_correlation",
                                 "pearsonr",  "precision", "recall", "rouge",
                                 "sacrebleu", "spearmanr", "wer",    "exact_match"};
    for (const char* tag : tags)
      if (low == tag) metric_tags.push_back({low, n});
  }

  std::string y = "---\nlibrary_name: transformers\n";
  if (!info.language.empty()) y += "language:\n- " + yaml_str(info.language) + "\n";
  if (!finetuned_from.empty()) y += "base_model: " + yaml_str(finetuned_from) + "\n";
  y += "tags:\n- generated_from_trainer\n";
  if (!dataset_tag.empty()) y += "datasets:\n- " + yaml_str(dataset_tag) + "\n";
  if (!metric_tags.empty()) {
    y += "metrics:\n";
    for (const auto& [type, n] : metric_tags) y += "- " + type + "\n";
  }
  y += "model-index:\n- name: " + yaml_str(name) + "\n";
  if (!dataset_tag.empty() && !metric_tags.empty()) {
    y += "  results:\n  - task:\n      name: " + task_display_name(info.tasks) +
         "\n      type: " + info.tasks + "\n";
    y += "    dataset:\n      name: " + yaml_str(dataset) + "\n      type: " + yaml_str(dataset_tag) + "\n";
    if (!dataset_arg.empty()) y += "      args: " + yaml_str(dataset_arg) + "\n";
    y += "    metrics:\n";
    for (const auto& [type, n] : metric_tags) {
      nlohmann::json v;
      for (const auto& [k, x] : eval_results)
        if (k == n) v = x;
      y += "    - name: " + yaml_str(n) + "\n      type: " + type + "\n      value: " + py_str(v) + "\n";
    }
  } else {
    y += "  results: []\n";  // HF drops a result without task, dataset and metrics
  }
  y += "---\n";

  std::string c = y;
  c += "\n<!-- This model card has been generated automatically according to the information the Trainer had "
       "access to. You\nshould probably proofread and complete it, then remove this comment. -->\n";
  c += "\n# " + name + "\n\n";
  if (finetuned_from.empty())
    c += "This model was trained from scratch on ";
  else if (is_folder(finetuned_from))
    c += "This model is a fine-tuned version of `" + finetuned_from + "` (a local folder) on ";
  else
    c += "This model is a fine-tuned version of [" + finetuned_from + "](https://huggingface.co/" +
         finetuned_from + ") on ";
  c += dataset.empty() ? "an unknown dataset." : "the " + dataset + " dataset.";
  if (!eval_results.empty()) {
    c += "\nIt achieves the following results on the evaluation set:\n";
    for (size_t i = 0; i < eval_results.size(); ++i)
      c += str(i ? "\n" : "", "- ", eval_results[i].first, ": ", maybe_round(eval_results[i].second));
  }
  c += "\n";
  c += "\n## Model description\n\nMore information needed\n";
  c += "\n## Intended uses & limitations\n\nMore information needed\n";
  c += "\n## Training and evaluation data\n\nMore information needed\n";
  c += "\n## Training procedure\n";
  c += "\n### Training hyperparameters\n";
  c += "\nThe following hyperparameters were used during training:\n";
  std::vector<std::pair<std::string, std::string>> hp;
  hp.push_back({"learning_rate", python_float(t.learning_rate)});
  hp.push_back({"train_batch_size", std::to_string(t.per_device_train_batch_size)});
  hp.push_back({"eval_batch_size", std::to_string(t.per_device_eval_batch_size)});
  hp.push_back({"seed", std::to_string(t.seed)});
  if (world > 1) {
    hp.push_back({"distributed_type", "multi-CPU"});
    hp.push_back({"num_devices", std::to_string(world)});
  }
  if (t.gradient_accumulation_steps > 1)
    hp.push_back({"gradient_accumulation_steps", std::to_string(t.gradient_accumulation_steps)});
  const int64_t total_train = t.per_device_train_batch_size * world * t.gradient_accumulation_steps;
  if (total_train != t.per_device_train_batch_size)
    hp.push_back({"total_train_batch_size", std::to_string(total_train)});
  const int64_t total_eval = t.per_device_eval_batch_size * world;
  if (total_eval != t.per_device_eval_batch_size)
    hp.push_back({"total_eval_batch_size", std::to_string(total_eval)});
  if (t.optim.find("adam") != std::string::npos)
    hp.push_back({"optimizer", str("Use ", t.optim, " with betas=(", python_float(t.adam_beta1), ",",
                                   python_float(t.adam_beta2), ") and epsilon=", python_float(t.adam_epsilon),
                                   " and optimizer_args=No additional optimizer arguments")});
  else
    hp.push_back(
        {"optimizer", str("Use ", t.optim, " and the args are:\nNo additional optimizer arguments")});
  hp.push_back({"lr_scheduler_type", t.lr_scheduler_type});
  if (t.warmup_ratio != 0) hp.push_back({"lr_scheduler_warmup_ratio", python_float(t.warmup_ratio)});
  if (t.warmup_steps != 0) hp.push_back({"lr_scheduler_warmup_steps", std::to_string(t.warmup_steps)});
  if (t.max_steps != -1)
    hp.push_back({"training_steps", std::to_string(t.max_steps)});
  else
    hp.push_back({"num_epochs", python_float(t.num_train_epochs)});
  for (size_t i = 0; i < hp.size(); ++i) c += str(i ? "\n" : "", "- ", hp[i].first, ": ", hp[i].second);
  c += "\n";
  if (trained) {
    c += "\n### Training results\n\n";
    c += markdown_table(lines);
    c += "\n";
  }
  c += "\n### Framework versions\n\n";
  c += framework_versions();
  return c;
}

}  // namespace ct::train
