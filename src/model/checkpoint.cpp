// HF checkpoint <-> parameter slab, with transformers' from_pretrained name rules.
#include "model/checkpoint.h"

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/fs.h"
#include "core/log.h"
#include "model/safetensors.h"

namespace ct::model {

namespace {

// base_model_prefix of the architectures we build (Bert, DistilBert, Roberta (also XLM-R's and CamemBERT's
// classes), Electra, ModernBert, DebertaV2).
const char* const kBasePrefixes[] = {"bert.", "distilbert.", "roberta.", "electra.", "model.", "deberta."};

bool starts_with(const std::string& s, const std::string& p) {
  return s.compare(0, p.size(), p) == 0;
}
bool ends_with(const std::string& s, const std::string& p) {
  return s.size() >= p.size() && s.compare(s.size() - p.size(), p.size(), p) == 0;
}

// transformers renames gamma/beta only on LayerNorm keys (PR #35615); other modules may own real "gamma"s.
std::string fix_layer_norm_name(const std::string& key) {
  if (ends_with(key, "LayerNorm.gamma")) return key.substr(0, key.size() - 5) + "weight";
  if (ends_with(key, "LayerNorm.beta")) return key.substr(0, key.size() - 4) + "bias";
  return key;
}

// Masked-LM heads tie decoder.bias to the head's own bias; a file may hold it under either name.
const std::map<std::string, std::string> kTiedAliases = {
    {"cls.predictions.decoder.bias", "cls.predictions.bias"},
    {"lm_head.decoder.bias", "lm_head.bias"},
};

// DeBERTa-v2's MLM head has had two HF namings (config "legacy": cls.predictions.*, else
// lm_predictions.lm_head.*); a file of either loads into a model of either. "" when `name` is neither.
std::string deberta_mlm_other_name(const std::string& name) {
  static const std::pair<std::string, std::string> kPairs[] = {
      {"cls.predictions.transform.", "lm_predictions.lm_head."},
      {"cls.predictions.bias", "lm_predictions.lm_head.bias"},
  };
  for (const auto& [legacy, current] : kPairs) {
    if (name == legacy || (legacy.back() == '.' && starts_with(name, legacy)))
      return current + name.substr(legacy.size());
    if (name == current) return legacy;
  }
  if (starts_with(name, "lm_predictions.lm_head.dense.") ||
      starts_with(name, "lm_predictions.lm_head.LayerNorm."))
    return "cls.predictions.transform." + name.substr(std::string("lm_predictions.lm_head.").size());
  return "";
}

std::string join_some(const std::vector<std::string>& names, size_t max) {
  std::string out;
  for (size_t i = 0; i < names.size() && i < max; ++i) out += (i ? ", " : "") + names[i];
  if (names.size() > max) out += str(", ... (", names.size() - max, " more)");
  return out;
}

}  // namespace

std::vector<std::string> safetensors_shards(const std::string& index_path) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(fs::read_file(index_path));
  } catch (const nlohmann::json::exception& e) {
    fail(index_path, ": not valid JSON (", e.what(), ")");
  }
  if (!j.is_object() || !j.contains("weight_map") || !j["weight_map"].is_object() || j["weight_map"].empty())
    fail(index_path, ": no \"weight_map\" object (tensor name -> shard file)");
  std::vector<std::string> shards;
  for (const auto& [name, file] : j["weight_map"].items()) {
    if (!file.is_string()) fail(index_path, ": weight_map[\"", name, "\"] is not a file name");
    const std::string f = file.get<std::string>();
    if (f.empty() || f.front() == '/' || f.find("..") != std::string::npos)
      fail(index_path, ": weight_map[\"", name, "\"] = \"", f, "\" is not a file beside the index");
    if (std::find(shards.begin(), shards.end(), f) == shards.end()) shards.push_back(f);
  }
  std::sort(shards.begin(), shards.end());
  return shards;
}

