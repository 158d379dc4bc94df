// What the HF golden tests share: a golden file's tokenizer variant (a base file under data/tokenizers/ with
// parts replaced, as tools/make_pipeline_golden.js builds it) and an Encoding in the goldens' JSON shape.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "core/fs.h"
#include "text/hf_tokenizer.h"

namespace ct::text::golden {

inline const std::string kData = CORETRAIN_TEST_DATA;

inline nlohmann::json encoding_json(const Encoding& e, bool with_tokens) {
  nlohmann::json o;
  o["ids"] = e.ids;
  o["type_ids"] = e.type_ids;
  nlohmann::json offs = nlohmann::json::array();
  for (auto [b, en] : e.offsets) offs.push_back({b, en});
  o["offsets"] = offs;
  o["special"] = e.special_tokens_mask;
  o["words"] = e.word_ids;
  o["seq"] = e.sequence_ids();
  o["attn"] = e.attention_mask;
  if (with_tokens) o["tokens"] = e.tokens;
  if (!e.overflowing.empty()) {
    nlohmann::json over = nlohmann::json::array();
    for (const auto& x : e.overflowing) over.push_back(encoding_json(x, with_tokens));
    o["overflowing"] = over;
  }
  return o;
}

// `g` names "base" and optionally "set" (top-level keys replaced) and "model_set" (keys of "model" replaced).
inline nlohmann::json variant_json(const nlohmann::json& g) {
  nlohmann::json j =
      nlohmann::json::parse(fs::read_file(kData + "/tokenizers/" + g["base"].get<std::string>()));
  if (g.contains("set")) {
    for (auto it = g["set"].begin(); it != g["set"].end(); ++it) j[it.key()] = it.value();
  }
  if (g.contains("model_set")) {
    for (auto it = g["model_set"].begin(); it != g["model_set"].end(); ++it)
      j["model"][it.key()] = it.value();
  }
  return j;
}

inline HfTokenizer load_variant(const nlohmann::json& g) {
  return HfTokenizer::from_json(variant_json(g), g["name"].get<std::string>());
}

// A golden's {"max_length", "stride", "strategy" (LongestFirst/OnlyFirst/OnlySecond, optional), "left"}.
inline TruncationParams truncation_params(const nlohmann::json& t) {
  TruncationParams tp;
  tp.max_length = t["max_length"].get<size_t>();
  tp.stride = t["stride"].get<size_t>();
  const std::string strategy = t.value("strategy", std::string("LongestFirst"));
  tp.strategy = strategy == "OnlyFirst"    ? TruncationStrategy::kOnlyFirst
                : strategy == "OnlySecond" ? TruncationStrategy::kOnlySecond
                                           : TruncationStrategy::kLongestFirst;
  tp.left = t["left"].get<bool>();
  return tp;
}

}  // namespace ct::text::golden
