// CSV as run_qa reads it through datasets' load_dataset("csv") (pandas): RFC 4180 records (fields separated
// by commas, quoted with '"' when they hold commas, quotes (doubled) or line breaks; CRLF or LF), a header
// row naming the columns; and the `answers` column as pandas writes HF's answers struct: the Python repr of a
// dict,
// {'text': ['a', ...], 'answer_start': [1, ...]} (or numpy's array([...], dtype=...) in place of the lists).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace ct::data {

// Every record of `text` (a UTF-8 BOM at the start is skipped), fields unquoted. Throws ct::Error naming
// `source` and the line on an unterminated quote or a stray character after a closing quote. `record_lines`,
// when given, gets each record's first line (1-based), for errors about a record's content.
std::vector<std::vector<std::string>> parse_csv(std::string_view text, const std::string& source,
                                                std::vector<int64_t>* record_lines = nullptr);

// A Python literal of dicts, lists, strings ('..' or "..", with Python escapes), ints, floats,
// True/False/None and numpy array(list, dtype=...) as JSON. Throws ct::Error naming `what` on anything else.
nlohmann::json parse_python_literal(std::string_view text, const std::string& what);

}  // namespace ct::data