LoadReport load_hf_weights(const std::string& path, const std::vector<ParamInfo>& params, float* slab,
                           bool ignore_mismatched_sizes) {
  namespace stdfs = std::filesystem;
  std::vector<SafetensorsFile> files;
  if (ends_with(path, ".index.json")) {
    const stdfs::path dir = stdfs::path(path).parent_path();
    for (const auto& shard : safetensors_shards(path))
      files.push_back(SafetensorsFile::open((dir / shard).string()));
  } else {
    files.push_back(SafetensorsFile::open(path));
  }
  LoadReport report;
  report.source = path;

  std::map<std::string, size_t> by_name;
  for (size_t i = 0; i < params.size(); ++i)
    CT_CHECK(by_name.emplace(params[i].name, i).second, "load_hf_weights: duplicate parameter name \"",
             params[i].name, "\"");

  // HF base_model_prefix logic: a task model (params "bert.*" + head) loading a base-model file (no prefix)
  // adds the prefix; a base model (no prefix) loading a task-model file strips it.
  std::string model_prefix;
  for (const char* p : kBasePrefixes)
    for (const auto& info : params)
      if (starts_with(info.name, p)) model_prefix = p;
  bool file_has_prefix = false;
  if (!model_prefix.empty())
    for (const auto& file : files)
      for (const auto& t : file.tensors())
        if (starts_with(t.name, model_prefix)) file_has_prefix = true;

  std::map<size_t, std::string> source_of;  // param index -> file tensor name
  struct Copy {
    const SafetensorsFile* file;
    const SafetensorInfo* tensor;
    const ParamInfo* param;
  };
  std::vector<Copy> copies;
  std::vector<Copy> aliased;  // tied-decoder biases under the decoder's name
  for (const auto& file : files)
    for (const auto& t : file.tensors()) {
      const std::string& where = file.source();
      const std::string fixed = fix_layer_norm_name(t.name);
      std::vector<std::string> candidates = {fixed};
      if (!model_prefix.empty() && !file_has_prefix)
        candidates.insert(candidates.begin(), model_prefix + fixed);
      if (model_prefix.empty())
        for (const char* p : kBasePrefixes)
          if (starts_with(fixed, p)) candidates.push_back(fixed.substr(std::string(p).size()));
      if (const std::string other = deberta_mlm_other_name(fixed); !other.empty())
        candidates.push_back(other);
      auto it = by_name.end();
      for (const auto& c : candidates)
        if ((it = by_name.find(c)) != by_name.end()) break;
      if (it == by_name.end()) {
        if (const auto alias = kTiedAliases.find(fixed);
            alias != kTiedAliases.end() && by_name.count(alias->second))
          aliased.push_back({&file, &t, &params[by_name.at(alias->second)]});
        else
          report.unexpected.push_back(t.name);
        continue;
      }
      const ParamInfo& p = params[it->second];
      if (t.shape != p.shape && ignore_mismatched_sizes) {
        report.mismatched.push_back(
            str(t.name, ": checkpoint ", shape_str(t.shape), ", model ", shape_str(p.shape)));
        continue;
      }
      auto [prev, fresh] = source_of.emplace(it->second, t.name);
      if (!fresh)
        fail(where, ": tensors \"", prev->second, "\" and \"", t.name, "\" both map to parameter \"", p.name,
             "\"");
      if (t.shape != p.shape)
        fail(where, ": tensor \"", t.name, "\" has shape ", shape_str(t.shape), ", the model",
             p.name == t.name ? std::string() : str(" parameter \"", p.name, "\""), " expects ",
             shape_str(p.shape),
             " (config and weights disagree; --ignore_mismatched_sizes initializes it fresh)");
      if (t.dtype != "F32" && t.dtype != "BF16" && t.dtype != "F16")
        fail(where, ": tensor \"", t.name, "\" has dtype ", t.dtype, ", expected F32, BF16 or F16");
      if (fixed != t.name) report.renamed.emplace_back(t.name, p.name);
      copies.push_back({&file, &t, &p});
    }
  // A decoder bias saved under the decoder's name fills the head's bias unless that came under its own.
  for (const auto& c : aliased) {
    const size_t i = static_cast<size_t>(c.param - params.data());
    if (source_of.count(i) || c.tensor->shape != c.param->shape) {
      report.unexpected.push_back(c.tensor->name);
      continue;
    }
    source_of.emplace(i, c.tensor->name);
    copies.push_back(c);
  }
  // Only once every tensor is known good, so a failed load leaves the slab as it was.
  for (const auto& c : copies) c.file->read_f32(*c.tensor, slab + c.param->offset);
  for (size_t i = 0; i < params.size(); ++i)
    (source_of.count(i) ? report.loaded : report.missing).push_back(params[i].name);
  return report;
}

