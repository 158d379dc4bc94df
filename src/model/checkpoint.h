// HF model weights in and out of a parameter slab: maps HF checkpoint names onto a model's ParamInfo list the
// way transformers' from_pretrained does (LayerNorm.gamma/beta -> weight/bias, base-model prefix added or
// stripped, unused heads skipped and listed) and writes the slab back under HF names.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "model/param_info.h"

namespace ct::model {

struct LoadReport {
  std::vector<std::string> loaded;      // model parameter names filled from the file
  std::vector<std::string> missing;     // model parameter names the file lacks (left untouched in the slab)
  std::vector<std::string> unexpected;  // file tensor names no parameter takes (skipped: pooler, cls.*, ...)
  std::vector<std::pair<std::string, std::string>> renamed;  // file name -> parameter name, for gamma/beta
  // With ignore_mismatched_sizes: file tensor name, its shape and the model's, for each tensor skipped
  // because the shapes differ (its parameter is then in `missing`, for a fresh init).
  std::vector<std::string> mismatched;
  std::string source;  // file that was read
};

// Fills slab[p.offset .. p.offset + p.numel()) for every parameter found in the safetensors file at `path`
// (or, for a "*.index.json" path, in the shards its weight_map names, read from the index's folder),
// converting F32/BF16/F16 to f32. Throws ct::Error naming the file and tensor on a shape mismatch, an
// unsupported dtype, two file tensors that map to one parameter, or any malformed header. Missing parameters
// are only reported: the caller decides (see check_missing).
// ignore_mismatched_sizes (transformers' from_pretrained flag): a tensor whose shape differs from its
// parameter's (another num_labels) is skipped and listed in `mismatched` instead of being an error.
LoadReport load_hf_weights(const std::string& path, const std::vector<ParamInfo>& params, float* slab,
                           bool ignore_mismatched_sizes = false);

// HF's policy on a load: a missing task head ("qa_outputs.*") is returned for the caller to initialize fresh
// (with a warning logged, as transformers does); any other missing parameter throws naming the file and the
// first few missing names. Also logs the skipped (unexpected) tensors and the gamma/beta renames once.
std::vector<std::string> check_missing(const LoadReport& report,
                                       const std::string& head_prefix = "qa_outputs.");
// The same with the head's tensors named (ParamLayout::head_param_names(): a pooler, a classifier, an MLM
// transform, ...), for any head.
std::vector<std::string> check_missing(const LoadReport& report, const std::vector<std::string>& head_names);

// The weights file of a model folder: <dir>/model.safetensors, else <dir>/model.safetensors.index.json (a
// sharded checkpoint; load_hf_weights reads its shards), or `path` itself when it is a file. A folder with
// only pytorch_model.bin (or TF/Flax weights), or nothing usable, throws a clear error.
std::string find_weights_file(const std::string& model_dir);

// The shard files of a model.safetensors.index.json ({"metadata": ..., "weight_map": {tensor: file}}), each
// once, sorted; throws naming the index when it is malformed or names a file outside its folder.
std::vector<std::string> safetensors_shards(const std::string& index_path);

// Writes every parameter under its HF name and shape as F32, sorted by name, metadata {"format": "pt"},
// atomically (temp + fsync + rename).
void save_hf_weights(const std::string& path, const std::vector<ParamInfo>& params, const float* slab);

}  // namespace ct::model
