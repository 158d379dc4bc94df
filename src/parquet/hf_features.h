// Hugging Face `datasets` features, as stored in a Parquet footer's "huggingface" key
// ({"info": {"features": {...}}}) or the README's dataset_info: Value dtypes, ClassLabel names, List and the
// older Sequence (a Sequence of a dict is a struct of lists), nested dicts as structs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ct::parquet {

struct Feature {
  enum class Kind { Value, ClassLabel, List, Struct, Other };
  Kind kind = Kind::Other;
  std::string type;                // the JSON's _type ("Value", "ClassLabel", "List", "Sequence", ...)
  std::string dtype;               // Value
  std::vector<std::string> names;  // ClassLabel
  int64_t length = -1;             // List/Sequence fixed length, -1 when variable
  std::vector<std::string> keys;   // Struct field names
  std::vector<Feature> children;   // Struct fields (parallel to keys), or the List's element as children[0]

  const Feature* field(const std::string& name) const;
};

// Parses the "huggingface" metadata JSON into a Struct of the top-level features; `what` names the source
// in errors. Unknown _types are kept as Kind::Other.
Feature parse_hf_features(const std::string& json, const std::string& what);

// Parses a features object ({"col": {...}, ...}) as datasets' asdict writes it.
Feature parse_hf_features_object(const std::string& json, const std::string& what);

}  // namespace ct::parquet
