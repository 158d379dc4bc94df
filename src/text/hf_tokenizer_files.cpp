// Tokenizer folders for HfTokenizer: tokenizer.json when the folder has one, else the older files converted
// the way transformers' convert_slow_tokenizer builds a fast tokenizer (vocab.txt: BERT; vocab.json +
// merges.txt: GPT-2 or RoBERTa; a SentencePiece .model: XLM-R, DeBERTa-v2/v3, ALBERT or a plain Unigram),
// then tokenizer_config.json applied as transformers' *TokenizerFast constructors apply it. save() writes the
// pipeline back.
#include <cctype>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/error.h"
#include "core/fs.h"
#include "text/hf_tokenizer.h"
#include "text/json_fields.h"
#include "text/sentencepiece_model.h"

namespace ct::text {
namespace {

using nlohmann::json;
namespace stdfs = std::filesystem;

const char* kMeta = "\xE2\x96\x81";  // ▁

json read_json_file(const std::string& path) {
  try {
    return json::parse(fs::read_file(path));
  } catch (const json::exception& e) {
    fail(path, ": malformed JSON (", e.what(), ")");
  }
}

// A special token named in tokenizer_config.json / special_tokens_map.json: "<s>" or {"content": "<s>", ...}.
std::string special(const json& config, const char* key, const std::string& fallback) {
  const json* v = jf::find(config, key);
  if (!v) return fallback;
  if (v->is_object()) return jf::get_string(*v, "content", fallback, key);
  return v->is_string() ? v->get<std::string>() : fallback;
}

json added_token(const std::string& content, int64_t id, bool lstrip = false) {
  return {{"id", id},        {"content", content},  {"single_word", false}, {"lstrip", lstrip},
          {"rstrip", false}, {"normalized", false}, {"special", true}};
}

// "[CLS]:0 $A:0 [SEP]:0" -> TemplateProcessing pieces ($A/$B sequences, anything else a special token; type 0
// unless ":N").
json template_pieces(const std::string& spec) {
  json out = json::array();
  std::istringstream in(spec);
  for (std::string item; in >> item;) {
    int type = 0;
    const size_t colon = item.rfind(':');
    if (colon != std::string::npos && colon + 1 < item.size() &&
        item.find_first_not_of("0123456789", colon + 1) == std::string::npos) {
      type = std::stoi(item.substr(colon + 1));
      item = item.substr(0, colon);
    }
    if (item == "$A" || item == "$B") {
      out.push_back({{"Sequence", {{"id", item.substr(1)}, {"type_id", type}}}});
    } else {
      out.push_back({{"SpecialToken", {{"id", item}, {"type_id", type}}}});
    }
  }
  return out;
}

json template_processing(const std::string& single, const std::string& pair,
                         const std::vector<std::pair<std::string, int64_t>>& specials) {
  json st = json::object();
  for (const auto& [t, id] : specials) st[t] = {{"id", t}, {"ids", {id}}, {"tokens", {t}}};
  return {{"type", "TemplateProcessing"},
          {"single", template_pieces(single)},
          {"pair", template_pieces(pair)},
          {"special_tokens", st}};
}

json base_json() {
  return {{"version", "1.0"},          {"truncation", nullptr},
          {"padding", nullptr},        {"added_tokens", json::array()},
          {"normalizer", nullptr},     {"pre_tokenizer", nullptr},
          {"post_processor", nullptr}, {"decoder", nullptr}};
}

// Registers `content` as an added token: the vocab's id when it has one, else the next id after everything.
int64_t add_special(json& tj, const std::string& content, bool lstrip,
                    std::function<int64_t(const std::string&)> id_of, int64_t& next) {
  if (content.empty()) return -1;
  for (auto& a : tj["added_tokens"]) {
    if (a["content"] == content) return a["id"].get<int64_t>();
  }
  int64_t id = id_of(content);
  if (id < 0) id = next++;
  tj["added_tokens"].push_back(added_token(content, id, lstrip));
  return id;
}

// The id add_special gave `content` (templates name their special tokens by these ids).
int64_t added_id(const json& tj, const std::string& content) {
  for (const auto& a : tj["added_tokens"])
    if (a["content"] == content) return a["id"].get<int64_t>();
  fail("tokenizer conversion: special token '", content, "' was not registered");
}

json bert_json(const std::string& dir, const json& config) {
  const std::string path = dir + "/vocab.txt";
  std::istringstream in(fs::read_file(path));
  json vocab = json::object();
  int64_t n = 0;
  for (std::string line; std::getline(in, line); ++n) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t'))
      line.pop_back();
    vocab[line] = n;
  }
  json tj = base_json();
  const bool lower = jf::get_bool(config, "do_lower_case", true, "tokenizer_config.json");
  json strip = config.contains("strip_accents") ? config["strip_accents"] : json(nullptr);
  tj["normalizer"] = {
      {"type", "BertNormalizer"},
      {"clean_text", true},
      {"handle_chinese_chars", jf::get_bool(config, "tokenize_chinese_chars", true, "tokenizer_config.json")},
      {"strip_accents", strip},
      {"lowercase", lower}};
  tj["pre_tokenizer"] = {{"type", "BertPreTokenizer"}};
  const std::string unk = special(config, "unk_token", "[UNK]");
  tj["model"] = {{"type", "WordPiece"},
                 {"unk_token", unk},
                 {"continuing_subword_prefix", "##"},
                 {"max_input_chars_per_word", 100},
                 {"vocab", vocab}};
  int64_t next = n;
  auto id_of = [&](const std::string& t) {
    return vocab.contains(t) ? vocab[t].get<int64_t>() : int64_t{-1};
  };
  const std::string cls = special(config, "cls_token", "[CLS]"), sep = special(config, "sep_token", "[SEP]");
  for (const std::string& t :
       {special(config, "pad_token", "[PAD]"), unk, cls, sep, special(config, "mask_token", "[MASK]")})
    add_special(tj, t, false, id_of, next);
  tj["post_processor"] =
      template_processing(cls + ":0 $A:0 " + sep + ":0", cls + ":0 $A:0 " + sep + ":0 $B:1 " + sep + ":1",
                          {{cls, added_id(tj, cls)}, {sep, added_id(tj, sep)}});
  tj["decoder"] = {{"type", "WordPiece"}, {"prefix", "##"}, {"cleanup", true}};
  return tj;
}

// Classes whose converter is RobertaConverter (XLMRoberta is SentencePiece, not one of them).
bool is_roberta_like(const std::string& cls) {
  if (cls.find("XLMRoberta") != std::string::npos) return false;
  for (const char* k : {"Roberta", "Longformer", "Bart"})
    if (cls.find(k) != std::string::npos) return true;
  return false;
}

// DeBERTa (v1): GPT-2's byte-level BPE with BERT's [CLS]/[SEP] template.
bool is_deberta_v1(const std::string& cls) {
  return cls.rfind("Deberta", 0) == 0 && cls.rfind("DebertaV2", 0) != 0;
}

json bpe_json(const std::string& dir, const json& config, const std::string& cls_name) {
  const json vocab = read_json_file(dir + "/vocab.json");
  CT_CHECK(vocab.is_object(), dir, "/vocab.json: expected {token: id}");
  std::istringstream in(fs::read_file(dir + "/merges.txt"));
  json merges = json::array();
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line.rfind("#version", 0) == 0) continue;
    merges.push_back(line);
  }
  json tj = base_json();
  const bool add_prefix_space = jf::get_bool(config, "add_prefix_space", false, "tokenizer_config.json");
  tj["model"] = {{"type", "BPE"},
                 {"dropout", nullptr},
                 {"unk_token", nullptr},
                 {"continuing_subword_prefix", ""},
                 {"end_of_word_suffix", ""},
                 {"fuse_unk", false},
                 {"byte_fallback", false},
                 {"vocab", vocab},
                 {"merges", merges}};
  tj["pre_tokenizer"] = {{"type", "ByteLevel"},
                         {"add_prefix_space", add_prefix_space},
                         {"trim_offsets", true},
                         {"use_regex", true}};
  tj["decoder"] = {
      {"type", "ByteLevel"}, {"add_prefix_space", true}, {"trim_offsets", true}, {"use_regex", true}};
  int64_t next = 0;
  for (auto it = vocab.begin(); it != vocab.end(); ++it) next = std::max(next, it.value().get<int64_t>() + 1);
  auto id_of = [&](const std::string& t) {
    return vocab.contains(t) ? vocab[t].get<int64_t>() : int64_t{-1};
  };
  if (is_roberta_like(cls_name)) {
    const std::string bos = special(config, "bos_token", "<s>"), eos = special(config, "eos_token", "</s>");
    const std::string cls = special(config, "cls_token", "<s>"), sep = special(config, "sep_token", "</s>");
    for (const std::string& t :
         {bos, special(config, "pad_token", "<pad>"), eos, special(config, "unk_token", "<unk>")})
      add_special(tj, t, false, id_of, next);
    add_special(tj, special(config, "mask_token", "<mask>"), true, id_of, next);
    tj["post_processor"] = {{"type", "RobertaProcessing"},
                            {"sep", {sep, id_of(sep) >= 0 ? id_of(sep) : 2}},
                            {"cls", {cls, id_of(cls) >= 0 ? id_of(cls) : 0}},
                            {"trim_offsets", true},
                            {"add_prefix_space", add_prefix_space}};
  } else if (is_deberta_v1(cls_name)) {
    const std::string cls = special(config, "cls_token", "[CLS]"),
                      sep = special(config, "sep_token", "[SEP]");
    for (const std::string& t :
         {special(config, "pad_token", "[PAD]"), cls, sep, special(config, "unk_token", "[UNK]")})
      add_special(tj, t, false, id_of, next);
    add_special(tj, special(config, "mask_token", "[MASK]"), true, id_of, next);
    tj["post_processor"] =
        template_processing(cls + ":0 $A:0 " + sep + ":0", cls + ":0 $A:0 " + sep + ":0 $B:1 " + sep + ":1",
                            {{cls, added_id(tj, cls)}, {sep, added_id(tj, sep)}});
  } else {
    for (const char* key : {"bos_token", "eos_token", "unk_token"})
      add_special(tj, special(config, key, "<|endoftext|>"), false, id_of, next);
    if (jf::get_bool(config, "add_bos_token", false, "tokenizer_config.json")) {
      const std::string bos = special(config, "bos_token", "<|endoftext|>");
      tj["post_processor"] = template_processing(bos + ":0 $A:0", bos + ":0 $A:0 $B:1", {{bos, id_of(bos)}});
    } else {
      tj["post_processor"] = {
          {"type", "ByteLevel"}, {"add_prefix_space", true}, {"trim_offsets", false}, {"use_regex", true}};
    }
  }
  return tj;
}

