// Tokenizer folders in HF's layout: reading vocab.txt or a WordPiece tokenizer.json (+ tokenizer_config.json
// and special_tokens_map.json), and writing all four files the way save_pretrained does.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/fs.h"
#include "text/tokenizer.h"
#include "text/unicode.h"

namespace ct::text {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

json read_json(const std::string& path) {
  const std::string content = fs::read_file(path);
  json j;
  try {
    j = json::parse(content);
  } catch (const json::exception& e) {
    fail(path, ": malformed JSON (", e.what(), ")");
  }
  CT_CHECK(j.is_object(), path, ": expected a JSON object at the top level, got ", j.type_name());
  return j;
}

bool get_bool(const json& j, const char* key, bool fallback, const std::string& path) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  CT_CHECK(it->is_boolean(), path, ": \"", key, "\" must be true or false, got ", it->dump());
  return it->get<bool>();
}

// strip_accents: null -> -1 (follow lower-case), true -> 1, false -> 0.
int get_tristate(const json& j, const char* key, int fallback, const std::string& path) {
  auto it = j.find(key);
  if (it == j.end()) return fallback;
  if (it->is_null()) return -1;
  CT_CHECK(it->is_boolean(), path, ": \"", key, "\" must be true, false or null, got ", it->dump());
  return it->get<bool>() ? 1 : 0;
}

std::string get_string(const json& j, const char* key, const std::string& fallback, const std::string& path) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  CT_CHECK(it->is_string(), path, ": \"", key, "\" must be a string, got ", it->dump());
  return it->get<std::string>();
}

int64_t get_int(const json& j, const char* key, int64_t fallback, const std::string& path) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  CT_CHECK(it->is_number_integer(), path, ": \"", key, "\" must be an integer, got ", it->dump());
  return it->get<int64_t>();
}

// A special token is either "[CLS]" or an AddedToken object {"content": "[CLS]", ...}.
std::string get_special(const json& j, const char* key, const std::string& fallback,
                        const std::string& path) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  if (it->is_object()) return get_string(*it, "content", fallback, path + " " + key);
  CT_CHECK(it->is_string(), path, ": \"", key, "\" must be a string or an object with \"content\", got ",
           it->dump());
  return it->get<std::string>();
}

AddedToken parse_added(const json& a, const std::string& where) {
  CT_CHECK(a.is_object(), where, ": expected an object, got ", a.dump());
  AddedToken t;
  t.content = get_string(a, "content", "", where);
  CT_CHECK(!t.content.empty(), where, ": \"content\" is missing or empty");
  t.single_word = get_bool(a, "single_word", false, where);
  t.lstrip = get_bool(a, "lstrip", false, where);
  t.rstrip = get_bool(a, "rstrip", false, where);
  t.normalized = get_bool(a, "normalized", false, where);
  t.special = get_bool(a, "special", true, where);
  return t;
}

// Rust's str::trim_end (Unicode White_Space), which WordPiece::read_file applies to every vocab line.
std::string_view trim_end(std::string_view s) {
  size_t keep = 0, i = 0;
  while (i < s.size()) {
    size_t len;
    const char32_t c = decode_utf8(s.data() + i, s.size() - i, len);
    i += len;
    if (!is_whitespace(c)) keep = i;
  }
  return s.substr(0, keep);
}

std::vector<std::string> read_vocab_txt(const std::string& path) {
  const std::string content = fs::read_file(path);
  std::vector<std::string> vocab;
  size_t start = 0;
  while (start < content.size()) {
    size_t nl = content.find('\n', start);
    if (nl == std::string::npos) nl = content.size();
    vocab.emplace_back(trim_end(std::string_view(content).substr(start, nl - start)));
    start = nl + 1;
  }
  return vocab;
}

constexpr int64_t kMaxVocabId = int64_t{1} << 24;

