#include "tasks/question_answering/qa_feature_cache.h"

#include <string>

#include "core/error.h"
#include "core/hash.h"
#include "data/feature_cache_file.h"

namespace ct::tasks {
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
    data::put(out, kVersion);
    const auto& o = fs.options_;
    data::put(out, o.max_seq_length);
    data::put(out, o.doc_stride);
    data::put(out, static_cast<uint8_t>(o.pad_to_max_length));
    data::put(out, o.pad_to_multiple_of);
    const auto& l = fs.layout_;
    for (const auto* v : {&l.prefix, &l.middle, &l.suffix, &l.prefix_types, &l.middle_types, &l.suffix_types})
      data::put_vec(out, *v);
    data::put(out, l.question_type);
    data::put(out, l.context_type);
    data::put(out, fs.pad_id_);
    data::put(out, static_cast<uint64_t>(fs.examples_.size()));
    for (const auto& te : fs.examples_) {
      data::put_vec(out, te.question_ids);
      data::put_vec(out, te.context_ids);
      data::put_vec(out, te.context_offsets);
    }
    data::put_vec(out, fs.features_);
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

  static FeatureSet decode(const std::string& bytes, const std::string& path) {
    data::CacheReader r{bytes, path};
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
    if (n > bytes.size()) fail(path, ": truncated feature cache");
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

uint64_t feature_set_hash(const FeatureSet& fs) {
  return FeatureSetIO::hash(fs);
}

void save_feature_set(const std::string& path, const FeatureSet& features) {
  data::write_cache_file(path, FeatureSetIO::encode(features));
}

std::optional<FeatureSet> load_feature_set(const std::string& path) {
  auto bytes = data::read_cache_file(path);
  if (!bytes) return std::nullopt;
  return FeatureSetIO::decode(*bytes, path);
}

}  // namespace ct::tasks
