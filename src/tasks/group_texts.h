// The `group_texts` of run_mlm.py (its default preprocessing, without --line_by_line) and of run_clm.py:
// every text tokenized with its special tokens, then each map batch of 1,000 texts concatenated and cut into
// chunks of max_seq_length (run_clm: block_size), the remainder of each batch dropped. Chunks therefore never
// span two batches. A batch of fewer tokens than one chunk yields nothing from it (run_mlm), or is run_clm's
// "block_size ... is too big" error.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ct::tasks {

constexpr int64_t kMapBatchSize = 1000;  // datasets.Dataset.map(batched=True)'s default batch size

struct TokenChunk {
  std::vector<int32_t> input_ids;
  std::vector<uint8_t> special_tokens_mask;  // 1 where a token is special (never masked)
};

struct TokenizedText {
  std::vector<int32_t> input_ids;
  std::vector<uint8_t> special_tokens_mask;
};

// What a map batch of fewer tokens than one chunk does: yield nothing (run_mlm), or fail (run_clm, whose
// error names `fail_flag` and the batch).
struct ShortBatchRule {
  const char* fail_flag = nullptr;  // null: drop the batch
  std::string source;               // the split, for the error
};

// Chunks of exactly `max_seq_length` tokens from texts taken `batch_size` at a time, in order.
std::vector<TokenChunk> group_texts(const std::vector<TokenizedText>& texts, int64_t max_seq_length,
                                    int64_t batch_size = kMapBatchSize,
                                    const ShortBatchRule& short_batch = {});

// run_mlm's choice of max_seq_length: the tokenizer's model_max_length capped at 1,024 when the flag is
// absent
// (`requested` <= 0), else min(requested, model_max_length); `warning` says what was changed, as run_mlm
// logs.
int64_t mlm_max_seq_length(int64_t requested, int64_t model_max_length, std::string* warning);

}  // namespace ct::tasks