json spm_json(const std::string& path, const json& config, const std::string& cls_name) {
  const SentencePieceModel m = read_sentencepiece_model(fs::read_file(path), path);
  CT_CHECK(m.model_type == 1, path, ": SentencePiece model type ", m.model_type,
           " is not supported without a tokenizer.json (only Unigram, type 1, is converted here)");
  const bool xlmr = cls_name.find("XLMRoberta") != std::string::npos;
  const bool deberta = cls_name.find("DebertaV2") != std::string::npos;
  const bool albert = cls_name.find("Albert") != std::string::npos;
  json vocab = json::array();
  if (xlmr) {
    // fairseq's ids: four specials first, the SentencePiece pieces after the model's own three, <mask> last.
    for (const char* t : {"<s>", "<pad>", "</s>", "<unk>"}) vocab.push_back({t, 0.0});
    for (size_t i = 3; i < m.pieces.size(); ++i) vocab.push_back({m.pieces[i].piece, m.pieces[i].score});
    vocab.push_back({"<mask>", 0.0});
  } else {
    for (const auto& p : m.pieces) {
      double score = p.score;
      const std::string& s = p.piece;
      // ALBERT's converter pushes "<digit>," pieces down so numbers keep their commas apart.
      if (albert && s.size() >= 2 && s.back() == ',' &&
          std::isdigit(static_cast<unsigned char>(s[s.size() - 2])))
        score -= 100;
      vocab.push_back({s, score});
    }
  }
  json tj = base_json();
  tj["model"] = {
      {"type", "Unigram"}, {"unk_id", xlmr ? 3 : m.unk_id}, {"vocab", vocab}, {"byte_fallback", false}};
  std::string b64;
  {
    static const char* tbl = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const std::string& s = m.precompiled_charsmap;
    for (size_t i = 0; i < s.size(); i += 3) {
      uint32_t v = static_cast<uint32_t>(static_cast<unsigned char>(s[i])) << 16;
      if (i + 1 < s.size()) v |= static_cast<uint32_t>(static_cast<unsigned char>(s[i + 1])) << 8;
      if (i + 2 < s.size()) v |= static_cast<unsigned char>(s[i + 2]);
      b64 += tbl[(v >> 18) & 63];
      b64 += tbl[(v >> 12) & 63];
      b64 += i + 1 < s.size() ? tbl[(v >> 6) & 63] : '=';
      b64 += i + 2 < s.size() ? tbl[v & 63] : '=';
    }
  }
  json norms = json::array();
  const bool lower = jf::get_bool(config, "do_lower_case", false, "tokenizer_config.json");
  if (deberta) {
    if (lower) norms.push_back({{"type", "Lowercase"}});
    norms.push_back({{"type", "Strip"}, {"strip_left", true}, {"strip_right", true}});
    if (!b64.empty()) norms.push_back({{"type", "Precompiled"}, {"precompiled_charsmap", b64}});
    norms.push_back({{"type", "Replace"}, {"pattern", {{"Regex", " {2,}"}}}, {"content", " "}});
  } else if (albert) {
    norms.push_back({{"type", "Replace"}, {"pattern", {{"String", "``"}}}, {"content", "\""}});
    norms.push_back({{"type", "Replace"}, {"pattern", {{"String", "''"}}}, {"content", "\""}});
    if (!jf::get_bool(config, "keep_accents", false, "tokenizer_config.json")) {
      norms.push_back({{"type", "NFKD"}});
      norms.push_back({{"type", "StripAccents"}});
    }
    if (jf::get_bool(config, "do_lower_case", true, "tokenizer_config.json"))
      norms.push_back({{"type", "Lowercase"}});
    if (!b64.empty()) norms.push_back({{"type", "Precompiled"}, {"precompiled_charsmap", b64}});
    norms.push_back({{"type", "Replace"}, {"pattern", {{"Regex", " {2,}"}}}, {"content", " "}});
  } else {
    if (!b64.empty()) norms.push_back({{"type", "Precompiled"}, {"precompiled_charsmap", b64}});
    norms.push_back({{"type", "Strip"}, {"strip_left", false}, {"strip_right", true}});
    norms.push_back({{"type", "Replace"}, {"pattern", {{"Regex", " {2,}"}}}, {"content", kMeta}});
  }
  tj["normalizer"] = {{"type", "Sequence"}, {"normalizers", norms}};
  const bool add_prefix_space = jf::get_bool(config, "add_prefix_space", true, "tokenizer_config.json");
  const bool legacy = jf::get_bool(config, "legacy", true, "tokenizer_config.json");
  const std::string scheme = !add_prefix_space ? "never" : legacy ? "always" : "first";
  json metaspace = {
      {"type", "Metaspace"}, {"replacement", kMeta}, {"prepend_scheme", scheme}, {"split", true}};
  if (deberta && jf::get_bool(config, "split_by_punct", false, "tokenizer_config.json")) {
    tj["pre_tokenizer"] = {
        {"type", "Sequence"},
        {"pretokenizers", {{{"type", "Punctuation"}, {"behavior", "Isolated"}}, metaspace}}};
  } else {
    tj["pre_tokenizer"] = metaspace;
  }
  tj["decoder"] = metaspace;
  auto id_of = [&](const std::string& t) -> int64_t {
    for (size_t i = 0; i < vocab.size(); ++i)
      if (vocab[i][0] == t) return static_cast<int64_t>(i);
    return -1;
  };
  int64_t next = static_cast<int64_t>(vocab.size());
  if (xlmr) {
    for (const char* t : {"<s>", "<pad>", "</s>", "<unk>"}) add_special(tj, t, false, id_of, next);
    add_special(tj, special(config, "mask_token", "<mask>"), true, id_of, next);
    tj["post_processor"] =
        template_processing("<s> $A </s>", "<s> $A </s> </s> $B </s>", {{"<s>", 0}, {"</s>", 2}});
  } else if (deberta || albert) {
    const std::string cls = special(config, "cls_token", "[CLS]"),
                      sep = special(config, "sep_token", "[SEP]");
    for (const std::string& t : {special(config, "pad_token", albert ? "<pad>" : "[PAD]"), cls, sep,
                                 special(config, "unk_token", albert ? "<unk>" : "[UNK]")})
      add_special(tj, t, false, id_of, next);
    add_special(tj, special(config, "mask_token", "[MASK]"), false, id_of, next);
    tj["post_processor"] =
        template_processing(cls + ":0 $A:0 " + sep + ":0", cls + ":0 $A:0 " + sep + ":0 $B:1 " + sep + ":1",
                            {{cls, added_id(tj, cls)}, {sep, added_id(tj, sep)}});
  }
  // SentencePiece's control (3) and user-defined (4) pieces are added tokens, as the converter adds them.
  for (size_t i = 0; i < m.pieces.size(); ++i) {
    const auto& p = m.pieces[i];
    if (p.type != 3 && p.type != 4) continue;
    bool known = false;
    for (const auto& a : tj["added_tokens"]) known = known || a["content"] == p.piece;
    if (known) continue;
    json a = added_token(p.piece, id_of(p.piece));
    a["special"] = p.type == 3;
    tj["added_tokens"].push_back(a);
  }
  return tj;
}

