// The decoder a run_clm run trains: AutoConfig of a model folder or CONFIG_MAPPING[--model_type]() with
// --config_overrides, the checkpoint's weights or transformers' init, the embeddings resized when the
// tokenizer has more tokens than the config's vocabulary (resize_token_embeddings with mean_resizing), and
// generation_config.json as save_pretrained writes it beside the weights.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "model/causal_lm_model.h"
#include "model/decoder_config.h"

namespace ct::tasks {

// CONFIG_MAPPING[model_type]() then update_from_string(overrides), for the families with a from-scratch
// default here (llama); anything else fails naming --model_type or the --config_overrides key.
model::DecoderConfig scratch_decoder_config(const std::string& model_type, const std::string& overrides);

// resize_token_embeddings(vocab) of `from` (mean_resizing=True): the old rows copied; each new row of the
// embeddings (and of an untied lm_head) drawn from N(mean of the old rows, 1e-9 x their covariance) when
// that matrix is positive-definite, else the mean. Draws come from `seed`.
std::unique_ptr<model::CausalLmModel> resize_token_embeddings(const model::CausalLmModel& from, int64_t vocab,
                                                              int64_t max_positions, uint64_t seed);

// generation_config.json's object: the model folder's own file when `model_dir` has one, else
// GenerationConfig.from_model_config: the config's bos/eos/pad token ids that are set, "_from_model_config".
nlohmann::json generation_config(const model::DecoderConfig& config, const std::string& model_dir);

}  // namespace ct::tasks
