// SQuAD examples: reading the nested v1.1/v2.0 JSON, the flat HF-datasets form and JSON lines of flat records
// into one in-memory shape, with each answer's start converted once from Unicode code points (Python str
// indices, as the files store them) to byte offsets into the UTF-8 context.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ct::tasks {

struct Answer {
  std::string text;
  int64_t start_char = 0;  // as stored in the file: code-point index into the context
  int64_t begin = 0;       // byte offset of the answer in the context
  int64_t end = 0;         // byte offset one past it (begin + text.size())
};

struct Example {
  std::string id;
  std::string title;
  std::string question;
  std::string context;
  std::vector<Answer> answers;  // empty: no answer (SQuAD v2 is_impossible)
  bool is_impossible = false;
};

struct SquadReadStats {
  int64_t total = 0;            // examples seen in the file
  int64_t skipped = 0;          // dropped because an answer's answer_start/text disagree with the context
  int64_t without_answers = 0;  // records with no answers field (only with answers_optional)
};

// Reads `path`: a name ending in .parquet is Parquet (read_squad_parquet), .csv is CSV (parse_squad_csv),
// anything else JSON (format detected from content: a JSON document with "data" holding nested articles or
// flat records, or JSON lines of flat records). Throws ct::Error naming the file, the record and the field on
// malformed input or wrong types. Examples whose answers do not match context[answer_start:] are skipped with
// one summary warning line. `answers_optional` (a --test_file): records without an answers field are kept
// with no answers and counted in without_answers.
std::vector<Example> read_squad(const std::string& path, SquadReadStats* stats = nullptr,
                                bool answers_optional = false);
// Same from text already in memory; `source` names it in errors.
std::vector<Example> parse_squad(std::string_view text, const std::string& source,
                                 SquadReadStats* stats = nullptr, bool answers_optional = false);
// Parquet as the Hub holds SQuAD (rajpurkar/squad): columns id, title, context, question (strings) and
// answers {text: list<string>, answer_start: list<int32>}, read row group by row group; other columns are
// ignored, a missing one throws naming it.
std::vector<Example> read_squad_parquet(const std::string& path, SquadReadStats* stats = nullptr,
                                        bool answers_optional = false);
// CSV as run_qa's load_dataset("csv") reads it: a header naming id, title (optional), context, question,
// answers (the Python repr of {'text': [...], 'answer_start': [...]}, as pandas writes HF's answers column);
// other columns are ignored. A missing column throws naming it.
std::vector<Example> parse_squad_csv(std::string_view text, const std::string& source,
                                     SquadReadStats* stats = nullptr, bool answers_optional = false);

// Byte offset of every code point of `s`, plus s.size() at the end (size = code points + 1).
// Throws ct::Error (naming `what`) on invalid UTF-8.
std::vector<int64_t> utf8_codepoint_offsets(std::string_view s, std::string_view what);

// run_qa's max_train_samples / max_eval_samples: keep the first n (n < 0: all). Applied to examples before
// feature creation and to features after it.
template <class T>
void keep_first(std::vector<T>& items, int64_t n) {
  if (n >= 0 && static_cast<int64_t>(items.size()) > n) items.resize(static_cast<size_t>(n));
}

}  // namespace ct::tasks
