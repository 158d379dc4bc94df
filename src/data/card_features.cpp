#include "data/card_features.h"

#include "core/error.h"
#include "data/readme_yaml.h"

namespace ct::data {

using json = nlohmann::ordered_json;
using parquet::Feature;

namespace {

Feature from_yaml(const json& item, const std::string& where, int depth);

Feature from_yaml_list(const json& list, const std::string& where, int depth) {
  CT_CHECK(list.is_array(), where, ": features must be a list of {name: ...}");
  Feature f;
  f.kind = Feature::Kind::Struct;
  for (const auto& it : list) {
    CT_CHECK(it.is_object() && it.contains("name") && it["name"].is_string(), where,
             ": a feature without a name");
    const std::string name = it["name"].get<std::string>();
    f.keys.push_back(name);
    f.children.push_back(from_yaml(it, where + "." + name, depth + 1));
  }
  return f;
}

// A dtype value: a type name, {class_label: {names: ...}}, or a nested form.
Feature from_dtype(const json& d, const std::string& where, int depth) {
  Feature f;
  if (d.is_string()) {
    f.kind = Feature::Kind::Value;
    f.type = "Value";
    f.dtype = d.get<std::string>();
    return f;
  }
  CT_CHECK(d.is_object(), where, ": dtype is ", d.type_name(), ", expected a name or a mapping");
  if (d.contains("class_label")) {
    f.kind = Feature::Kind::ClassLabel;
    f.type = "ClassLabel";
    const json& cl = d["class_label"];
    if (cl.is_object() && cl.contains("names")) {
      const json& names = cl["names"];
      if (names.is_object()) {
        // {'0': neg, '1': pos}: keys are the label ids.
        f.names.resize(names.size());
        for (auto it = names.begin(); it != names.end(); ++it) {
          size_t id = 0;
          try {
            id = std::stoul(it.key());
          } catch (const std::exception&) {
            fail(where, ": class_label name id '", it.key(), "' is not a number");
          }
          CT_CHECK(id < names.size(), where, ": class_label ids are not 0..", names.size() - 1);
          f.names[id] = it.value().is_string() ? it.value().get<std::string>() : it.value().dump();
        }
      } else if (names.is_array()) {
        for (const auto& n : names) f.names.push_back(n.is_string() ? n.get<std::string>() : n.dump());
      }
    }
    return f;
  }
  return from_yaml(d, where, depth + 1);
}

Feature from_yaml(const json& item, const std::string& where, int depth) {
  CT_CHECK(depth < 64, where, ": features nested deeper than 64");
  if (item.is_string()) return from_dtype(item, where, depth);
  CT_CHECK(item.is_object(), where, ": feature is ", item.type_name());
  if (item.contains("dtype")) return from_dtype(item["dtype"], where, depth);
  if (item.contains("class_label")) return from_dtype(item, where, depth);  // `sequence: {class_label: ...}`
  for (const char* key : {"sequence", "list", "large_list"}) {
    if (!item.contains(key)) continue;
    const json& inner = item[key];
    Feature elem = inner.is_array() ? from_yaml_list(inner, where, depth + 1)
                                    : from_yaml(inner, where + "[]", depth + 1);
    if (std::string(key) == "sequence" && elem.kind == Feature::Kind::Struct) {
      for (auto& c : elem.children) {  // Sequence of a dict: a struct of lists
        Feature list;
        list.kind = Feature::Kind::List;
        list.type = "Sequence";
        list.children.push_back(std::move(c));
        c = std::move(list);
      }
      return elem;
    }
    Feature f;
    f.kind = Feature::Kind::List;
    f.type = std::string(key) == "sequence" ? "Sequence" : "List";
    if (item.contains("length") && item["length"].is_number_integer())
      f.length = item["length"].get<int64_t>();
    f.children.push_back(std::move(elem));
    return f;
  }
  if (item.contains("struct")) return from_yaml_list(item["struct"], where, depth + 1);
  Feature other;
  other.kind = Feature::Kind::Other;
  return other;
}

}  // namespace

std::optional<Feature> card_features(std::string_view readme, const std::string& config,
                                     const std::string& source) {
  const json info = card_yaml_section(readme, "dataset_info", source);
  if (info.is_null()) return std::nullopt;
  const json* chosen = nullptr;
  if (info.is_object()) {
    chosen = &info;
  } else if (info.is_array()) {
    for (const auto& i : info) {
      const std::string name = i.is_object() && i.contains("config_name") && i["config_name"].is_string()
                                   ? i["config_name"].get<std::string>()
                                   : "default";
      if (name == config || (config.empty() && (info.size() == 1 || name == "default"))) chosen = &i;
    }
  }
  if (!chosen || !chosen->contains("features")) return std::nullopt;
  return from_yaml_list((*chosen)["features"], source + " dataset_info", 0);
}

}  // namespace ct::data
