// tokenizer.json pre-tokenizers: they cut the normalized text into the words the model tokenizes.
#pragma once

#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "text/pre_tokenized.h"

namespace ct::text {

class PreTokenizer {
 public:
  virtual ~PreTokenizer() = default;
  virtual void pre_tokenize(PreTokenized& p) const = 0;
};

std::unique_ptr<PreTokenizer> make_pre_tokenizer(const nlohmann::json& j, const std::string& where);

// GPT-2's byte-to-unicode table (bytes that are printable stand for themselves, the rest map above U+0100).
char32_t byte_level_char(unsigned char b);
int byte_level_byte(char32_t c);  // the inverse, -1 for characters outside the table

}  // namespace ct::text