// What transformers' *TokenizerFast constructors change in a loaded tokenizer.json.
void apply_config(json& tj, const json& config, const std::string& cls_name) {
  if (is_roberta_like(cls_name) || is_deberta_v1(cls_name) || cls_name.rfind("GPT2", 0) == 0) {
    // RobertaTokenizerFast(add_prefix_space=False, trim_offsets=True) and
    // GPT2TokenizerFast(add_prefix_space=False) rewrite the ByteLevel pre-tokenizer and the post-processor
    // when the file disagrees with them.
    const bool aps = jf::get_bool(config, "add_prefix_space", false, "tokenizer_config.json");
    if (tj["pre_tokenizer"].is_object() && tj["pre_tokenizer"].value("type", "") == "ByteLevel")
      tj["pre_tokenizer"]["add_prefix_space"] = aps;
    json& pp = tj["post_processor"];
    if (is_roberta_like(cls_name) && pp.is_object() && pp.value("type", "") == "RobertaProcessing") {
      pp["add_prefix_space"] = aps;
      pp["trim_offsets"] = jf::get_bool(config, "trim_offsets", true, "tokenizer_config.json");
    }
    if (is_roberta_like(cls_name)) {
      const std::string mask = special(config, "mask_token", "<mask>");
      for (auto& a : tj["added_tokens"])
        if (a["content"] == mask) a["lstrip"] = true;
    }
  }
  if (cls_name.rfind("Llama", 0) == 0 || cls_name.rfind("CodeLlama", 0) == 0 ||
      cls_name.rfind("Gemma", 0) == 0) {
    // LlamaTokenizerFast.update_post_processor: bos/eos around each sequence as add_bos_token/add_eos_token
    // say.
    const bool add_bos = jf::get_bool(config, "add_bos_token", true, "tokenizer_config.json");
    const bool add_eos = jf::get_bool(config, "add_eos_token", false, "tokenizer_config.json");
    const std::string bos = special(config, "bos_token", cls_name.rfind("Gemma", 0) == 0 ? "<bos>" : "<s>");
    const std::string eos = special(config, "eos_token", cls_name.rfind("Gemma", 0) == 0 ? "<eos>" : "</s>");
    auto id = [&](const std::string& t) -> int64_t {
      for (const auto& a : tj["added_tokens"])
        if (a["content"] == t) return a["id"].get<int64_t>();
      const json& v = tj["model"]["vocab"];
      return v.is_object() && v.contains(t) ? v[t].get<int64_t>() : int64_t{-1};
    };
    std::string single = (add_bos ? bos + ":0 " : "") + "$A:0" + (add_eos ? " " + eos + ":0" : "");
    std::string pair =
        single + (add_bos ? " " + bos + ":1" : "") + " $B:1" + (add_eos ? " " + eos + ":1" : "");
    std::vector<std::pair<std::string, int64_t>> specials;
    if (add_bos) {
      CT_CHECK(id(bos) >= 0, "tokenizer_config.json: add_bos_token but bos_token '", bos,
               "' is not in the vocab");
      specials.push_back({bos, id(bos)});
    }
    if (add_eos) {
      CT_CHECK(id(eos) >= 0, "tokenizer_config.json: add_eos_token but eos_token '", eos,
               "' is not in the vocab");
      specials.push_back({eos, id(eos)});
    }
    tj["post_processor"] = template_processing(single, pair, specials);
  }
  // added_tokens_decoder re-declares added tokens with their flags.
  if (const json* dec = jf::find(config, "added_tokens_decoder"); dec && dec->is_object()) {
    for (auto it = dec->begin(); it != dec->end(); ++it) {
      const json& d = it.value();
      if (!d.is_object() || !d.contains("content")) continue;
      json entry = added_token(d["content"].get<std::string>(), std::stoll(it.key()));
      for (const char* k : {"single_word", "lstrip", "rstrip", "normalized", "special"})
        if (d.contains(k) && d[k].is_boolean()) entry[k] = d[k];
      bool replaced = false;
      for (auto& a : tj["added_tokens"]) {
        if (a["content"] == entry["content"]) {
          a = entry;
          replaced = true;
        }
      }
      if (!replaced) tj["added_tokens"].push_back(entry);
    }
  }
}

}  // namespace