namespace {

std::vector<std::string> check_missing_if(const LoadReport& report,
                                          const std::function<bool(const std::string&)>& in_head) {
  std::vector<std::string> head, other;
  for (const auto& n : report.missing) (in_head(n) ? head : other).push_back(n);
  if (!other.empty()) {
    const bool none_of_body = std::none_of(report.loaded.begin(), report.loaded.end(),
                                           [&](const std::string& n) { return !in_head(n); });
    fail(report.source, ": missing ", other.size(), " of ", report.loaded.size() + report.missing.size(),
         " model parameters (", join_some(other, 3), ")",
         none_of_body ? "; no encoder tensor matched: is it a checkpoint of another model_type?" : "");
  }
  if (!report.unexpected.empty())
    log::warn("Some weights of the checkpoint at ", report.source, " were not used (",
              report.unexpected.size(), "): ", join_some(report.unexpected, 8));
  if (!report.mismatched.empty())
    log::warn(
        "Some weights of the checkpoint at ", report.source,
        " have other shapes than the model's and are newly initialized: ", join_some(report.mismatched, 8));
  if (!report.renamed.empty())
    log::info("Renamed ", report.renamed.size(), " LayerNorm gamma/beta tensors of ", report.source,
              " to weight/bias");
  if (!head.empty())
    log::warn("Some weights were not initialized from the checkpoint at ", report.source,
              " and are newly initialized: ", join_some(head, 8),
              "; you should probably TRAIN this model on a down-stream task");
  return head;
}

}  // namespace

std::vector<std::string> check_missing(const LoadReport& report, const std::string& head_prefix) {
  return check_missing_if(report, [&](const std::string& n) { return starts_with(n, head_prefix); });
}

std::vector<std::string> check_missing(const LoadReport& report, const std::vector<std::string>& head_names) {
  return check_missing_if(report, [&](const std::string& n) {
    return std::find(head_names.begin(), head_names.end(), n) != head_names.end();
  });
}

std::string find_weights_file(const std::string& model_dir) {
  namespace stdfs = std::filesystem;
  std::error_code ec;
  const stdfs::path p(model_dir);
  if (!stdfs::exists(p, ec)) fail(model_dir, ": no such model file or folder");
  const char* const kOnlySafetensors =
      "coretrain reads safetensors only; re-save it with save_pretrained(..., safe_serialization=True)";
  if (!stdfs::is_directory(p, ec)) {
    const std::string ext = p.extension().string();
    if (ext == ".bin" || ext == ".pt" || ext == ".pth" || ext == ".h5" || ext == ".msgpack")
      fail(model_dir, ": is not a safetensors file; ", kOnlySafetensors);
    return model_dir;
  }
  if (stdfs::is_regular_file(p / "model.safetensors", ec)) return (p / "model.safetensors").string();
  if (stdfs::is_regular_file(p / "model.safetensors.index.json", ec))
    return (p / "model.safetensors.index.json").string();
  for (const char* other :
       {"pytorch_model.bin", "pytorch_model.bin.index.json", "tf_model.h5", "flax_model.msgpack"})
    if (stdfs::exists(p / other, ec))
      fail(model_dir, ": has ", other, " but no model.safetensors; ", kOnlySafetensors);
  fail(model_dir, ": no model.safetensors in this folder");
}

void save_hf_weights(const std::string& path, const std::vector<ParamInfo>& params, const float* slab) {
  std::vector<SafetensorWrite> tensors;
  tensors.reserve(params.size());
  for (const auto& p : params) tensors.push_back({p.name, "F32", p.shape, slab + p.offset});
  write_safetensors(path, std::move(tensors), {{"format", "pt"}}, /*sort_by_name=*/true);
}

}  // namespace ct::model
