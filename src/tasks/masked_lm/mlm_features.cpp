#include "tasks/masked_lm/mlm_features.h"

#include <optional>

#include "core/error.h"
#include "tasks/tokenizer_call.h"

namespace ct::tasks {
namespace {

// tokenizer(texts, return_special_tokens_mask=True) without truncation or padding.
class PlainCallScope {
 public:
  explicit PlainCallScope(text::HfTokenizer& tok)
      : tok_(tok), truncation_(tok.truncation()), padding_(tok.padding()) {
    tok_.set_truncation(std::nullopt);
    tok_.set_padding(std::nullopt);
  }
  ~PlainCallScope() {
    tok_.set_truncation(truncation_);
    tok_.set_padding(padding_);
  }
  PlainCallScope(const PlainCallScope&) = delete;
  PlainCallScope& operator=(const PlainCallScope&) = delete;

 private:
  text::HfTokenizer& tok_;
  std::optional<text::TruncationParams> truncation_;
  std::optional<text::PaddingParams> padding_;
};

// texts[i] -> out[i], in parallel; errors are raised in text order after the loop, so the first bad text is
// the one named at any thread count.
template <typename Out>
void encode_all(const text::HfTokenizer& tok, const std::vector<std::string>& texts, std::vector<Out>& out) {
  const auto n = static_cast<int64_t>(texts.size());
  out.resize(texts.size());
  std::vector<std::string> errors(texts.size());
#pragma omp parallel for schedule(dynamic, 64)
  for (int64_t i = 0; i < n; ++i) {
    const auto k = static_cast<size_t>(i);
    try {
      text::Encoding e = tok.encode(texts[k]);
      out[k] = {std::move(e.ids), std::move(e.special_tokens_mask)};
    } catch (const Error& e) {
      errors[k] = e.what();
    }
  }
  for (size_t k = 0; k < errors.size(); ++k) CT_CHECK(errors[k].empty(), "text ", k, ": ", errors[k]);
}

}  // namespace

bool is_python_space(const std::string& s) {
  if (s.empty()) return false;
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      if (!((c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x20))) return false;
      ++i;
      continue;
    }
    uint32_t cp = 0;
    size_t len = 0;
    if ((c & 0xe0) == 0xc0)
      cp = c & 0x1f, len = 2;
    else if ((c & 0xf0) == 0xe0)
      cp = c & 0x0f, len = 3;
    else if ((c & 0xf8) == 0xf0)
      cp = c & 0x07, len = 4;
    else
      return false;
    if (i + len > s.size()) return false;
    for (size_t k = 1; k < len; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3f);
    const bool space = cp == 0x85 || cp == 0xa0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200a) ||
                       cp == 0x2028 || cp == 0x2029 || cp == 0x202f || cp == 0x205f || cp == 0x3000;
    if (!space) return false;
    i += len;
  }
  return true;
}

std::vector<TokenChunk> build_mlm_chunks(text::HfTokenizer& tokenizer, const std::vector<std::string>& texts,
                                         bool line_by_line, int64_t max_seq_length) {
  if (line_by_line) {
    const TruncationScope scope(tokenizer, max_seq_length);
    // Blank lines are encoded too (they cost next to nothing) so that an error names the text's own index.
    std::vector<TokenChunk> all, out;
    encode_all(tokenizer, texts, all);
    for (size_t k = 0; k < texts.size(); ++k)
      if (!texts[k].empty() && !is_python_space(texts[k])) out.push_back(std::move(all[k]));
    return out;
  }
  return group_texts(tokenize_plain(tokenizer, texts), max_seq_length);
}

std::vector<TokenizedText> tokenize_plain(text::HfTokenizer& tokenizer,
                                          const std::vector<std::string>& texts) {
  const PlainCallScope scope(tokenizer);
  std::vector<TokenizedText> tokenized;
  encode_all(tokenizer, texts, tokenized);
  return tokenized;
}

}  // namespace ct::tasks
