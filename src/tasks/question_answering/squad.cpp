#include "tasks/question_answering/squad.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/fs.h"
#include "core/log.h"
#include "data/csv.h"
#include "parquet/parquet_file.h"

namespace ct::tasks {
namespace {

using nlohmann::json;

const char* type_name(const json& v) {
  switch (v.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::object:
      return "object";
    case json::value_t::array:
      return "array";
    case json::value_t::string:
      return "string";
    case json::value_t::boolean:
      return "boolean";
    case json::value_t::number_float:
      return "float";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      return "integer";
    default:
      return "unknown";
  }
}

// Where a record sits, for error messages: "train.json: data[3].paragraphs[0].qas[7] (id "x")".
struct Where {
  const std::string& source;
  std::string record;
  std::string id;
  std::string str() const {
    std::string s = source + ": " + record;
    if (!id.empty()) s += " (id \"" + id + "\")";
    return s;
  }
};

const json& field(const json& obj, const char* name, const Where& w) {
  auto it = obj.find(name);
  if (it == obj.end()) fail(w.str(), ": missing field '", name, "'");
  return *it;
}

std::string get_string(const json& obj, const char* name, const Where& w) {
  const json& v = field(obj, name, w);
  if (!v.is_string()) fail(w.str(), ": field '", name, "' must be a string, got ", type_name(v));
  return v.get<std::string>();
}

// Ids are strings in SQuAD; integer ids (seen in some exports) are accepted and printed as decimal.
std::string get_id(const json& obj, const Where& w) {
  const json& v = field(obj, "id", w);
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
  fail(w.str(), ": field 'id' must be a string, got ", type_name(v));
}

int64_t get_start(const json& v, const std::string& name, const Where& w) {
  if (!v.is_number_integer()) fail(w.str(), ": field '", name, "' must be an integer, got ", type_name(v));
  return v.get<int64_t>();
}

const json& get_array(const json& obj, const char* name, const Where& w) {
  const json& v = field(obj, name, w);
  if (!v.is_array()) fail(w.str(), ": field '", name, "' must be an array, got ", type_name(v));
  return v;
}

struct Reader {
  const std::string& source;
  bool answers_optional = false;  // a prediction file: records may carry no answers at all
  SquadReadStats stats;
  std::vector<Example> out;
  std::string first_mismatch;

  // Validates answers against the context (code-point start -> bytes) and keeps or counts the example.
  void add(Example ex, const std::vector<int64_t>& cp) {
    ++stats.total;
    const int64_t ncp = static_cast<int64_t>(cp.size()) - 1;
    for (size_t k = 0; k < ex.answers.size(); ++k) {
      Answer& a = ex.answers[k];
      bool ok = a.start_char >= 0 && a.start_char <= ncp;
      if (ok) {
        a.begin = cp[static_cast<size_t>(a.start_char)];
        a.end = a.begin + static_cast<int64_t>(a.text.size());
        ok = a.end <= static_cast<int64_t>(ex.context.size()) &&
             ex.context.compare(static_cast<size_t>(a.begin), a.text.size(), a.text) == 0;
      }
      if (!ok) {
        if (first_mismatch.empty()) {
          first_mismatch =
              str("id \"", ex.id, "\" answers[", k, "] \"", a.text, "\" at answer_start ", a.start_char);
        }
        ++stats.skipped;
        return;
      }
    }
    out.push_back(std::move(ex));
  }

  void qa(const json& q, const std::string& context, const std::string& title, const std::vector<int64_t>& cp,
          const std::string& record) {
    Where w{source, record, ""};
    if (!q.is_object()) fail(w.str(), ": expected an object, got ", type_name(q));
    Example ex;
    ex.id = get_id(q, w);
    w.id = ex.id;
    ex.title = title;
    ex.context = context;
    ex.question = get_string(q, "question", w);
    if (auto it = q.find("is_impossible"); it != q.end()) {
      if (!it->is_boolean()) fail(w.str(), ": field 'is_impossible' must be a boolean, got ", type_name(*it));
      ex.is_impossible = it->get<bool>();
    }
    if (answers_optional && !q.contains("answers")) {
      ++stats.without_answers;
      add(std::move(ex), cp);
      return;
    }
    const json& answers = get_array(q, "answers", w);
    for (size_t k = 0; k < answers.size(); ++k) {
      const json& a = answers[k];
      const std::string name = str("answers[", k, "]");
      if (!a.is_object()) fail(w.str(), ": field '", name, "' must be an object, got ", type_name(a));
      Answer ans;
      const json& t = field(a, "text", w);
      if (!t.is_string()) fail(w.str(), ": field '", name, ".text' must be a string, got ", type_name(t));
      ans.text = t.get<std::string>();
      ans.start_char = get_start(field(a, "answer_start", w), name + ".answer_start", w);
      ex.answers.push_back(std::move(ans));
    }
    // v2 marks unanswerable questions; their answers list is empty (plausible_answers are not gold).
    if (ex.is_impossible) ex.answers.clear();
    add(std::move(ex), cp);
  }

