// Oniguruma regexes with the semantics HF's tokenizers gets from the `onig` crate: Ruby syntax, UTF-8, no
// options, and find-all iteration that skips an empty match right after the previous match.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ct::text {

class Regex {
 public:
  // Throws ct::Error naming `where` when Oniguruma rejects the pattern.
  Regex(const std::string& pattern, const std::string& where);
  ~Regex();
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;

  // Byte ranges of all matches in `text` (valid UTF-8), left to right.
  std::vector<std::pair<size_t, size_t>> find_all(std::string_view text) const;
  // Escapes every regex metacharacter, as Rust's regex::escape does, so a literal string becomes a pattern.
  static std::string escape(std::string_view literal);

 private:
  void* re_ = nullptr;  // OnigRegex; void* keeps oniguruma.h out of this header
};

}  // namespace ct::text
