// The bytes of a feature cache file (data/feature_cache.h), for each shape's encoder and decoder:
// little-endian values and length-prefixed vectors appended to a string, bounds-checked reads that name the
// file, and the file read whole or written atomically.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"

namespace ct::data {

template <class T>
void put(std::string& out, const T& v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof(T));
}
template <class T>
void put_vec(std::string& out, const std::vector<T>& v) {
  put(out, static_cast<uint64_t>(v.size()));
  out.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

// Bounds-checked reads of a cache file's bytes: a short or inconsistent file is an error naming it.
struct CacheReader {
  const std::string& data;
  const std::string& path;
  size_t pos = 0;
  template <class T>
  T get() {
    if (data.size() - pos < sizeof(T)) fail(path, ": truncated feature cache");
    T v;
    std::memcpy(&v, data.data() + pos, sizeof(T));
    pos += sizeof(T);
    return v;
  }
  template <class T>
  void vec(std::vector<T>& v) {
    const auto n = get<uint64_t>();
    if (n > (data.size() - pos) / sizeof(T)) fail(path, ": truncated feature cache");
    v.resize(n);
    if (n > 0) std::memcpy(v.data(), data.data() + pos, n * sizeof(T));
    pos += n * sizeof(T);
  }
  // Magic and version first, so a file of another kind or an older coretrain says so.
  void header(const char (&magic)[8], uint32_t version) {
    if (data.size() < sizeof(magic) || std::memcmp(data.data(), magic, sizeof(magic)) != 0)
      fail(path, ": not a coretrain feature cache (bad magic)");
    pos = sizeof(magic);
    const auto v = get<uint32_t>();
    if (v != version) fail(path, ": feature cache version ", v, ", expected ", version);
  }
  void end() const {
    if (pos != data.size()) fail(path, ": corrupt feature cache (", data.size() - pos, " trailing bytes)");
  }
};

// The file's bytes; nullopt when it does not exist. Throws naming the path when it cannot be read.
std::optional<std::string> read_cache_file(const std::string& path);
// Writes atomically (temp file + rename), creating the folder. Throws naming the path on I/O errors.
void write_cache_file(const std::string& path, const std::string& bytes);

}  // namespace ct::data
