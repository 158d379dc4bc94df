// safetensors reader (mmap + full header validation) and atomic writer in HF's layout.
#include "model/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <set>

#include <nlohmann/json.hpp>

#include "core/error.h"

namespace ct::model {

static_assert(std::endian::native == std::endian::little, "safetensors data is little-endian");

namespace {

using nlohmann::json;

struct DTypeEntry {
  const char* name;
  int64_t size;
};

// Every dtype the format defines with a whole-byte element; F4/F6 (sub-byte) are known but unsupported.
constexpr DTypeEntry kDTypes[] = {
    {"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"F8_E5M2", 1}, {"F8_E4M3", 1}, {"F8_E8M0", 1},
    {"I16", 2},  {"U16", 2}, {"F16", 2}, {"BF16", 2},    {"I32", 4},     {"U32", 4},
    {"F32", 4},  {"F64", 8}, {"I64", 8}, {"U64", 8},
};

// Names and parser messages go into one-line errors: cut long ones, replace control bytes (a JSON key may
// hold
// "\n") and, for parser messages that echo raw input, bytes that may not be valid UTF-8.
std::string printable(const std::string& s, size_t max = 60, bool ascii_only = false) {
  std::string out = s.size() <= max ? s : s.substr(0, max) + "...";
  for (char& c : out) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f || (ascii_only && u >= 0x80)) c = '?';
  }
  return out;
}
std::string trimmed(const std::string& s, size_t max = 60) {
  return printable(s, max);
}

float half_to_f32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);  // inf / nan
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  } else if (mant == 0) {
    bits = sign;
  } else {  // subnormal: normalize
    int e = -1;
    do {
      ++e;
      mant <<= 1;
    } while ((mant & 0x400u) == 0);
    bits = sign | (static_cast<uint32_t>(112 - e) << 23) | ((mant & 0x3ffu) << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// Parses JSON rejecting duplicate keys at any depth (nlohmann would keep the last one silently).
json parse_json_no_duplicates(const std::string& text, const std::string& source) {
  std::vector<std::set<std::string>> keys;
  json::parser_callback_t cb = [&](int /*depth*/, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::object_start) {
      keys.emplace_back();
    } else if (event == json::parse_event_t::object_end) {
      if (!keys.empty()) keys.pop_back();
    } else if (event == json::parse_event_t::key) {
      const std::string k = parsed.get<std::string>();
      if (!keys.empty() && !keys.back().insert(k).second)
        fail(source, ": safetensors header has duplicate key \"", trimmed(k), "\"");
    }
    return true;
  };
  try {
    return json::parse(text, cb);
  } catch (const json::exception& e) {
    fail(source, ": safetensors header is not valid UTF-8 JSON (", printable(e.what(), 300, true), ")");
  }
}

uint64_t read_u64_le(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

}  // namespace

int64_t safetensors_dtype_size(const std::string& dtype) {
  for (const auto& d : kDTypes)
    if (dtype == d.name) return d.size;
  return 0;
}

SafetensorsFile SafetensorsFile::open(const std::string& path) {
  SafetensorsFile f;
  f.source_ = path;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail(path, ": cannot open safetensors file (", std::strerror(errno), ")");
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    int e = errno;
    ::close(fd);
    fail(path, ": cannot stat (", std::strerror(e), ")");
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    fail(path, ": not a regular file, expected a safetensors file");
  }
  f.size_ = static_cast<uint64_t>(st.st_size);
  if (f.size_ < 8) {
    ::close(fd);
    fail(path, ": file is ", f.size_, " bytes, shorter than the 8-byte safetensors header length");
  }
  void* p = ::mmap(nullptr, f.size_, PROT_READ, MAP_PRIVATE, fd, 0);
  int e = errno;
  ::close(fd);
  if (p == MAP_FAILED) fail(path, ": mmap failed (", std::strerror(e), ")");
  const uint64_t size = f.size_;
  f.storage_ = std::shared_ptr<const uint8_t>(
      static_cast<const uint8_t*>(p), [size](const uint8_t* q) { ::munmap(const_cast<uint8_t*>(q), size); });
  f.parse_header();
  return f;
}

SafetensorsFile SafetensorsFile::from_bytes(std::string bytes, const std::string& source) {
  SafetensorsFile f;
  f.source_ = source;
  f.size_ = bytes.size();
  if (f.size_ < 8)
    fail(source, ": file is ", f.size_, " bytes, shorter than the 8-byte safetensors header length");
  auto owned = std::make_shared<std::string>(std::move(bytes));
  f.storage_ = std::shared_ptr<const uint8_t>(owned, reinterpret_cast<const uint8_t*>(owned->data()));
  f.parse_header();
  return f;
}

