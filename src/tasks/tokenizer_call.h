// What transformers' tokenizer __call__ does to a fast tokenizer around one call with truncation=True and
// max_length: set truncation (longest_first at max_length) and no padding, encode, restore the caller's
// settings.
#pragma once

#include <cstdint>
#include <optional>

#include "core/error.h"
#include "text/hf_tokenizer.h"

namespace ct::tasks {

class TruncationScope {
 public:
  TruncationScope(text::HfTokenizer& tokenizer, int64_t max_length)
      : tokenizer_(tokenizer), truncation_(tokenizer.truncation()), padding_(tokenizer.padding()) {
    CT_CHECK(max_length > 0, "--max_seq_length: must be > 0, got ", max_length);
    text::TruncationParams t;
    t.max_length = static_cast<size_t>(max_length);
    t.strategy = text::TruncationStrategy::kLongestFirst;
    tokenizer_.set_truncation(t);
    tokenizer_.set_padding(std::nullopt);
  }
  ~TruncationScope() {
    tokenizer_.set_truncation(truncation_);
    tokenizer_.set_padding(padding_);
  }
  TruncationScope(const TruncationScope&) = delete;
  TruncationScope& operator=(const TruncationScope&) = delete;

 private:
  text::HfTokenizer& tokenizer_;
  std::optional<text::TruncationParams> truncation_;
  std::optional<text::PaddingParams> padding_;
};

}  // namespace ct::tasks
