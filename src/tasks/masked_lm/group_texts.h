// run_mlm.py's default preprocessing (without --line_by_line): every text tokenized with its special tokens,
// then `group_texts` over each map batch of 1,000 texts: the batch's token lists concatenated and cut into
// chunks of max_seq_length, the remainder of each batch dropped. Chunks therefore never span two batches, and
// a dataset of fewer tokens than one chunk per batch yields nothing from that batch.
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

// Chunks of exactly `max_seq_length` tokens from texts taken `batch_size` at a time, in order.
std::vector<TokenChunk> group_texts(const std::vector<TokenizedText>& texts, int64_t max_seq_length,
                                    int64_t batch_size = kMapBatchSize);

// run_mlm's choice of max_seq_length: the tokenizer's model_max_length capped at 1,024 when the flag is
// absent
// (`requested` <= 0), else min(requested, model_max_length); `warning` says what was changed, as run_mlm
// logs.
int64_t mlm_max_seq_length(int64_t requested, int64_t model_max_length, std::string* warning);

}  // namespace ct::tasks
