// A 64-bit content hash for "do all ranks hold the same bytes?" checks and cache keys: FNV-1a over 8-byte
// words folded with a final avalanche. Not cryptographic; stable across runs, machines and builds.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>
#include <type_traits>
#include <vector>

namespace ct {

class Hasher {
 public:
  Hasher& bytes(const void* data, size_t n) {
    const auto* p = static_cast<const unsigned char*>(data);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
      uint64_t w;
      std::memcpy(&w, p + i, 8);
      mix(w);
    }
    uint64_t tail = 0;
    if (n > i) std::memcpy(&tail, p + i, n - i);  // an empty vector's data() may be null: no memcpy from it
    mix(tail ^ (static_cast<uint64_t>(n - i) << 56));
    return *this;
  }
  Hasher& str(std::string_view s) {
    u64(s.size());
    return bytes(s.data(), s.size());
  }
  Hasher& u64(uint64_t v) {
    mix(v);
    return *this;
  }
  template <class T>
  Hasher& vec(const std::vector<T>& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    u64(v.size());
    return bytes(v.data(), v.size() * sizeof(T));
  }
  uint64_t digest() const {
    uint64_t z = h_ + 0x9E3779B97F4A7C15ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }

 private:
  void mix(uint64_t w) { h_ = (h_ ^ w) * 0x100000001B3ULL; }
  uint64_t h_ = 0xCBF29CE484222325ULL;
};

}  // namespace ct
