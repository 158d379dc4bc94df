// How a model's parameters sit in its flat slab: one entry per tensor, by HF name, in slab order. The slab
// layout is the contract between the model (computes with views into it), checkpoint I/O (reads/writes HF
// safetensors from/to it), the optimizer (walks it as one array) and DDP (buckets are slab ranges).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace ct::model {

struct ParamInfo {
  std::string name;    // HF name, e.g. "bert.encoder.layer.0.attention.self.query.weight"
  Shape shape;         // HF shape (Linear weights are [out, in])
  int64_t offset = 0;  // first element in the slab (f32)
  bool decay = true;   // false for biases and LayerNorm weights (HF's no-decay rule)

  int64_t numel() const { return shape_numel(shape); }
};

}  // namespace ct::model
