// Text as datasets' text loader reads it (packaged_modules/text/text.py, sample_by="line"): the file is
// opened in Python's text mode, whose universal newlines turn "\r\n" and a lone "\r" into "\n";
// StringIO.readlines then splits on "\n" alone (not on the form feeds and separators str.splitlines knows),
// and without keep_linebreaks each line's "\n" is stripped. Blank lines stay, as empty rows; the end of the
// file ends the last line, with no empty row after a final newline. A UTF-8 BOM stays in the first line, as
// the utf-8 codec keeps it.
#include <string>

#include "data/table_loaders.h"

namespace ct::data {

parquet::Table read_text_table(std::string_view text, const std::string& source, bool keep_linebreaks) {
  check_utf8(text, source);
  parquet::Table t;
  t.names = {"text"};
  t.columns.resize(1);
  auto& rows = t.columns[0];
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t end = text.find_first_of("\r\n", pos);
    parquet::Value v;
    v.kind = parquet::Value::Kind::String;
    if (end == std::string_view::npos) {
      v.s = std::string(text.substr(pos));
      pos = text.size();
    } else {
      v.s = std::string(text.substr(pos, end - pos));
      if (keep_linebreaks) v.s += '\n';
      pos = end + (text[end] == '\r' && end + 1 < text.size() && text[end + 1] == '\n' ? 2 : 1);
    }
    rows.push_back(std::move(v));
  }
  t.num_rows = static_cast<int64_t>(rows.size());
  return t;
}

}  // namespace ct::data
