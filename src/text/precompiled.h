// SentencePiece's precompiled_charsmap (a darts-clone double-array trie plus a pool of NUL-terminated
// replacement strings) applied the way HF's Precompiled normalizer applies it: per extended grapheme cluster,
// shortest prefix match, the whole grapheme replaced.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "text/normalized_string.h"

namespace ct::text {

class Precompiled {
 public:
  // `blob` is the base64-decoded charsmap; throws ct::Error naming `where` when it is malformed.
  Precompiled(std::string blob, const std::string& where);
  // The replacement of the shortest key that is a prefix of `chunk`, or nullptr when none is.
  const char* transform(std::string_view chunk) const;
  void normalize(NormalizedString& s) const;

 private:
  std::vector<uint32_t> units_;
  std::string pool_;
};

std::string base64_decode(std::string_view in, const std::string& where);

}  // namespace ct::text
