// HF's PreTokenizedString: the input cut into splits (each a NormalizedString), some already tokenized (added
// tokens), the rest refined by pre-tokenizers and then tokenized by the model.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "text/normalized_string.h"

namespace ct::text {

// A model token: id, string and byte range within the split's normalized text.
struct PieceToken {
  int32_t id;
  std::string value;
  uint32_t begin, end;
};

struct Split {
  NormalizedString text;
  std::vector<PieceToken> tokens;
  bool tokenized = false;
};

struct PreTokenized {
  std::vector<Split> splits;

  // Replaces every untokenized split by the non-empty pieces `f` makes of it (`index` is its position).
  void split(const std::function<std::vector<NormalizedString>(size_t index, NormalizedString)>& f);
  void normalize(const std::function<void(NormalizedString&)>& f);
};

}  // namespace ct::text
