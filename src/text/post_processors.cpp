#include "text/post_processors.h"

#include <unordered_map>

#include "text/json_fields.h"
#include "text/normalized_string.h"
#include "text/pre_tokenizers.h"
#include "text/unicode.h"

namespace ct::text {
namespace {

using nlohmann::json;

// ByteLevel's offset trimming: leading/trailing spaces of a token (Ġ or whitespace) leave its offsets.
void trim_offsets(Encoding& e, bool add_prefix_space) {
  const char32_t g = byte_level_char(' ');
  auto spacey = [g](char32_t c) { return c == g || is_whitespace(c); };
  for (size_t i = 0; i < e.size(); ++i) {
    const std::u32string cs = NormalizedString(e.tokens[i]).chars();
    size_t lead = 0, trail = 0;
    while (lead < cs.size() && spacey(cs[lead])) ++lead;
    while (trail < cs.size() && spacey(cs[cs.size() - 1 - trail])) ++trail;
    auto& [b, en] = e.offsets[i];
    if (lead > 0) {
      const bool first = i == 0 || b == 0;
      if (first && add_prefix_space && lead == 1) lead = 0;
      b = std::min<uint32_t>(b + static_cast<uint32_t>(lead), en);
    }
    if (trail > 0 && en >= trail) en = std::max<uint32_t>(en - static_cast<uint32_t>(trail), b);
  }
}

void trim_all(std::vector<Encoding>& encs, bool add_prefix_space) {
  for (auto& e : encs) {
    trim_offsets(e, add_prefix_space);
    for (auto& o : e.overflowing) trim_offsets(o, add_prefix_space);
  }
}

class ByteLevelPost : public PostProcessor {
 public:
  bool trim = true, add_prefix_space = true;
  size_t added_tokens(bool) const override { return 0; }
  std::vector<Encoding> process_encodings(std::vector<Encoding> encs, bool) const override {
    if (trim) trim_all(encs, add_prefix_space);
    for (size_t i = 0; i < encs.size(); ++i) encs[i].set_sequence_id(static_cast<int>(i));
    return encs;
  }
};

struct SpecialPair {
  std::string token;
  int32_t id;
};

// Wraps an encoding (and each of its overflowing windows) in special tokens, as Bert/RobertaProcessing do.
Encoding wrap(const Encoding& e, const SpecialPair* before, const SpecialPair& after, int seq,
              int32_t type_id, bool keep_types) {
  Encoding o;
  if (before) o.push(before->id, keep_types ? 0 : type_id, before->token, {0, 0}, -1, true);
  for (size_t i = 0; i < e.size(); ++i) {
    o.push(e.ids[i], keep_types ? e.type_ids[i] : type_id, e.tokens[i], e.offsets[i], e.word_ids[i], false);
  }
  o.push(after.id, type_id, after.token, {0, 0}, -1, true);
  o.sequence_ranges[seq] = {before ? 1 : 0, o.size() - 1};
  return o;
}

class RobertaBertPost : public PostProcessor {
 public:
  SpecialPair cls, sep;
  bool roberta = true, trim = true, add_prefix_space = true;
  size_t added_tokens(bool pair) const override { return roberta ? (pair ? 4 : 2) : (pair ? 3 : 2); }
  std::vector<Encoding> process_encodings(std::vector<Encoding> encs, bool add_special) const override {
    if (roberta) {
      if (trim) trim_all(encs, add_prefix_space);
      for (auto& e : encs) e.type_ids.assign(e.size(), 0);
    }
    if (!add_special) return encs;
    std::vector<Encoding> out;
    for (size_t i = 0; i < encs.size(); ++i) {
      const Encoding& e = encs[i];
      auto one = [&](const Encoding& x) {
        if (i == 0) return wrap(x, &cls, sep, 0, 0, !roberta);
        if (roberta) return wrap(x, &sep, sep, 1, 0, false);
        Encoding w = wrap(x, nullptr, sep, 1, 1, true);
        w.type_ids.back() = 1;
        return w;
      };
      Encoding main = one(e);
      for (const auto& o : e.overflowing) main.overflowing.push_back(one(o));
      out.push_back(std::move(main));
    }
    return out;
  }
};

struct TemplatePiece {
  bool special;
  std::string id;  // "A"/"B" or the special token name
  int32_t type_id;
};

struct SpecialEntry {
  std::vector<int32_t> ids;
  std::vector<std::string> tokens;
};

class TemplatePost : public PostProcessor {
 public:
  std::vector<TemplatePiece> single, pair;
  std::unordered_map<std::string, SpecialEntry> specials;
  size_t added_tokens(bool is_pair) const override {
    size_t n = 0;
    for (const auto& p : is_pair ? pair : single) {
      if (p.special) n += specials.at(p.id).ids.size();
    }
    return n;
  }
  std::vector<Encoding> process_encodings(std::vector<Encoding> encs, bool add_special) const override {
    const auto& tpl = encs.size() == 2 ? pair : single;
    std::vector<Encoding> parts;
    for (const auto& p : tpl) {
      if (!p.special) {
        const size_t i = p.id == "A" ? 0 : 1;
        if (i >= encs.size()) continue;
        Encoding& e = encs[i];
        e.type_ids.assign(e.size(), p.type_id);
        e.set_sequence_id(static_cast<int>(i));
        parts.push_back(e);
      } else if (add_special) {
        const SpecialEntry& s = specials.at(p.id);
        Encoding x;
        for (size_t k = 0; k < s.ids.size(); ++k) x.push(s.ids[k], p.type_id, s.tokens[k], {0, 0}, -1, true);
        parts.push_back(std::move(x));
      }
    }
    std::vector<Encoding> out;
    out.push_back(Encoding::merge(std::move(parts)));
    return out;
  }
};

class SequencePost : public PostProcessor {
 public:
  std::vector<std::unique_ptr<PostProcessor>> parts;
  size_t added_tokens(bool pair) const override {
    size_t n = 0;
    for (const auto& p : parts) n += p->added_tokens(pair);
    return n;
  }
  std::vector<Encoding> process_encodings(std::vector<Encoding> encs, bool add_special) const override {
    for (const auto& p : parts) encs = p->process_encodings(std::move(encs), add_special);
    return encs;
  }
};

SpecialPair special_pair(const json& j, const char* key, const std::string& where) {
  const json* v = jf::find(j, key);
  CT_CHECK(v && v->is_array() && v->size() == 2 && (*v)[0].is_string() && (*v)[1].is_number_integer(), where,
           ".", key, ": expected [token, id]");
  return {(*v)[0].get<std::string>(), (*v)[1].get<int32_t>()};
}

std::vector<TemplatePiece> parse_template(const json& j, const char* key, const std::string& where) {
  const json* v = jf::find(j, key);
  CT_CHECK(v && v->is_array(), where, ".", key, ": expected a list of pieces");
  std::vector<TemplatePiece> out;
  for (size_t i = 0; i < v->size(); ++i) {
    const json& p = (*v)[i];
    const std::string w = str(where, ".", key, "[", i, "]");
    CT_CHECK(p.is_object() && p.size() == 1, w, ": expected {\"Sequence\": ...} or {\"SpecialToken\": ...}");
    const bool special = p.contains("SpecialToken");
    CT_CHECK(special || p.contains("Sequence"), w,
             ": expected {\"Sequence\": ...} or {\"SpecialToken\": ...}");
    const json& body = special ? p["SpecialToken"] : p["Sequence"];
    CT_CHECK(body.is_object(), w, ": expected an object");
    TemplatePiece t{special, jf::need_string(body, "id", w),
                    static_cast<int32_t>(jf::get_int(body, "type_id", 0, w))};
    CT_CHECK(special || t.id == "A" || t.id == "B", w, ".id: expected \"A\" or \"B\", got '", t.id, "'");
    out.push_back(t);
  }
  return out;
}

}  // namespace

std::unique_ptr<PostProcessor> make_post_processor(const json& j, const std::string& where) {
  const std::string type = jf::type_of(j, where);
  if (type == "ByteLevel") {
    auto p = std::make_unique<ByteLevelPost>();
    p->trim = jf::get_bool(j, "trim_offsets", true, where);
    p->add_prefix_space = jf::get_bool(j, "add_prefix_space", true, where);
    return p;
  }
  if (type == "RobertaProcessing" || type == "BertProcessing") {
    auto p = std::make_unique<RobertaBertPost>();
    p->roberta = type == "RobertaProcessing";
    p->cls = special_pair(j, "cls", where);
    p->sep = special_pair(j, "sep", where);
    p->trim = jf::get_bool(j, "trim_offsets", true, where);
    p->add_prefix_space = jf::get_bool(j, "add_prefix_space", true, where);
    return p;
  }
  if (type == "TemplateProcessing") {
    auto p = std::make_unique<TemplatePost>();
    p->single = parse_template(j, "single", where);
    p->pair = parse_template(j, "pair", where);
    if (const json* s = jf::find(j, "special_tokens")) {
      CT_CHECK(s->is_object(), where, ".special_tokens: expected an object");
      for (auto it = s->begin(); it != s->end(); ++it) {
        const std::string w = str(where, ".special_tokens[\"", it.key(), "\"]");
        const json& e = it.value();
        CT_CHECK(e.is_object() && e.contains("ids") && e.contains("tokens") && e["ids"].is_array() &&
                     e["tokens"].is_array() && e["ids"].size() == e["tokens"].size(),
                 w, ": expected {\"id\", \"ids\": [...], \"tokens\": [...]} with as many ids as tokens");
        SpecialEntry se;
        for (const auto& id : e["ids"]) {
          CT_CHECK(id.is_number_integer(), w, ".ids: expected integers");
          se.ids.push_back(id.get<int32_t>());
        }
        for (const auto& t : e["tokens"]) {
          CT_CHECK(t.is_string(), w, ".tokens: expected strings");
          se.tokens.push_back(t.get<std::string>());
        }
        p->specials[jf::get_string(e, "id", it.key(), w)] = std::move(se);
      }
    }
    for (const auto* tpl : {&p->single, &p->pair}) {
      for (const auto& piece : *tpl) {
        CT_CHECK(!piece.special || p->specials.count(piece.id), where, ": special token '", piece.id,
                 "' of the template is missing from special_tokens");
      }
    }
    return p;
  }
  if (type == "Sequence") {
    auto p = std::make_unique<SequencePost>();
    const json* list = jf::find(j, "processors");
    CT_CHECK(list && list->is_array(), where, ".processors: expected a list");
    for (size_t i = 0; i < list->size(); ++i) {
      p->parts.push_back(make_post_processor((*list)[i], str(where, ".processors[", i, "]")));
    }
    return p;
  }
  jf::unsupported(where, "post_processor", type,
                  "TemplateProcessing, RobertaProcessing, BertProcessing, ByteLevel, Sequence");
}

Encoding post_process(const PostProcessor* p, Encoding a, Encoding* pair, bool add_special) {
  std::vector<Encoding> encs;
  encs.push_back(std::move(a));
  if (pair) encs.push_back(std::move(*pair));
  if (!p) {
    if (encs.size() == 1) return std::move(encs[0]);
    Encoding out;
    for (size_t i = 0; i < encs.size(); ++i) {
      encs[i].set_sequence_id(static_cast<int>(i));
      out.merge_with(std::move(encs[i]));
    }
    return out;
  }
  // HF's PostProcessor::process: sequence ids on each encoding and its windows, type ids on the encoding
  // only.
  for (size_t i = 0; i < encs.size(); ++i) {
    encs[i].set_sequence_id(static_cast<int>(i));
    for (auto& o : encs[i].overflowing) o.set_sequence_id(static_cast<int>(i));
    encs[i].type_ids.assign(encs[i].size(), static_cast<int32_t>(i));
  }
  return Encoding::merge(p->process_encodings(std::move(encs), add_special));
}

}  // namespace ct::text
