// BertNormalizer: one pass over the original bytes, with an ASCII fast path; every stage is per character
// except the canonical reordering NFD applies to runs of combining marks, handled by a small pending run.
#include "text/bert_normalizer.h"

#include <algorithm>
#include <array>
#include <tuple>
#include <utility>

#include "core/error.h"
#include "text/unicode.h"

namespace ct::text {
namespace {

struct Pending {
  char32_t cp;
  int32_t begin, end;
  int ccc;
  bool consuming;  // first piece of its source char (HF change 0); later pieces are insertions (+1)
};

// The strip_accents and lowercase stages for one character after clean_text and CJK padding.
class Tail {
 public:
  Tail(bool strip, bool lower, std::vector<NormChar>& out) : strip_(strip), lower_(lower), out_(out) {}

  // An ASCII character, already lower-cased when asked: a starter with no decomposition.
  void push_simple(char32_t c, int32_t b, int32_t e) {
    flush();
    prev_ = {b, e};
    out_.push_back({c, b, e});
  }

  void push(char32_t c, int32_t b, int32_t e) {
    if (!strip_) return lower(c, b, e);
    std::array<char32_t, 16> d;
    const int n = decompose(c, d.data(), static_cast<int>(d.size()));
    CT_ASSERT(n <= static_cast<int>(d.size()));  // canonical decompositions are at most 4 characters
    for (int k = 0; k < n; ++k) {
      const int ccc = combining_class(d[k]);
      if (ccc == 0) {
        flush();
        prev_ = {b, e};
        if (!is_nonspacing_mark(d[k])) lower(d[k], b, e);
      } else {
        run_.push_back({d[k], b, e, ccc, k == 0});  // NFD may reorder it: wait for the run's end
      }
    }
  }

  // NFD sorts each run of non-starters by combining class (stably). HF's alignment is positional: after the
  // sort, the j-th consuming character takes the span of the j-th consumed original character, and an
  // inserted piece the span of the last one consumed before it. Then Mn marks are dropped.
  void flush() {
    if (run_.empty()) return;
    spans_.clear();
    for (const auto& p : run_) {
      if (p.consuming) spans_.emplace_back(p.begin, p.end);
    }
    if (run_.size() > 1) {
      std::stable_sort(run_.begin(), run_.end(),
                       [](const Pending& a, const Pending& b) { return a.ccc < b.ccc; });
      size_t q = 0;
      std::pair<int32_t, int32_t> last = prev_;
      for (auto& p : run_) {
        if (p.consuming) last = spans_[q++];
        std::tie(p.begin, p.end) = last;
      }
    }
    if (!spans_.empty()) prev_ = spans_.back();
    for (const auto& p : run_) {
      if (!is_nonspacing_mark(p.cp)) lower(p.cp, p.begin, p.end);
    }
    run_.clear();
  }

 private:
  void lower(char32_t c, int32_t b, int32_t e) {
    if (!lower_) {
      out_.push_back({c, b, e});
      return;
    }
    char32_t l[2];
    const int n = to_lower(c, l);
    for (int k = 0; k < n; ++k) out_.push_back({l[k], b, e});  // an expansion shares the original's span
  }

  bool strip_, lower_;
  std::vector<NormChar>& out_;
  std::vector<Pending> run_;
  std::vector<std::pair<int32_t, int32_t>> spans_;
  std::pair<int32_t, int32_t> prev_{0, 0};  // span of the last consumed character (HF alignments[offset - 1])
};

}  // namespace

void BertNormalizer::normalize(std::string_view text, int32_t base, std::vector<NormChar>& out) const {
  Tail tail(strip_, lower_, out);
  const char* p = text.data();
  const size_t n = text.size();
  size_t i = 0;
  while (i < n) {
    const auto byte = static_cast<unsigned char>(p[i]);
    const int32_t b = base + static_cast<int32_t>(i);
    if (byte < 0x80) {
      char32_t c = byte;
      ++i;
      if (clean_text_) {
        const bool keep_control = c == '\t' || c == '\n' || c == '\r';
        if ((c < 0x20 && !keep_control) || c == 0x7F) continue;  // Cc (incl. \v \f, filtered before mapping)
        if (keep_control) c = ' ';
      }
      if (lower_ && c >= 'A' && c <= 'Z') c += 'a' - 'A';
      if (strip_) {
        tail.push_simple(c, b, b + 1);  // keeps the reorder state right
      } else {
        out.push_back({c, b, b + 1});
      }
      continue;
    }
    size_t len;
    char32_t c = decode_utf8(p + i, n - i, len);
    i += len;
    const int32_t e = b + static_cast<int32_t>(len);
    if (clean_text_) {
      if (c == kReplacementChar || is_other(c)) continue;
      if (is_whitespace(c)) c = ' ';
    }
    if (chinese_ && is_chinese_char(c)) {
      tail.push(' ', b, e);
      tail.push(c, b, e);
      tail.push(' ', b, e);
    } else {
      tail.push(c, b, e);
    }
  }
  tail.flush();
}

}  // namespace ct::text