void SafetensorsFile::parse_header() {
  const std::string& src = source_;
  const uint64_t n = read_u64_le(storage_.get());
  if (n > kSafetensorsMaxHeader)
    fail(src, ": safetensors header length ", n, " exceeds the ", kSafetensorsMaxHeader, "-byte limit");
  if (n > size_ - 8)
    fail(src, ": safetensors header length ", n, " exceeds the ", size_ - 8, " bytes after the length field");
  if (n < 2) fail(src, ": safetensors header length ", n, " is too short for a JSON object");
  data_start_ = 8 + n;
  const std::string text(reinterpret_cast<const char*>(storage_.get()) + 8, n);
  const json header = parse_json_no_duplicates(text, src);
  if (!header.is_object())
    fail(src, ": safetensors header is a JSON ", header.type_name(), ", expected an object");

  const uint64_t buffer = size_ - data_start_;
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") {
      if (!entry.is_object())
        fail(src, ": __metadata__ is a JSON ", entry.type_name(), ", expected an object");
      for (const auto& [k, v] : entry.items()) {
        if (!v.is_string())
          fail(src, ": __metadata__ value of \"", trimmed(k), "\" is a JSON ", v.type_name(),
               ", expected a string");
        metadata_[k] = v.get<std::string>();
      }
      continue;
    }
    const std::string where = str(src, ": tensor \"", trimmed(name, 120), "\"");
    if (!entry.is_object()) fail(where, " entry is a JSON ", entry.type_name(), ", expected an object");
    SafetensorInfo t;
    t.name = name;
    if (!entry.contains("dtype") || !entry["dtype"].is_string()) fail(where, " needs a string \"dtype\"");
    t.dtype = entry["dtype"].get<std::string>();
    const int64_t esize = safetensors_dtype_size(t.dtype);
    if (esize == 0) fail(where, " has unknown or unsupported dtype \"", trimmed(t.dtype), "\"");

    if (!entry.contains("shape") || !entry["shape"].is_array())
      fail(where, " needs \"shape\" as a list of non-negative integers");
    uint64_t numel = 1;
    for (const auto& d : entry["shape"]) {
      if (!d.is_number_unsigned())
        fail(where, " shape ", entry["shape"].dump(), " is not a list of non-negative integers");
      const uint64_t v = d.get<uint64_t>();
      if (v > static_cast<uint64_t>(INT64_MAX) || __builtin_mul_overflow(numel, v, &numel))
        fail(where, " shape ", entry["shape"].dump(), " overflows the element count");
      t.shape.push_back(static_cast<int64_t>(v));
    }

    if (!entry.contains("data_offsets") || !entry["data_offsets"].is_array() ||
        entry["data_offsets"].size() != 2 || !entry["data_offsets"][0].is_number_unsigned() ||
        !entry["data_offsets"][1].is_number_unsigned())
      fail(where, " needs \"data_offsets\" as [begin, end] of non-negative integers, saw ",
           entry.contains("data_offsets") ? trimmed(entry["data_offsets"].dump()) : std::string("nothing"));
    t.begin = entry["data_offsets"][0].get<uint64_t>();
    t.end = entry["data_offsets"][1].get<uint64_t>();
    if (t.begin > t.end) fail(where, " data_offsets [", t.begin, ", ", t.end, "] have begin > end");
    uint64_t expect_bytes;
    if (__builtin_mul_overflow(numel, static_cast<uint64_t>(esize), &expect_bytes))
      fail(where, " shape ", shape_str(t.shape), " overflows the byte count");
    if (t.end - t.begin != expect_bytes)
      fail(where, " data_offsets [", t.begin, ", ", t.end, "] span ", t.end - t.begin, " bytes, expected ",
           expect_bytes, " for ", t.dtype, " ", shape_str(t.shape));
    if (t.end > buffer)
      fail(where, " data_offsets [", t.begin, ", ", t.end, "] run past the ", buffer,
           "-byte data buffer (file truncated?)");
    tensors_.push_back(std::move(t));
  }

  // The format requires the tensors to tile the buffer: no gaps, no overlaps, nothing left over.
  std::sort(tensors_.begin(), tensors_.end(), [](const SafetensorInfo& a, const SafetensorInfo& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  uint64_t covered = 0;
  for (const auto& t : tensors_) {
    if (t.begin < covered)
      fail(src, ": tensor \"", trimmed(t.name, 120), "\" data_offsets [", t.begin, ", ", t.end,
           "] overlap the previous tensor ending at ", covered);
    if (t.begin > covered)
      fail(src, ": tensor \"", trimmed(t.name, 120), "\" data_offsets [", t.begin, ", ", t.end,
           "] leave a gap after byte ", covered, " (tensors must tile the data buffer)");
    covered = t.end;
  }
  if (covered != buffer)
    fail(src, ": tensors cover ", covered, " bytes but the data buffer holds ", buffer,
         " (trailing bytes or truncated header)");
  for (size_t i = 0; i < tensors_.size(); ++i) index_[tensors_[i].name] = i;
}

const SafetensorInfo* SafetensorsFile::find(const std::string& name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : &tensors_[it->second];
}

const SafetensorInfo& SafetensorsFile::at(const std::string& name) const {
  const SafetensorInfo* t = find(name);
  if (!t) fail(source_, ": no tensor named \"", name, "\"");
  return *t;
}

std::span<const uint8_t> SafetensorsFile::bytes(const SafetensorInfo& t) const {
  CT_ASSERT(t.end <= size_ - data_start_);
  return {storage_.get() + data_start_ + t.begin, static_cast<size_t>(t.end - t.begin)};
}

void SafetensorsFile::read_f32(const SafetensorInfo& t, float* dst) const {
  const auto b = bytes(t);
  const int64_t n = t.numel();
  if (t.dtype == "F32") {
    if (!b.empty()) std::memcpy(dst, b.data(), b.size());
  } else if (t.dtype == "BF16") {
    for (int64_t i = 0; i < n; ++i) {
      uint16_t h;
      std::memcpy(&h, b.data() + 2 * i, 2);
      dst[i] = bf16_bits_to_f32(h);
    }
  } else if (t.dtype == "F16") {
    for (int64_t i = 0; i < n; ++i) {
      uint16_t h;
      std::memcpy(&h, b.data() + 2 * i, 2);
      dst[i] = half_to_f32(h);
    }
  } else {
    fail(source_, ": tensor \"", t.name, "\" has dtype ", t.dtype, ", expected F32, BF16 or F16");
  }
}

std::vector<float> SafetensorsFile::read_f32(const std::string& name) const {
  const SafetensorInfo& t = at(name);
  std::vector<float> out(static_cast<size_t>(t.numel()));
  read_f32(t, out.data());
  return out;
}

std::string safetensors_header(const std::vector<SafetensorWrite>& tensors,
                               const std::map<std::string, std::string>& metadata) {
  nlohmann::ordered_json h = nlohmann::ordered_json::object();
  if (!metadata.empty()) {
    nlohmann::ordered_json m = nlohmann::ordered_json::object();
    for (const auto& [k, v] : metadata) m[k] = v;
    h["__metadata__"] = m;
  }
  uint64_t offset = 0;
  for (const auto& t : tensors) {
    CT_CHECK(!t.name.empty() && t.name != "__metadata__", "safetensors writer: invalid tensor name \"",
             t.name, "\"");
    CT_CHECK(!h.contains(t.name), "safetensors writer: duplicate tensor name \"", t.name, "\"");
    const int64_t esize = safetensors_dtype_size(t.dtype);
    CT_CHECK(esize > 0, "safetensors writer: tensor \"", t.name, "\" has unknown dtype \"", t.dtype, "\"");
    nlohmann::ordered_json shape = nlohmann::ordered_json::array();
    for (int64_t d : t.shape) {
      CT_CHECK(d >= 0, "safetensors writer: tensor \"", t.name, "\" has negative dimension in ",
               shape_str(t.shape));
      shape.push_back(d);
    }
    const uint64_t nbytes = static_cast<uint64_t>(shape_numel(t.shape) * esize);
    CT_CHECK(nbytes == 0 || t.data != nullptr, "safetensors writer: tensor \"", t.name, "\" has no data");
    nlohmann::ordered_json entry = nlohmann::ordered_json::object();
    entry["dtype"] = t.dtype;
    entry["shape"] = shape;
    entry["data_offsets"] = nlohmann::ordered_json::array({offset, offset + nbytes});
    h[t.name] = entry;
    offset += nbytes;
  }
  std::string text = h.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  return text;
}

void write_safetensors(const std::string& path, std::vector<SafetensorWrite> tensors,
                       const std::map<std::string, std::string>& metadata, bool sort_by_name) {
  if (sort_by_name)
    std::stable_sort(tensors.begin(), tensors.end(),
                     [](const SafetensorWrite& a, const SafetensorWrite& b) { return a.name < b.name; });
  const std::string header = safetensors_header(tensors, metadata);
  const uint64_t n = header.size();

  // Streamed from the callers' buffers (a model's slab can be GBs), so not via a string + write_file_atomic.
  const std::string tmp = path + ".tmp-" + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail(tmp, ": cannot create (", std::strerror(errno), ")");
  auto write_all = [&](const void* data, size_t len) {
    const char* p = static_cast<const char*>(data);
    while (len > 0) {
      ssize_t w = ::write(fd, p, std::min<size_t>(len, size_t{1} << 30));
      if (w < 0) {
        if (errno == EINTR) continue;
        int e = errno;
        ::close(fd);
        ::unlink(tmp.c_str());
        fail(tmp, ": write failed (", std::strerror(e), ")");
      }
      p += w;
      len -= static_cast<size_t>(w);
    }
  };
  uint8_t len_bytes[8];
  std::memcpy(len_bytes, &n, 8);
  write_all(len_bytes, 8);
  write_all(header.data(), header.size());
  for (const auto& t : tensors) {
    const size_t nbytes = static_cast<size_t>(shape_numel(t.shape) * safetensors_dtype_size(t.dtype));
    if (nbytes > 0) write_all(t.data, nbytes);
  }
  if (::fsync(fd) != 0) {
    int e = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    fail(tmp, ": fsync failed (", std::strerror(e), ")");
  }
  if (::close(fd) != 0) {
    int e = errno;
    ::unlink(tmp.c_str());
    fail(tmp, ": close failed (", std::strerror(e), ")");
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int e = errno;
    ::unlink(tmp.c_str());
    fail(path, ": rename failed (", std::strerror(e), ")");
  }
}

}  // namespace ct::model
