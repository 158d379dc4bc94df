// ModernBERT's config.json (transformers' ModernBertConfig) to and from ModelConfig. Its field names differ
// from BERT's (hidden_activation, norm_eps, embedding_dropout, ...) and it carries options this engine does
// not implement (biases in the attention, MLP and norms, untied decoders, RoPE scaling): those are refused
// with one line naming the field rather than run differently from transformers.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "model/config.h"

namespace ct::model {

// Reads a model_type "modernbert" config; throws ct::Error naming `source` and the field on anything
// unusable.
ModelConfig modernbert_config_from_json(const nlohmann::json& j, const std::string& source);
// Writes the family's fields (by ModernBertConfig's names) into j, over what `extra` carried.
void write_modernbert_fields(const ModelConfig& c, nlohmann::json& j);

}  // namespace ct::model