// Puts an added token into the vocab: an id past the model vocab is appended (HF's AddedVocabulary gives such
// tokens their own ids); an id inside it must hold the same string.
void place_added(const AddedToken& t, std::vector<std::string>& vocab, VocabIndex& index,
                 const std::string& where) {
  const auto id = static_cast<size_t>(t.id);
  if (id >= vocab.size()) vocab.resize(id + 1);
  CT_CHECK(vocab[id].empty() || vocab[id] == t.content, where, ": id ", id, " is \"", t.content,
           "\" but the vocab has \"", vocab[id], "\" there");
  auto it = index.find(t.content);
  CT_CHECK(it == index.end() || it->second == t.id, where, ": \"", t.content, "\" has id ", t.id,
           " but the vocab gives it id ", it == index.end() ? -1 : it->second);
  vocab[id] = t.content;
  index.emplace(t.content, t.id);
}

// Fills vocab/index/added tokens and options from a tokenizer.json with a WordPiece model.
void read_tokenizer_json(const std::string& path, std::vector<std::string>& vocab, VocabIndex& index,
                         std::vector<AddedToken>& added, TokenizerOptions& o) {
  const json j = read_json(path);
  auto model_it = j.find("model");
  CT_CHECK(model_it != j.end() && model_it->is_object(), path, ": no \"model\" object");
  const json& model = *model_it;
  const std::string type = get_string(model, "type", "", path);
  CT_CHECK(type == "WordPiece", path, ": model.type is '", type,
           "', expected 'WordPiece' (only BERT-style WordPiece tokenizers are supported)");
  o.unk_token = get_string(model, "unk_token", o.unk_token, path);
  o.continuing_subword_prefix =
      get_string(model, "continuing_subword_prefix", o.continuing_subword_prefix, path);
  const int64_t max_chars = get_int(model, "max_input_chars_per_word", o.max_input_chars_per_word, path);
  CT_CHECK(max_chars > 0 && max_chars <= std::numeric_limits<int>::max(), path,
           ": model.max_input_chars_per_word must be a positive int, got ", max_chars);
  o.max_input_chars_per_word = static_cast<int>(max_chars);

  auto vocab_it = model.find("vocab");
  CT_CHECK(vocab_it != model.end() && vocab_it->is_object(), path,
           ": model.vocab must be an object {token: id}");
  int64_t max_id = -1;
  for (const auto& [token, id] : vocab_it->items()) {
    CT_CHECK(id.is_number_integer() && id.get<int64_t>() >= 0 && id.get<int64_t>() < kMaxVocabId, path,
             ": model.vocab[\"", token, "\"] must be an id in [0, ", kMaxVocabId, "), got ", id.dump());
    max_id = std::max(max_id, id.get<int64_t>());
  }
  vocab.assign(static_cast<size_t>(max_id + 1), std::string());
  std::vector<bool> used(vocab.size(), false);
  index.reserve(vocab_it->size());
  for (const auto& [token, id] : vocab_it->items()) {
    const auto i = static_cast<size_t>(id.get<int64_t>());
    CT_CHECK(!used[i], path, ": model.vocab gives id ", i, " to both \"", vocab[i], "\" and \"", token, "\"");
    used[i] = true;
    vocab[i] = token;
    index.emplace(token, static_cast<int32_t>(i));
  }

  auto added_it = j.find("added_tokens");
  if (added_it != j.end() && !added_it->is_null()) {
    CT_CHECK(added_it->is_array(), path, ": \"added_tokens\" must be an array");
    for (size_t k = 0; k < added_it->size(); ++k) {
      const std::string where = str(path, " added_tokens[", k, "]");
      const json& a = (*added_it)[k];
      AddedToken t = parse_added(a, where);
      const int64_t id = get_int(a, "id", -1, where);
      CT_CHECK(id >= 0 && id < kMaxVocabId, where, ": \"id\" must be in [0, ", kMaxVocabId, "), got ", id);
      t.id = static_cast<int32_t>(id);
      place_added(t, vocab, index, where);
      added.push_back(std::move(t));
    }
  }

  auto norm_it = j.find("normalizer");
  if (norm_it == j.end() || norm_it->is_null()) {
    o.clean_text = o.tokenize_chinese_chars = o.do_lower_case = false;
    o.strip_accents = 0;
  } else {
    CT_CHECK(norm_it->is_object(), path, ": \"normalizer\" must be an object or null");
    const std::string ntype = get_string(*norm_it, "type", "", path);
    CT_CHECK(ntype == "BertNormalizer", path, ": normalizer.type is '", ntype,
             "', expected 'BertNormalizer'");
    o.clean_text = get_bool(*norm_it, "clean_text", true, path);
    o.tokenize_chinese_chars = get_bool(*norm_it, "handle_chinese_chars", true, path);
    o.strip_accents = get_tristate(*norm_it, "strip_accents", -1, path);
    o.do_lower_case = get_bool(*norm_it, "lowercase", true, path);
  }
  auto pre_it = j.find("pre_tokenizer");
  const std::string ptype = (pre_it != j.end() && pre_it->is_object()) ? get_string(*pre_it, "type", "", path)
                                                                       : std::string("null");
  CT_CHECK(ptype == "BertPreTokenizer", path, ": pre_tokenizer.type is '", ptype,
           "', expected 'BertPreTokenizer'");
}

