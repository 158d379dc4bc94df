#include "tasks/word_vocab.h"

#include <utf8proc.h>

#include <algorithm>
#include <cstdlib>
#include <set>

#include "core/error.h"
#include "data/unicode_util.h"

namespace ct::tasks {
namespace {

bool is_punct(uint32_t c) {
  if ((c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) || (c >= 123 && c <= 126))
    return true;
  const auto cat = utf8proc_category(static_cast<utf8proc_int32_t>(c));
  return cat >= UTF8PROC_CATEGORY_PC && cat <= UTF8PROC_CATEGORY_PO;
}

// Accent strip (NFD, drop Mn) then lower-case, as BertNormalizer with lowercase=true.
std::string normalize_word(const std::string& w) {
  utf8proc_uint8_t* nfd = nullptr;
  const auto n = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(w.data()),
                              static_cast<utf8proc_ssize_t>(w.size()), &nfd,
                              static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_DECOMPOSE));
  CT_CHECK(n >= 0, "demo vocab: cannot normalize \"", w, "\": ", utf8proc_errmsg(n));
  const std::string d(reinterpret_cast<const char*>(nfd), static_cast<size_t>(n));
  std::free(nfd);
  std::string out;
  for (size_t i = 0; i < d.size();) {
    size_t len = 1;
    const uint32_t c = data::decode_utf8(d, i, &len);
    i += len;
    if (utf8proc_category(static_cast<utf8proc_int32_t>(c)) == UTF8PROC_CATEGORY_MN) continue;
    data::append_utf8(out, static_cast<uint32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(c))));
  }
  return out;
}

void collect_words(const std::string& text, std::set<std::string>& words) {
  std::string cur;
  auto flush = [&] {
    if (!cur.empty()) words.insert(normalize_word(cur));
    cur.clear();
  };
  for (size_t i = 0; i < text.size();) {
    size_t len = 1;
    const uint32_t c = data::decode_utf8(text, i, &len);
    if (data::python_isspace(c)) {
      flush();
    } else if (is_punct(c)) {
      flush();
      words.insert(text.substr(i, len));
    } else {
      cur += text.substr(i, len);
    }
    i += len;
  }
  flush();
}

std::vector<std::string> vocab_of(const std::set<std::string>& words) {
  std::vector<std::string> vocab = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"};
  for (const auto& w : words) {
    if (std::find(vocab.begin(), vocab.end(), w) == vocab.end()) vocab.push_back(w);
  }
  return vocab;
}

}  // namespace

std::vector<std::string> build_word_vocab(const std::vector<std::string>& texts) {
  std::set<std::string> words;
  for (const auto& t : texts) collect_words(t, words);
  return vocab_of(words);
}

}  // namespace ct::tasks
