// HF features from a dataset card's YAML `dataset_info` (the README front matter), the fallback when a
// Parquet file carries no "huggingface" metadata: datasets' YAML form (Features._to_yaml_list) turned into
// the same parquet::Feature tree as the footer's JSON. Forms: `dtype: string`, `dtype: {class_label: {names:
// {'0': a}}}`, `sequence: <feature>` (a list of named features = a struct of lists), `list: <feature>`,
// `struct: [...]`.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "parquet/hf_features.h"

namespace ct::data {

// The features of `config` ("" or "default": the only or unnamed dataset_info) from the card; nullopt when
// the card has no dataset_info for it. Throws naming `source` on a malformed features list.
std::optional<parquet::Feature> card_features(std::string_view readme, const std::string& config,
                                              const std::string& source);

}  // namespace ct::data
