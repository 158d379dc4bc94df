#include "data/feature_cache.h"

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/fs.h"
#include "core/hash.h"
#include "data/datasets_cache.h"
#include "data/feature_cache_file.h"

namespace ct::data {

namespace {

constexpr char kColumnsMagic[8] = {'C', 'T', 'F', 'C', 'O', 'L', 'S', '\0'};
constexpr uint32_t kColumnsVersion = 1;

}  // namespace

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

std::string feature_cache_dir(const std::string& cache_dir) {
  return datasets_cache_dir(cache_dir) + "/coretrain-features";
}

std::string feature_cache_file_name(uint64_t key) {
  char name[32];
  std::snprintf(name, sizeof name, "%016llx.bin", static_cast<unsigned long long>(key));
  return name;
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
  CacheReader r{*bytes, path};
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