HfTokenizer HfTokenizer::from_dir(const std::string& dir, const json* overrides) {
  json config = json::object();
  if (stdfs::exists(dir + "/tokenizer_config.json")) config = read_json_file(dir + "/tokenizer_config.json");
  CT_CHECK(config.is_object(), dir, "/tokenizer_config.json: expected an object");
  if (stdfs::exists(dir + "/special_tokens_map.json")) {
    const json sm = read_json_file(dir + "/special_tokens_map.json");
    if (sm.is_object()) {
      for (auto it = sm.begin(); it != sm.end(); ++it)
        if (!config.contains(it.key())) config[it.key()] = it.value();
    }
  }
  if (overrides && overrides->is_object()) {
    for (auto it = overrides->begin(); it != overrides->end(); ++it) config[it.key()] = it.value();
  }
  std::string cls_name = jf::get_string(config, "tokenizer_class", "", dir + "/tokenizer_config.json");
  if (cls_name.empty() && stdfs::exists(dir + "/config.json")) {
    const json c = read_json_file(dir + "/config.json");
    const std::string mt = c.is_object() ? c.value("model_type", "") : "";
    if (mt == "roberta" || mt == "longformer" || mt == "bart")
      cls_name = "RobertaTokenizer";
    else if (mt == "xlm-roberta")
      cls_name = "XLMRobertaTokenizer";
    else if (mt == "deberta-v2")
      cls_name = "DebertaV2Tokenizer";
    else if (mt == "albert")
      cls_name = "AlbertTokenizer";
    else if (mt == "gpt2")
      cls_name = "GPT2Tokenizer";
    else if (mt == "llama")
      cls_name = "LlamaTokenizer";
  }
  json tj;
  std::string source;
  if (stdfs::exists(dir + "/tokenizer.json")) {
    source = dir + "/tokenizer.json";
    tj = read_json_file(source);
  } else if (stdfs::exists(dir + "/vocab.json") && stdfs::exists(dir + "/merges.txt")) {
    source = dir + "/vocab.json";
    tj = bpe_json(dir, config, cls_name);
  } else if (stdfs::exists(dir + "/vocab.txt")) {
    source = dir + "/vocab.txt";
    tj = bert_json(dir, config);
  } else {
    for (const char* name : {"spm.model", "sentencepiece.bpe.model", "spiece.model", "tokenizer.model"}) {
      if (stdfs::exists(dir + "/" + name)) {
        source = dir + "/" + name;
        tj = spm_json(source, config, cls_name);
        break;
      }
    }
  }
  CT_CHECK(
      !source.empty(), dir,
      ": no tokenizer files (expected tokenizer.json, vocab.json + merges.txt, vocab.txt or a SentencePiece "
      ".model)");
  CT_CHECK(tj.is_object(), source, ": expected a JSON object");
  apply_config(tj, config, cls_name);
  HfTokenizer t = from_json(tj, source);
  t.source_ = std::make_shared<const json>(std::move(tj));
  t.config_ = std::make_shared<const json>(std::move(config));
  return t;
}

