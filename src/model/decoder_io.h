// A decoder's weights in and out of its slab: transformers' init for a model trained from scratch, the HF
// checkpoint of a model folder (model.safetensors or a sharded index; the lm_head absent when tied, as
// save_pretrained leaves it), and the folder save_pretrained writes (config.json, model.safetensors).
#pragma once

#include <cstdint>
#include <string>

#include "model/checkpoint.h"
#include "model/decoder_model.h"

namespace ct::model {

// transformers' _init_weights for these families: Linear and Embedding weights N(0, initializer_range),
// biases 0, norms 1 (Gemma's zero-centred 0), drawn from `seed`'s stream in slab order (one normal per
// element, so any thread count gives the same bits).
void init_decoder_weights(DecoderModel& m, uint64_t seed);

// Fills the slab from `weights` (a .safetensors file or a model.safetensors.index.json). A parameter the
// file lacks is an error naming the file and the tensor; tensors no parameter takes (a tied lm_head saved
// anyway, rotary buffers) are skipped and listed in the report.
LoadReport load_decoder_weights(DecoderModel& m, const std::string& weights);

// config.json's text as save_pretrained writes it (decoder_config_to_json, indented).
std::string decoder_config_text(const DecoderConfig& c);

// config.json and model.safetensors into `dir` (created), each atomically.
void save_decoder(const DecoderModel& m, const std::string& dir);

}  // namespace ct::model
