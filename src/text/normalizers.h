// tokenizer.json normalizers, each editing a NormalizedString so offsets stay aligned to the original text.
#pragma once

#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "text/normalized_string.h"

namespace ct::text {

class Normalizer {
 public:
  virtual ~Normalizer() = default;
  virtual void normalize(NormalizedString& s) const = 0;
};

// Builds the normalizer described by `j` ({"type": ...}); `where` names its JSON path in errors.
std::unique_ptr<Normalizer> make_normalizer(const nlohmann::json& j, const std::string& where);

// Unicode normal forms with the change stream HF's unicode-normalization-alignments produces.
enum class NormalForm { kNFD, kNFKD, kNFC, kNFKC };
void normalize_unicode(NormalizedString& s, NormalForm form);

}  // namespace ct::text
