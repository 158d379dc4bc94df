#include "data/feature_cache.h"

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>
#include "core/error.h"
#include "core/fs.h"
#include "core/hash.h"

namespace ct::data {

namespace {

constexpr char kMagic[8] = {'C', 'T', 'F', 'E', 'A', 'T', '\0', '\0'};
constexpr uint32_t kVersion = 2;

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
    if (data.size() < sizeof(kMagic) || std::memcmp(data.data(), kMagic, sizeof(kMagic)) != 0)
      fail(path, ": not a coretrain feature cache (bad magic)");
    r.pos = sizeof(kMagic);
    const auto version = r.get<uint32_t>();
    if (version != kVersion) fail(path, ": feature cache version ", version, ", expected ", kVersion);
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
    if (r.pos != data.size())
      fail(path, ": corrupt feature cache (", data.size() - r.pos, " trailing bytes)");
    return fs;
  }

 private:
  template <class T>
  static void put(std::string& out, const T& v) {
    out.append(reinterpret_cast<const char*>(&v), sizeof(T));
  }
  template <class T>
  static void put_vec(std::string& out, const std::vector<T>& v) {
    put(out, static_cast<uint64_t>(v.size()));
    out.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
  }
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
      std::memcpy(v.data(), data.data() + pos, n * sizeof(T));
      pos += n * sizeof(T);
    }
  };
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

std::string feature_cache_dir() {
  std::string base;
  if (const char* v = std::getenv("HF_DATASETS_CACHE"); v && *v) {
    base = v;
  } else if (const char* hf = std::getenv("HF_HOME"); hf && *hf) {
    base = std::string(hf) + "/datasets";
  } else if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) {
    base = std::string(xdg) + "/huggingface/datasets";
  } else {
    const char* home = std::getenv("HOME");
    base = std::string(home && *home ? home : "/tmp") + "/.cache/huggingface/datasets";
  }
  return base + "/coretrain-features";
}

void save_feature_set(const std::string& path, const FeatureSet& features) {
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  if (ec) fail(path, ": cannot create the feature cache folder (", ec.message(), ")");
  fs::write_file_atomic(path, FeatureSetIO::encode(features));
}

std::optional<FeatureSet> load_feature_set(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) fail(path, ": cannot read the feature cache");
  return FeatureSetIO::decode(ss.str(), path);
}

}  // namespace ct::data