  void article(const json& art, const std::string& record) {
    Where w{source, record, ""};
    std::string title;
    if (auto it = art.find("title"); it != art.end()) {
      if (!it->is_string()) fail(w.str(), ": field 'title' must be a string, got ", type_name(*it));
      title = it->get<std::string>();
    }
    const json& paragraphs = get_array(art, "paragraphs", w);
    for (size_t p = 0; p < paragraphs.size(); ++p) {
      const std::string prec = str(record, ".paragraphs[", p, "]");
      Where pw{source, prec, ""};
      const json& par = paragraphs[p];
      if (!par.is_object()) fail(pw.str(), ": expected an object, got ", type_name(par));
      const std::string context = get_string(par, "context", pw);
      const std::vector<int64_t> cp = utf8_codepoint_offsets(context, pw.str() + " context");
      const json& qas = get_array(par, "qas", pw);
      for (size_t q = 0; q < qas.size(); ++q) qa(qas[q], context, title, cp, str(prec, ".qas[", q, "]"));
    }
  }

  void flat(const json& r, const std::string& record) {
    Where w{source, record, ""};
    if (!r.is_object()) fail(w.str(), ": expected an object, got ", type_name(r));
    Example ex;
    ex.id = get_id(r, w);
    w.id = ex.id;
    if (auto it = r.find("title"); it != r.end() && !it->is_null()) {
      if (!it->is_string()) fail(w.str(), ": field 'title' must be a string, got ", type_name(*it));
      ex.title = it->get<std::string>();
    }
    ex.context = get_string(r, "context", w);
    ex.question = get_string(r, "question", w);
    if (answers_optional && (!r.contains("answers") || r["answers"].is_null())) {
      ++stats.without_answers;
      const std::vector<int64_t> cp = utf8_codepoint_offsets(ex.context, w.str() + " context");
      add(std::move(ex), cp);
      return;
    }
    const json& answers = field(r, "answers", w);
    if (!answers.is_object()) {
      fail(w.str(), ": field 'answers' must be an object {text: [...], answer_start: [...]}, got ",
           type_name(answers));
    }
    const json& texts = get_array(answers, "text", w);
    const json& starts = get_array(answers, "answer_start", w);
    if (texts.size() != starts.size()) {
      fail(w.str(), ": field 'answers' has ", texts.size(), " texts but ", starts.size(),
           " answer_start values");
    }
    for (size_t k = 0; k < texts.size(); ++k) {
      Answer ans;
      if (!texts[k].is_string()) {
        fail(w.str(), ": field 'answers.text[", k, "]' must be a string, got ", type_name(texts[k]));
      }
      ans.text = texts[k].get<std::string>();
      ans.start_char = get_start(starts[k], str("answers.answer_start[", k, "]"), w);
      ex.answers.push_back(std::move(ans));
    }
    ex.is_impossible = ex.answers.empty();
    const std::vector<int64_t> cp = utf8_codepoint_offsets(ex.context, w.str() + " context");
    add(std::move(ex), cp);
  }

  void items(const json& data, const std::string& prefix) {
    for (size_t i = 0; i < data.size(); ++i) {
      const json& item = data[i];
      const std::string record = str(prefix, "[", i, "]");
      if (item.is_object() && item.contains("paragraphs")) {
        article(item, record);
      } else {
        flat(item, record);
      }
    }
  }

  void finish() {
    if (stats.skipped > 0) {
      log::warn(source, ": skipped ", stats.skipped, " of ", stats.total,
                " examples whose answer_start/text disagree with the context (first: ", first_mismatch, ")");
    }
  }
};

bool looks_like_json_lines(std::string_view text) {
  const size_t nl = text.find('\n');
  if (nl == std::string_view::npos) return false;
  std::string_view first = text.substr(0, nl);
  auto j = json::parse(first.begin(), first.end(), nullptr, false);
  return !j.is_discarded() && j.is_object();
}

}  // namespace

std::vector<int64_t> utf8_codepoint_offsets(std::string_view s, std::string_view what) {
  std::vector<int64_t> out;
  out.reserve(s.size() + 1);
  size_t i = 0;
  while (i < s.size()) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    if (len == 0 || i + len > s.size()) fail(what, ": invalid UTF-8 at byte ", i);
    for (size_t k = 1; k < len; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) fail(what, ": invalid UTF-8 at byte ", i);
    }
    out.push_back(static_cast<int64_t>(i));
    i += len;
  }
  out.push_back(static_cast<int64_t>(s.size()));
  return out;
}

