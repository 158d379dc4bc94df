#include "parquet/hf_features.h"

#include <nlohmann/json.hpp>

#include "core/error.h"

namespace ct::parquet {

const Feature* Feature::field(const std::string& name) const {
  for (size_t k = 0; k < keys.size(); ++k)
    if (keys[k] == name) return &children[k];
  return nullptr;
}

namespace {

using json = nlohmann::ordered_json;

Feature parse(const json& j, const std::string& where, int depth);

Feature parse_struct(const json& j, const std::string& where, int depth) {
  Feature f;
  f.kind = Feature::Kind::Struct;
  for (auto it = j.begin(); it != j.end(); ++it) {
    f.keys.push_back(it.key());
    f.children.push_back(parse(it.value(), where + "." + it.key(), depth + 1));
  }
  return f;
}

Feature parse(const json& j, const std::string& where, int depth) {
  CT_CHECK(depth < 64, where, ": features nested deeper than 64");
  CT_CHECK(j.is_object(), where, ": feature is ", j.type_name(), ", expected an object");
  const auto t = j.find("_type");
  if (t == j.end()) return parse_struct(j, where, depth);
  CT_CHECK(t->is_string(), where, "._type is not a string");
  Feature f;
  f.type = t->get<std::string>();
  if (f.type == "Value") {
    f.kind = Feature::Kind::Value;
    const auto d = j.find("dtype");
    CT_CHECK(d != j.end() && d->is_string(), where, ": Value without a string dtype");
    f.dtype = d->get<std::string>();
  } else if (f.type == "ClassLabel") {
    f.kind = Feature::Kind::ClassLabel;
    const auto n = j.find("names");
    if (n != j.end() && n->is_array()) {
      for (const auto& name : *n) {
        CT_CHECK(name.is_string(), where, ": ClassLabel name is not a string");
        f.names.push_back(name.get<std::string>());
      }
    } else if (const auto k = j.find("num_classes"); k != j.end() && k->is_number_integer()) {
      const int64_t count = k->get<int64_t>();
      CT_CHECK(count >= 0 && count <= 1000000, where, ": ClassLabel num_classes ", count);
      for (int64_t i = 0; i < count; ++i) f.names.push_back(std::to_string(i));
    }
  } else if (f.type == "List" || f.type == "LargeList" || f.type == "Sequence") {
    const auto e = j.find("feature");
    CT_CHECK(e != j.end(), where, ": ", f.type, " without a feature");
    if (const auto l = j.find("length"); l != j.end() && l->is_number_integer()) f.length = l->get<int64_t>();
    Feature elem = parse(*e, where + "[]", depth + 1);
    if (f.type == "Sequence" && elem.kind == Feature::Kind::Struct) {
      // datasets stores Sequence({...}) as a struct of lists (SQuAD's answers).
      for (auto& c : elem.children) {
        Feature list;
        list.kind = Feature::Kind::List;
        list.type = "Sequence";
        list.length = f.length;
        list.children.push_back(std::move(c));
        c = std::move(list);
      }
      elem.type = "Sequence";
      return elem;
    }
    f.kind = Feature::Kind::List;
    f.children.push_back(std::move(elem));
  } else {
    f.kind = Feature::Kind::Other;
  }
  return f;
}

}  // namespace

Feature parse_hf_features_object(const std::string& text, const std::string& what) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    fail(what, ": features are not valid JSON (", e.what(), ")");
  }
  CT_CHECK(j.is_object(), what, ": features are ", j.type_name(), ", expected an object");
  return parse_struct(j, what, 0);
}

Feature parse_hf_features(const std::string& text, const std::string& what) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    fail(what, ": 'huggingface' metadata is not valid JSON (", e.what(), ")");
  }
  const json* info = j.is_object() && j.contains("info") ? &j["info"] : nullptr;
  CT_CHECK(info && info->is_object() && info->contains("features"), what,
           ": 'huggingface' metadata lacks info.features");
  const json& feats = (*info)["features"];
  CT_CHECK(feats.is_object(), what, ": info.features is ", feats.type_name(), ", expected an object");
  return parse_struct(feats, what, 0);
}

}  // namespace ct::parquet
