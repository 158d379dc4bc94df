#include "data/feature_cache.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>
#include "core/error.h"
#include "core/fs.h"
#include "core/hash.h"
#include "data/squad_dataset.h"

namespace ct::data {

namespace {

constexpr char kMagic[8] = {'C', 'T', 'F', 'E', 'A', 'T', '\0', '\0'};
constexpr uint32_t kVersion = 2;
constexpr char kColumnsMagic[8] = {'C', 'T', 'F', 'C', 'O', 'L', 'S', '\0'};
constexpr uint32_t kColumnsVersion = 1;

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
struct Reader {
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

std::optional<std::string> read_cache_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) fail(path, ": cannot read the feature cache");
  return std::move(ss).str();
}

void write_cache_file(const std::string& path, const std::string& bytes) {
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  if (ec) fail(path, ": cannot create the feature cache folder (", ec.message(), ")");
  fs::write_file_atomic(path, bytes);
}

}  // namespace

// The on-disk form: magic, version, options, special ids, then per example (question ids, context ids,
// context offsets) and the feature array. Little-endian, as the machines we run on.
class FeatureSetIO {
 public:
  static std::string encode(const FeatureSet& fs) {
    std::string out(kMagic, sizeof(kMagic));
    put(out, kVersion);
    const auto& o = fs.options_;
    put(out, o.max_seq_length);
    put(out, o.doc_stride);
    put(out, static_cast<uint8_t>(o.pad_to_max_length));
    put(out, o.pad_to_multiple_of);
    const auto& l = fs.layout_;
    for (const auto* v : {&l.prefix, &l.middle, &l.suffix, &l.prefix_types, &l.middle_types, &l.suffix_types})
      put_vec(out, *v);
    put(out, l.question_type);
    put(out, l.context_type);
    put(out, fs.pad_id_);
    put(out, static_cast<uint64_t>(fs.examples_.size()));
    for (const auto& te : fs.examples_) {
      put_vec(out, te.question_ids);
      put_vec(out, te.context_ids);
      put_vec(out, te.context_offsets);
    }
    put_vec(out, fs.features_);
    return out;
  }

  // The same fields as encode(), hashed in place (no copy of a large set).
  static uint64_t hash(const FeatureSet& fs) {
    Hasher h;
    const auto& o = fs.options_;
    h.u64(static_cast<uint64_t>(o.max_seq_length)).u64(static_cast<uint64_t>(o.doc_stride));
    h.u64(o.pad_to_max_length).u64(static_cast<uint64_t>(o.pad_to_multiple_of));
    const auto& l = fs.layout_;
    h.vec(l.prefix).vec(l.middle).vec(l.suffix).vec(l.prefix_types).vec(l.middle_types).vec(l.suffix_types);
    h.u64(static_cast<uint64_t>(l.question_type)).u64(static_cast<uint64_t>(l.context_type));
    h.u64(static_cast<uint64_t>(fs.pad_id_)).u64(fs.examples_.size());
    for (const auto& te : fs.examples_) h.vec(te.question_ids).vec(te.context_ids).vec(te.context_offsets);
    h.vec(fs.features_);
    return h.digest();
  }

  static FeatureSet decode(const std::string& data, const std::string& path) {
    Reader r{data, path};
    r.header(kMagic, kVersion);
    FeatureSet fs;
    auto& o = fs.options_;
    o.max_seq_length = r.get<int64_t>();
    o.doc_stride = r.get<int64_t>();
    o.pad_to_max_length = r.get<uint8_t>() != 0;
    o.pad_to_multiple_of = r.get<int64_t>();
    auto& l = fs.layout_;
    for (auto* v : {&l.prefix, &l.middle, &l.suffix, &l.prefix_types, &l.middle_types, &l.suffix_types})
      r.vec(*v);
    l.question_type = r.get<int32_t>();
    l.context_type = r.get<int32_t>();
    if (l.prefix.size() != l.prefix_types.size() || l.middle.size() != l.middle_types.size() ||
        l.suffix.size() != l.suffix_types.size())
      fail(path, ": corrupt feature cache (special tokens and their types differ in length)");
    fs.pad_id_ = r.get<int32_t>();
    const auto n = r.get<uint64_t>();
    if (n > data.size()) fail(path, ": truncated feature cache");
    fs.examples_.resize(n);
    for (auto& te : fs.examples_) {
      r.vec(te.question_ids);
      r.vec(te.context_ids);
      r.vec(te.context_offsets);
      if (te.context_ids.size() != te.context_offsets.size())
        fail(path, ": corrupt feature cache (context ids and offsets differ in length)");
    }
    r.vec(fs.features_);
    for (const auto& f : fs.features_)
      if (f.example_index < 0 || static_cast<uint64_t>(f.example_index) >= n)
        fail(path, ": corrupt feature cache (feature of example ", f.example_index, " of ", n, ")");
    r.end();
    return fs;
  }
};

