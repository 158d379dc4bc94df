// tokenizer.json post-processors: special tokens around one or two sequences, their type ids, and ByteLevel's
// offset trimming; HF's PostProcessor::process drives them.
#pragma once

#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "text/encoding.h"

namespace ct::text {

class PostProcessor {
 public:
  virtual ~PostProcessor() = default;
  virtual size_t added_tokens(bool pair) const = 0;
  virtual std::vector<Encoding> process_encodings(std::vector<Encoding> encodings,
                                                  bool add_special) const = 0;
};

std::unique_ptr<PostProcessor> make_post_processor(const nlohmann::json& j, const std::string& where);

// Sets the sequence ids, runs `p` (or HF's default: plain concatenation) and merges into one encoding.
Encoding post_process(const PostProcessor* p, Encoding a, Encoding* pair, bool add_special);

}  // namespace ct::text