void HfTokenizer::save(const std::string& dir) const {
  CT_CHECK(source_, "tokenizer: save needs a tokenizer read from a file or folder");
  stdfs::create_directories(dir);
  json tj = *source_;
  if (truncation_) {
    const char* strategies[] = {"LongestFirst", "OnlyFirst", "OnlySecond"};
    tj["truncation"] = {{"direction", truncation_->left ? "Left" : "Right"},
                        {"max_length", truncation_->max_length},
                        {"strategy", strategies[static_cast<int>(truncation_->strategy)]},
                        {"stride", truncation_->stride}};
  } else {
    tj["truncation"] = nullptr;
  }
  if (padding_) {
    json strategy = padding_->fixed ? json{{"Fixed", padding_->fixed}} : json("BatchLongest");
    tj["padding"] = {
        {"strategy", strategy},
        {"direction", padding_->left ? "Left" : "Right"},
        {"pad_to_multiple_of", padding_->pad_to_multiple_of ? json(padding_->pad_to_multiple_of) : json()},
        {"pad_id", padding_->pad_id},
        {"pad_type_id", padding_->pad_type_id},
        {"pad_token", padding_->pad_token}};
  } else {
    tj["padding"] = nullptr;
  }
  fs::write_file_atomic(dir + "/tokenizer.json", tj.dump(2, ' ', false, json::error_handler_t::strict));
  if (config_ && !config_->empty()) {
    fs::write_file_atomic(dir + "/tokenizer_config.json", config_->dump(2));
  }
}