uint64_t tokenizer_fingerprint(const text::Tokenizer& tok) {
  Hasher h;
  for (const auto& t : tok.vocab()) h.str(t);
  for (const auto& a : tok.added_tokens()) h.str(a.content).u64(static_cast<uint64_t>(a.id));
  const auto& o = tok.options();
  h.u64(o.do_lower_case).u64(static_cast<uint64_t>(o.strip_accents)).u64(o.tokenize_chinese_chars);
  h.u64(o.clean_text).u64(static_cast<uint64_t>(o.max_input_chars_per_word));
  h.u64(static_cast<uint64_t>(o.model_max_length)).str(o.unk_token).str(o.sep_token).str(o.pad_token);
  h.str(o.cls_token).str(o.mask_token).str(o.continuing_subword_prefix);
  return h.digest();
}

uint64_t tokenizer_fingerprint(const text::HfTokenizer& tok) {
  Hasher h;
  h.str("tokenizer.json");
  if (const auto* j = tok.source()) h.str(j->dump());
  if (const auto* c = tok.config()) h.str(c->dump());
  return h.digest();
}

uint64_t feature_set_hash(const FeatureSet& fs) {
  return FeatureSetIO::hash(fs);
}

std::string feature_cache_dir(const std::string& cache_dir) {
  return datasets_cache_dir(cache_dir) + "/coretrain-features";
}

std::string feature_cache_file_name(uint64_t key) {
  char name[32];
  std::snprintf(name, sizeof name, "%016llx.bin", static_cast<unsigned long long>(key));
  return name;
}

void save_feature_set(const std::string& path, const FeatureSet& features) {
  write_cache_file(path, FeatureSetIO::encode(features));
}

std::optional<FeatureSet> load_feature_set(const std::string& path) {
  auto bytes = read_cache_file(path);
  if (!bytes) return std::nullopt;
  return FeatureSetIO::decode(*bytes, path);
}

void FeatureColumns::add(std::string name, std::vector<std::vector<int32_t>> rows) {
  names.push_back(std::move(name));
  columns.push_back(std::move(rows));
}

std::vector<std::vector<int32_t>> FeatureColumns::take(const std::string& name, const std::string& path) {
  for (size_t k = 0; k < names.size(); ++k)
    if (names[k] == name) return std::move(columns[k]);
  fail(path, ": corrupt feature cache (no column '", name, "')");
}

// Magic, version, the column count, then per column its name, row count and rows (length + int32s), then a
// checksum of everything before it.
void save_feature_columns(const std::string& path, const FeatureColumns& c) {
  CT_CHECK(c.names.size() == c.columns.size(), "feature columns: ", c.names.size(), " names for ",
           c.columns.size(), " columns");
  std::string out(kColumnsMagic, sizeof(kColumnsMagic));
  put(out, kColumnsVersion);
  put(out, static_cast<uint64_t>(c.names.size()));
  for (size_t k = 0; k < c.names.size(); ++k) {
    put_vec(out, std::vector<char>(c.names[k].begin(), c.names[k].end()));
    put(out, static_cast<uint64_t>(c.columns[k].size()));
    for (const auto& row : c.columns[k]) put_vec(out, row);
  }
  // A checksum last: ids from a damaged file would index past the embeddings.
  put(out, Hasher().bytes(out.data(), out.size()).digest());
  write_cache_file(path, out);
}

std::optional<FeatureColumns> load_feature_columns(const std::string& path) {
  auto bytes = read_cache_file(path);
  if (!bytes) return std::nullopt;
  Reader r{*bytes, path};
  r.header(kColumnsMagic, kColumnsVersion);
  if (bytes->size() < r.pos + sizeof(uint64_t)) fail(path, ": truncated feature cache");
  const size_t body = bytes->size() - sizeof(uint64_t);
  uint64_t sum;
  std::memcpy(&sum, bytes->data() + body, sizeof sum);
  if (Hasher().bytes(bytes->data(), body).digest() != sum)
    fail(path, ": corrupt feature cache (checksum mismatch)");
  bytes->resize(body);
  FeatureColumns c;
  const auto n = r.get<uint64_t>();
  // Each column takes at least 16 bytes, so a count beyond that is damage, not a reason to allocate.
  if (n > bytes->size() / 16) fail(path, ": truncated feature cache");
  for (uint64_t k = 0; k < n; ++k) {
    std::vector<char> name;
    r.vec(name);
    const auto rows = r.get<uint64_t>();
    if (rows > (bytes->size() - r.pos) / sizeof(uint64_t)) fail(path, ": truncated feature cache");
    std::vector<std::vector<int32_t>> column(rows);
    for (auto& row : column) r.vec(row);
    c.add(std::string(name.begin(), name.end()), std::move(column));
  }
  r.end();
  return c;
}

}  // namespace ct::data
