// HF's NormalizedString: text being normalized that remembers, for every byte of the normalized form, the
// byte range of the original text it came from. Every normalizer and pre-tokenizer edits text through
// transform(), whose positional alignment rule is what makes offsets come out as HF's, quirks included.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ct::text {

class Regex;

struct Span {
  uint32_t begin = 0, end = 0;
};

// One output character of a transform and how it relates to the old text: 0 replaces one old character, > 0
// is inserted, -n replaces one old character and deletes the n after it.
struct Change {
  char32_t c;
  int change;
};
using Changes = std::vector<Change>;

// What a split does with the matched pieces (HF's SplitDelimiterBehavior).
enum class SplitBehavior { kRemoved, kIsolated, kMergedWithPrevious, kMergedWithNext, kContiguous };

// A pattern finds (range, is_match) pieces that cover the whole text, as HF's Pattern trait.
using MatchList = std::vector<std::pair<std::pair<size_t, size_t>, bool>>;
MatchList find_matches(const Regex& re, std::string_view text);
MatchList find_matches(const std::function<bool(char32_t)>& pred, std::string_view text);

class NormalizedString {
 public:
  NormalizedString() = default;
  explicit NormalizedString(std::string_view original, size_t shift = 0);

  const std::string& get() const { return normalized_; }
  const std::string& original() const { return original_; }
  size_t shift() const { return shift_; }  // where original() starts in the whole input
  bool empty() const { return normalized_.empty(); }

  // Original byte range of the normalized range [b, e), relative to original(); an empty range is returned
  // as it is (HF's convert_offsets).
  std::pair<size_t, size_t> to_original(size_t b, size_t e) const;

  void transform_range(size_t b, size_t e, const Changes& changes, size_t initial_offset);
  void transform(const Changes& changes, size_t initial_offset) {
    transform_range(0, normalized_.size(), changes, initial_offset);
  }
  void prepend(std::string_view s);
  void lowercase();
  void filter(const std::function<bool(char32_t)>& keep);
  void map(const std::function<char32_t(char32_t)>& f);
  void strip(bool left, bool right);
  void replace(const MatchList& matches, std::string_view content);

  // The sub-string of normalized range [b, e), with original() cut to match.
  NormalizedString slice(size_t b, size_t e) const;
  std::vector<NormalizedString> split(MatchList matches, SplitBehavior behavior, bool invert = false) const;

  // Decoded code points of the normalized text.
  std::u32string chars() const;

 private:
  std::string original_, normalized_;
  std::vector<Span> align_;  // per normalized byte
  size_t shift_ = 0;
};

}  // namespace ct::text