namespace {

// A special token of tokenizer_config.json: a string or an AddedToken object ({"content": ...}).
std::string config_token(const json* config, const char* key) {
  if (!config || !config->is_object() || !config->contains(key)) return "";
  const auto& v = (*config)[key];
  if (v.is_string()) return v.get<std::string>();
  if (v.is_object() && v.contains("content") && v["content"].is_string())
    return v["content"].get<std::string>();
  return "";
}

}  // namespace

std::optional<PaddingParams> HfTokenizer::call_padding() const {
  const json* c = config();
  const json* file = source() && source()->is_object() ? jf::find(*source(), "padding") : nullptr;
  if (file && !file->is_object()) file = nullptr;
  std::string pad;
  if (c && c->is_object() && c->contains("pad_token")) {
    pad = config_token(c, "pad_token");  // an explicit null (Llama's configs) means no pad token
  } else if (file) {
    pad = file->value("pad_token", std::string());
  }
  if (pad.empty()) return std::nullopt;
  PaddingParams p;
  p.pad_token = pad;
  p.pad_id = token_to_id(pad);
  if (c && c->is_object() && c->contains("pad_token_type_id") &&
      (*c)["pad_token_type_id"].is_number_integer())
    p.pad_type_id = (*c)["pad_token_type_id"].get<int32_t>();
  else if (file && file->contains("pad_type_id") && (*file)["pad_type_id"].is_number_integer())
    p.pad_type_id = (*file)["pad_type_id"].get<int32_t>();
  std::string side = "right";
  if (c && c->is_object() && c->contains("padding_side") && (*c)["padding_side"].is_string())
    side = (*c)["padding_side"].get<std::string>();
  else if (file && file->contains("direction") && (*file)["direction"].is_string())
    side = (*file)["direction"].get<std::string>();
  for (char& ch : side) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  CT_CHECK(side == "right" || side == "left", "padding_side '", side, "' is not right or left");
  p.left = side == "left";
  return p;
}

int32_t HfTokenizer::pad_token_id() const {
  if (const auto p = call_padding(); p && p->pad_id >= 0) return p->pad_id;
  for (const char* n : {"<pad>", "[PAD]", "<|endoftext|>"})
    if (int32_t id = token_to_id(n); id >= 0) return id;
  return 0;
}

int64_t HfTokenizer::model_max_length() const {
  const auto* c = config();
  if (!c || !c->is_object() || !c->contains("model_max_length")) return 0;
  const auto& v = (*c)["model_max_length"];
  if (v.is_number_integer() && v.get<int64_t>() > 0 && v.get<double>() < 1e18) return v.get<int64_t>();
  return 0;
}

}  // namespace ct::text
