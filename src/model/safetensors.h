// safetensors files (huggingface/safetensors): an 8-byte little-endian header length N, N bytes of UTF-8 JSON
// {name: {dtype, shape, data_offsets}, "__metadata__": {str: str}}, then one byte buffer the tensors tile
// exactly. The reader maps the file and validates every header field before any byte is trusted; the writer
// emits HF's layout (space-padded header, 8-byte aligned buffer, contiguous offsets) atomically.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace ct::model {

// Header length limit of the reference implementation (100 MB).
inline constexpr uint64_t kSafetensorsMaxHeader = 100'000'000;

// Element size in bytes of a safetensors dtype name ("F32", "BF16", ...); 0 when the name is unknown or a
// sub-byte type (F4/F6), which this reader does not support.
int64_t safetensors_dtype_size(const std::string& dtype);

struct SafetensorInfo {
  std::string name;
  std::string dtype;  // as in the file: "F32", "BF16", "F16", "I64", ...
  Shape shape;
  uint64_t begin = 0;  // byte offsets into the data buffer, end exclusive
  uint64_t end = 0;

  int64_t numel() const { return shape_numel(shape); }
  uint64_t nbytes() const { return end - begin; }
};

class SafetensorsFile {
 public:
  // Maps `path` read-only and validates it; throws ct::Error "<path>: <what>" on anything malformed.
  static SafetensorsFile open(const std::string& path);
  // The same over bytes already in memory; `source` names them in errors.
  static SafetensorsFile from_bytes(std::string bytes, const std::string& source);

  const std::string& source() const { return source_; }
  // Tensors in buffer order.
  const std::vector<SafetensorInfo>& tensors() const { return tensors_; }
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  // nullptr when absent.
  const SafetensorInfo* find(const std::string& name) const;
  // Throws naming the file and tensor when absent.
  const SafetensorInfo& at(const std::string& name) const;
  // The raw little-endian bytes of a tensor (not necessarily aligned).
  std::span<const uint8_t> bytes(const SafetensorInfo& t) const;
  // Converts F32/BF16/F16 to f32 into dst[0..numel); other dtypes throw naming the tensor and dtype.
  void read_f32(const SafetensorInfo& t, float* dst) const;
  std::vector<float> read_f32(const std::string& name) const;

 private:
  void parse_header();

  std::string source_;
  std::shared_ptr<const uint8_t> storage_;  // whole file (mmap or owned bytes)
  uint64_t size_ = 0;
  uint64_t data_start_ = 0;  // 8 + header length
  std::vector<SafetensorInfo> tensors_;
  std::map<std::string, size_t> index_;
  std::map<std::string, std::string> metadata_;
};

// One tensor to write: `data` holds numel * dtype size little-endian bytes.
struct SafetensorWrite {
  std::string name;
  std::string dtype = "F32";
  Shape shape;
  const void* data = nullptr;
};

// Header JSON text for `tensors` laid out contiguously in the given order, padded with spaces so the data
// buffer starts at an 8-byte aligned file offset.
std::string safetensors_header(const std::vector<SafetensorWrite>& tensors,
                               const std::map<std::string, std::string>& metadata);

// Writes `tensors` (sorted by name when `sort_by_name`, as HF does for same-dtype tensors, else in the given
// order) with `metadata` (HF: {"format": "pt"}) to `path` via temp file + fsync + rename.
void write_safetensors(const std::string& path, std::vector<SafetensorWrite> tensors,
                       const std::map<std::string, std::string>& metadata = {{"format", "pt"}},
                       bool sort_by_name = true);

}  // namespace ct::model