std::vector<Example> parse_squad(std::string_view text, const std::string& source, SquadReadStats* stats,
                                 bool answers_optional) {
  Reader r{source, answers_optional, {}, {}, {}};
  json doc = json::parse(text.begin(), text.end(), nullptr, false);
  if (doc.is_discarded()) {
    if (!looks_like_json_lines(text)) {
      try {
        doc = json::parse(text.begin(), text.end());
      } catch (const json::exception& e) {
        fail(source, ": malformed JSON: ", e.what());
      }
    }
    // JSON lines: one flat record per non-empty line.
    size_t line_no = 0, pos = 0;
    while (pos < text.size()) {
      size_t nl = text.find('\n', pos);
      if (nl == std::string_view::npos) nl = text.size();
      std::string_view line = text.substr(pos, nl - pos);
      ++line_no;
      pos = nl + 1;
      if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
      json rec;
      try {
        rec = json::parse(line.begin(), line.end());
      } catch (const json::exception& e) {
        fail(source, ": line ", line_no, ": malformed JSON: ", e.what());
      }
      r.flat(rec, str("line ", line_no));
    }
  } else if (doc.is_array()) {
    r.items(doc, "");
  } else if (doc.is_object()) {
    auto it = doc.find("data");
    if (it == doc.end()) {
      // A JSON-lines file holding exactly one record parses as one object.
      if (doc.contains("context") && doc.contains("question")) {
        r.flat(doc, "line 1");
      } else {
        fail(source, ": expected a top-level \"data\" field (SQuAD JSON), found none");
      }
    } else {
      if (!it->is_array()) fail(source, ": field 'data' must be an array, got ", type_name(*it));
      r.items(*it, "data");
    }
  } else {
    fail(source, ": expected a JSON object with a \"data\" array, got ", type_name(doc));
  }
  r.finish();
  if (stats) *stats = r.stats;
  return std::move(r.out);
}

std::vector<Example> parse_squad_csv(std::string_view text, const std::string& source, SquadReadStats* stats,
                                     bool answers_optional) {
  const auto rows = data::parse_csv(text, source);
  if (rows.empty()) fail(source, ": empty CSV (expected a header row: id,title,context,question,answers)");
  const auto& header = rows[0];
  auto column = [&](const char* name) -> int {
    for (size_t c = 0; c < header.size(); ++c)
      if (header[c] == name) return static_cast<int>(c);
    return -1;
  };
  const int id = column("id"), title = column("title"), context = column("context"),
            question = column("question"), answers = column("answers");
  std::string missing;
  for (auto [name, c] : {std::pair{"id", id}, std::pair{"context", context}, std::pair{"question", question},
                         std::pair{"answers", answers}})
    if (c < 0 && !(answers_optional && std::string_view(name) == "answers"))
      missing += str(missing.empty() ? "" : ", ", name);
  if (!missing.empty()) {
    std::string have;
    for (const auto& h : header) have += str(have.empty() ? "" : ",", h);
    fail(source, ": CSV missing column(s) ", missing, " (header: ", have,
         "; expected id,title,context,question,answers)");
  }
  Reader r{source, answers_optional, {}, {}, {}};
  for (size_t k = 1; k < rows.size(); ++k) {
    const auto& row = rows[k];
    const std::string record = str("row ", k);
    if (row.size() != header.size())
      fail(source, ": ", record, ": ", row.size(), " fields, the header has ", header.size());
    json rec = json::object();
    rec["id"] = row[static_cast<size_t>(id)];
    if (title >= 0) rec["title"] = row[static_cast<size_t>(title)];
    rec["context"] = row[static_cast<size_t>(context)];
    rec["question"] = row[static_cast<size_t>(question)];
    if (answers >= 0 && !row[static_cast<size_t>(answers)].empty())
      rec["answers"] = data::parse_python_literal(
          row[static_cast<size_t>(answers)],
          str(source, ": ", record, " (id \"", row[static_cast<size_t>(id)], "\") answers"));
    r.flat(rec, record);
  }
  r.finish();
  if (stats) *stats = r.stats;
  return std::move(r.out);
}