// tokenizer_config.json / special_tokens_map.json keys that override what the vocab files said.
void apply_config(const json& c, const std::string& path, TokenizerOptions& o, std::vector<AddedToken>& added,
                  std::vector<std::string>& vocab, VocabIndex& index) {
  o.do_lower_case = get_bool(c, "do_lower_case", o.do_lower_case, path);
  o.strip_accents = get_tristate(c, "strip_accents", o.strip_accents, path);
  o.tokenize_chinese_chars = get_bool(c, "tokenize_chinese_chars", o.tokenize_chinese_chars, path);
  auto mml = c.find("model_max_length");
  if (mml != c.end() && !mml->is_null()) {
    CT_CHECK(mml->is_number(), path, ": \"model_max_length\" must be a number, got ", mml->dump());
    // HF writes 1e30 ("no limit") when the model does not say; keep it as the largest int64.
    const double v = mml->get<double>();
    CT_CHECK(v > 0, path, ": \"model_max_length\" must be > 0, got ", mml->dump());
    o.model_max_length = mml->is_number_integer() ? mml->get<int64_t>()
                         : v >= 9.2e18            ? std::numeric_limits<int64_t>::max()
                                                  : static_cast<int64_t>(v);
  }
  o.unk_token = get_special(c, "unk_token", o.unk_token, path);
  o.sep_token = get_special(c, "sep_token", o.sep_token, path);
  o.pad_token = get_special(c, "pad_token", o.pad_token, path);
  o.cls_token = get_special(c, "cls_token", o.cls_token, path);
  o.mask_token = get_special(c, "mask_token", o.mask_token, path);
  auto dec = c.find("added_tokens_decoder");
  if (dec != c.end() && !dec->is_null()) {
    CT_CHECK(dec->is_object(), path, ": \"added_tokens_decoder\" must be an object {id: token}");
    for (const auto& [key, a] : dec->items()) {
      const std::string where = str(path, " added_tokens_decoder[\"", key, "\"]");
      AddedToken t = parse_added(a, where);
      char* endp = nullptr;
      const long long id = std::strtoll(key.c_str(), &endp, 10);
      CT_CHECK(!key.empty() && *endp == '\0' && id >= 0 && id < kMaxVocabId, where,
               ": key must be a token id");
      t.id = static_cast<int32_t>(id);
      place_added(t, vocab, index, where);
      bool known = false;
      for (const auto& x : added) known = known || x.id == t.id;
      if (!known) added.push_back(std::move(t));
    }
  }
}

// Json is ordered_json for tokenizer.json (HF's serde field order) and json (sorted keys, as Python's
// json.dump(sort_keys=True) writes tokenizer_config.json) for the others.
template <class Json>
Json added_token_json(const AddedToken& a, bool with_id) {
  Json j;
  if (with_id) j["id"] = a.id;
  j["content"] = a.content;
  j["single_word"] = a.single_word;
  j["lstrip"] = a.lstrip;
  j["rstrip"] = a.rstrip;
  j["normalized"] = a.normalized;
  j["special"] = a.special;
  return j;
}

