// HF's Encoding: everything a tokenized input carries (ids, type ids, tokens, offsets, word ids, masks,
// sequence ranges, overflowing windows) and the operations on it that decide HF's output: merging sequences,
// truncating into stride windows, padding.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace ct::text {

struct Encoding {
  std::vector<int32_t> ids, type_ids;
  std::vector<std::string> tokens;
  std::vector<std::pair<uint32_t, uint32_t>> offsets;
  std::vector<int32_t> word_ids;  // -1: none (special tokens, padding)
  std::vector<uint8_t> special_tokens_mask, attention_mask;
  std::vector<Encoding> overflowing;
  std::map<int, std::pair<size_t, size_t>> sequence_ranges;  // sequence index -> token range

  size_t size() const { return ids.size(); }
  // Per token: the index of the sequence it belongs to, -1 for special tokens and padding.
  std::vector<int32_t> sequence_ids() const;
  void set_sequence_id(int id) { sequence_ranges[id] = {0, size()}; }
  void push(int32_t id, int32_t type_id, std::string token, std::pair<uint32_t, uint32_t> offset,
            int32_t word, bool special);

  // Appends `pair` (its offsets kept as they are) and builds the cross product of both overflow lists.
  void merge_with(Encoding pair);
  static Encoding merge(std::vector<Encoding> parts);
  // Keeps the first `max_len` tokens (the last, for `left`) and moves the rest into windows of `max_len`
  // tokens that overlap by `stride`. Throws when stride >= max_len.
  void truncate(size_t max_len, size_t stride, bool left);
  void pad(size_t target, int32_t pad_id, int32_t pad_type_id, const std::string& pad_token, bool left);
};

enum class TruncationStrategy { kLongestFirst, kOnlyFirst, kOnlySecond };

struct TruncationParams {
  size_t max_length = 512;
  size_t stride = 0;
  TruncationStrategy strategy = TruncationStrategy::kLongestFirst;
  bool left = false;
};

struct PaddingParams {
  size_t fixed = 0;  // 0: pad to the longest of the batch
  size_t pad_to_multiple_of = 0;
  int32_t pad_id = 0, pad_type_id = 0;
  std::string pad_token = "[PAD]";
  bool left = false;
};

// HF's truncate_encodings: how many tokens each of a pair keeps under `p` (`pair` may be null).
void truncate_encodings(Encoding& a, Encoding* pair, const TruncationParams& p);
void pad_encodings(std::vector<Encoding*>& batch, const PaddingParams& p);

}  // namespace ct::text