std::vector<Example> read_squad_parquet(const std::string& path, SquadReadStats* stats,
                                        bool answers_optional) {
  auto file = parquet::ParquetFile::open(path);
  std::vector<std::string> want;
  std::string missing;
  const auto have = file->column_names();
  auto has = [&](const char* c) { return std::find(have.begin(), have.end(), c) != have.end(); };
  for (const char* c : {"id", "title", "context", "question", "answers"}) {
    if (has(c))
      want.push_back(c);
    else if (std::string_view(c) != "title" && !(answers_optional && std::string_view(c) == "answers"))
      missing += str(missing.empty() ? "" : ", ", c);
  }
  if (!missing.empty()) {
    std::string cols;
    for (const auto& h : have) cols += str(cols.empty() ? "" : ", ", h);
    fail(path, ": Parquet file lacks SQuAD column(s) ", missing, " (it has ", cols,
         "; expected id, title, context, question, answers)");
  }
  Reader r{path, answers_optional, {}, {}, {}};
  int64_t row = 0;
  std::string last_context;
  std::vector<int64_t> cp;
  using K = parquet::Value::Kind;
  // Row group by row group, so only one group's cells are held beside the examples.
  for (int g = 0; g < file->num_row_groups(); ++g) {
    parquet::Table t = file->read_row_group(g, want);
    auto col = [&](const char* name) {
      return t.find(name) < 0 ? nullptr : &t.columns[static_cast<size_t>(t.find(name))];
    };
    auto* ids = col("id");
    auto* titles = col("title");
    auto* contexts = col("context");
    auto* questions = col("question");
    auto* answers = col("answers");
    for (size_t i = 0; i < static_cast<size_t>(t.num_rows); ++i, ++row) {
      const std::string where = str(path, ": row ", row);
      auto text = [&](parquet::Value& v, const char* name) {
        if (v.kind == K::Int) return std::to_string(v.i);  // integer ids, as the JSON reader accepts
        if (v.kind != K::String) fail(where, ": column '", name, "' is not a string");
        return std::move(v.s);
      };
      Example ex;
      ex.id = text((*ids)[i], "id");
      if (titles && !(*titles)[i].is_null()) ex.title = text((*titles)[i], "title");
      ex.context = text((*contexts)[i], "context");
      ex.question = text((*questions)[i], "question");
      const parquet::Value* a = answers ? &(*answers)[i] : nullptr;
      if (!a || a->is_null()) {
        if (!answers_optional) fail(where, " (id \"", ex.id, "\"): no answers");
        ++r.stats.without_answers;
      } else {
        const parquet::Value* texts = a->field("text");
        const parquet::Value* starts = a->field("answer_start");
        if (a->kind != K::Struct || !texts || !starts || texts->kind != K::List || starts->kind != K::List)
          fail(where, " (id \"", ex.id,
               "\"): column 'answers' must be {text: list<string>, answer_start: list<int>}");
        if (texts->items.size() != starts->items.size())
          fail(where, " (id \"", ex.id, "\"): answers has ", texts->items.size(), " texts but ",
               starts->items.size(), " answer_start values");
        for (size_t k = 0; k < texts->items.size(); ++k) {
          if (texts->items[k].kind != K::String || starts->items[k].kind != K::Int)
            fail(where, " (id \"", ex.id, "\"): answers[", k,
                 "] is not a string text and an integer answer_start");
          Answer ans;
          ans.text = texts->items[k].s;
          ans.start_char = starts->items[k].i;
          ex.answers.push_back(std::move(ans));
        }
        ex.is_impossible = ex.answers.empty();
      }
      // SQuAD's rows come grouped by paragraph: reuse the context's code-point offsets.
      if (row == 0 || ex.context != last_context) {
        cp = utf8_codepoint_offsets(ex.context, where + " context");
        last_context = ex.context;
      }
      r.add(std::move(ex), cp);
    }
  }
  r.finish();
  if (stats) *stats = r.stats;
  return std::move(r.out);
}

std::vector<Example> read_squad(const std::string& path, SquadReadStats* stats, bool answers_optional) {
  const bool parquet = path.size() >= 8 && path.compare(path.size() - 8, 8, ".parquet") == 0;
  if (parquet) return read_squad_parquet(path, stats, answers_optional);
  const bool csv = path.size() >= 4 && (path.compare(path.size() - 4, 4, ".csv") == 0 ||
                                        path.compare(path.size() - 4, 4, ".CSV") == 0);
  if (csv) return parse_squad_csv(fs::read_file(path), path, stats, answers_optional);
  return parse_squad(fs::read_file(path), path, stats, answers_optional);
}

}  // namespace ct::tasks