template <class Json>
Json tristate_json(int v) {
  return v < 0 ? Json(nullptr) : Json(v != 0);
}

}  // namespace

Tokenizer Tokenizer::from_dir(const std::string& dir) {
  namespace sfs = std::filesystem;
  std::error_code ec;
  CT_CHECK(sfs::exists(dir, ec), "tokenizer folder '", dir, "' does not exist");
  CT_CHECK(sfs::is_directory(dir, ec), "tokenizer folder '", dir, "' is not a directory");
  const std::string json_path = (sfs::path(dir) / "tokenizer.json").string();
  const std::string vocab_path = (sfs::path(dir) / "vocab.txt").string();
  const std::string config_path = (sfs::path(dir) / "tokenizer_config.json").string();
  const std::string map_path = (sfs::path(dir) / "special_tokens_map.json").string();

  Tokenizer t;
  std::string source;
  // tokenizer.json wins when both exist, as for HF's fast tokenizers.
  if (sfs::exists(json_path, ec)) {
    source = json_path;
    read_tokenizer_json(json_path, t.vocab_, t.index_, t.added_, t.options_);
  } else if (sfs::exists(vocab_path, ec)) {
    source = vocab_path;
    t.vocab_ = read_vocab_txt(vocab_path);
    // A repeated line maps to its last id, as HF's load_vocab (a dict) and WordPiece::read_file (a HashMap)
    // do.
    for (size_t i = 0; i < t.vocab_.size(); ++i)
      t.index_.insert_or_assign(t.vocab_[i], static_cast<int32_t>(i));
  } else {
    fail("tokenizer folder '", dir, "' has neither tokenizer.json nor vocab.txt");
  }
  if (sfs::exists(config_path, ec)) {
    apply_config(read_json(config_path), config_path, t.options_, t.added_, t.vocab_, t.index_);
  }
  // Entries of special_tokens_map.json override tokenizer_config.json's, as in from_pretrained.
  if (sfs::exists(map_path, ec)) {
    const json m = read_json(map_path);
    TokenizerOptions& o = t.options_;
    o.unk_token = get_special(m, "unk_token", o.unk_token, map_path);
    o.sep_token = get_special(m, "sep_token", o.sep_token, map_path);
    o.pad_token = get_special(m, "pad_token", o.pad_token, map_path);
    o.cls_token = get_special(m, "cls_token", o.cls_token, map_path);
    o.mask_token = get_special(m, "mask_token", o.mask_token, map_path);
  }
  t.finish(source);
  return t;
}

void Tokenizer::save(const std::string& dir) const {
  namespace sfs = std::filesystem;
  std::error_code ec;
  sfs::create_directories(dir, ec);
  CT_CHECK(sfs::is_directory(dir, ec), "tokenizer save: cannot create folder '", dir, "'");
  const auto& o = options_;

  std::string vocab_txt;
  for (const auto& token : vocab_) {
    vocab_txt += token;
    vocab_txt += '\n';
  }

  json specials;
  specials["cls_token"] = o.cls_token;
  if (mask_id_ >= 0) specials["mask_token"] = o.mask_token;
  specials["pad_token"] = o.pad_token;
  specials["sep_token"] = o.sep_token;
  specials["unk_token"] = o.unk_token;

  json config;
  json decoder = json::object();
  for (const auto& a : added_) decoder[std::to_string(a.id)] = added_token_json<json>(a, false);
  config["added_tokens_decoder"] = decoder;
  config["clean_up_tokenization_spaces"] = true;
  config["cls_token"] = o.cls_token;
  config["do_lower_case"] = o.do_lower_case;
  if (mask_id_ >= 0) config["mask_token"] = o.mask_token;
  config["model_max_length"] = o.model_max_length;
  config["pad_token"] = o.pad_token;
  config["sep_token"] = o.sep_token;
  config["strip_accents"] = tristate_json<json>(o.strip_accents);
  config["tokenize_chinese_chars"] = o.tokenize_chinese_chars;
  config["tokenizer_class"] = "BertTokenizer";
  config["unk_token"] = o.unk_token;

  ordered_json tj;
  tj["version"] = "1.0";
  tj["truncation"] = nullptr;
  tj["padding"] = nullptr;
  ordered_json added = ordered_json::array();
  for (const auto& a : added_) added.push_back(added_token_json<ordered_json>(a, true));
  tj["added_tokens"] = added;
  tj["normalizer"] = {{"type", "BertNormalizer"},
                      {"clean_text", o.clean_text},
                      {"handle_chinese_chars", o.tokenize_chinese_chars},
                      {"strip_accents", tristate_json<ordered_json>(o.strip_accents)},
                      {"lowercase", o.do_lower_case}};
  tj["pre_tokenizer"] = {{"type", "BertPreTokenizer"}};
  auto special = [](const std::string& token, int type_id) {
    return ordered_json{{"SpecialToken", {{"id", token}, {"type_id", type_id}}}};
  };
  auto sequence = [](const char* id, int type_id) {
    return ordered_json{{"Sequence", {{"id", id}, {"type_id", type_id}}}};
  };
  ordered_json post;
  post["type"] = "TemplateProcessing";
  post["single"] = {special(o.cls_token, 0), sequence("A", 0), special(o.sep_token, 0)};
  post["pair"] = {special(o.cls_token, 0), sequence("A", 0), special(o.sep_token, 0), sequence("B", 1),
                  special(o.sep_token, 1)};
  ordered_json post_specials = ordered_json::object();
  post_specials[o.cls_token] = {{"id", o.cls_token}, {"ids", {cls_id_}}, {"tokens", {o.cls_token}}};
  post_specials[o.sep_token] = {{"id", o.sep_token}, {"ids", {sep_id_}}, {"tokens", {o.sep_token}}};
  post["special_tokens"] = post_specials;
  tj["post_processor"] = post;
  tj["decoder"] = {{"type", "WordPiece"}, {"prefix", o.continuing_subword_prefix}, {"cleanup", true}};
  // The model vocab in id order (what HF writes); a token shadowed by a later duplicate line keeps only that
  // id.
  std::vector<std::pair<int32_t, const std::string*>> by_id;
  by_id.reserve(index_.size());
  for (const auto& [token, id] : index_) by_id.emplace_back(id, &token);
  std::sort(by_id.begin(), by_id.end());
  // ordered_json inserts keys by linear search, so the 30k-entry vocab object is written by hand in its
  // place.
  std::string vocab_json = "{";
  for (size_t k = 0; k < by_id.size(); ++k) {
    vocab_json += k ? ",\n      " : "\n      ";
    vocab_json += ordered_json(*by_id[k].second).dump();
    vocab_json += ": ";
    vocab_json += std::to_string(by_id[k].first);
  }
  vocab_json += by_id.empty() ? "}" : "\n    }";
  const std::string kPlaceholder = "\"@@ct-vocab@@\"";
  ordered_json model;
  model["type"] = "WordPiece";
  model["unk_token"] = o.unk_token;
  model["continuing_subword_prefix"] = o.continuing_subword_prefix;
  model["max_input_chars_per_word"] = o.max_input_chars_per_word;
  model["vocab"] = "@@ct-vocab@@";
  tj["model"] = std::move(model);
  std::string tokenizer_json = tj.dump(2) + "\n";
  const size_t at = tokenizer_json.rfind(kPlaceholder);
  CT_ASSERT(at != std::string::npos);
  tokenizer_json.replace(at, kPlaceholder.size(), vocab_json);

  fs::write_file_atomic((sfs::path(dir) / "vocab.txt").string(), vocab_txt);
  fs::write_file_atomic((sfs::path(dir) / "tokenizer_config.json").string(), config.dump(2) + "\n");
  fs::write_file_atomic((sfs::path(dir) / "special_tokens_map.json").string(), specials.dump(2) + "\n");
  fs::write_file_atomic((sfs::path(dir) / "tokenizer.json").string(), tokenizer_json);
}

}  // namespace ct::text
