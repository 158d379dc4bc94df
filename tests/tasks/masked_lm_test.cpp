// run_mlm.py's group_texts and max_seq_length choice, and the collator's 80/10/10 masking keyed by position.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <numeric>

#include "core/error.h"
#include "tasks/group_texts.h"
#include "tasks/masked_lm/mlm_masking.h"

using testing::ElementsAre;

namespace {
ct::tasks::TokenizedText text(int32_t first, int n) {
  ct::tasks::TokenizedText t;
  for (int i = 0; i < n; ++i) {
    t.input_ids.push_back(first + i);
    t.special_tokens_mask.push_back(i == 0 || i == n - 1);
  }
  return t;
}
}  // namespace

TEST(GroupTexts, ChunksEachMapBatchAndDropsItsRemainder) {
  // Batches of two texts: (3 + 4 = 7 tokens -> one chunk of 3, 1 dropped... per batch), (5 + 2 = 7 -> two of
  // 3).
  std::vector<ct::tasks::TokenizedText> texts{text(0, 3), text(10, 4), text(20, 5), text(30, 2)};
  const auto chunks = ct::tasks::group_texts(texts, 3, 2);
  ASSERT_EQ(4u, chunks.size());
  EXPECT_THAT(chunks[0].input_ids, ElementsAre(0, 1, 2));
  EXPECT_THAT(chunks[1].input_ids, ElementsAre(10, 11, 12));  // token 13 is the first batch's remainder
  EXPECT_THAT(chunks[2].input_ids, ElementsAre(20, 21, 22));
  EXPECT_THAT(chunks[3].input_ids, ElementsAre(23, 24, 30));
  EXPECT_THAT(chunks[3].special_tokens_mask, ElementsAre(0, 1, 1));
  // With HF's batch of 1,000 the same texts are one batch: 14 tokens -> four chunks of 3, two dropped.
  EXPECT_EQ(4u, ct::tasks::group_texts(texts, 3).size());
  EXPECT_TRUE(ct::tasks::group_texts(texts, 15).empty());
}

TEST(GroupTexts, MaxSeqLengthAsRunMlmChoosesIt) {
  std::string warning;
  EXPECT_EQ(512, ct::tasks::mlm_max_seq_length(0, 512, &warning));
  EXPECT_TRUE(warning.empty());
  EXPECT_EQ(1024, ct::tasks::mlm_max_seq_length(0, 1000000000000000019LL, &warning));
  EXPECT_THAT(warning, testing::HasSubstr("default `block_size` value of 1024"));
  EXPECT_EQ(512, ct::tasks::mlm_max_seq_length(4096, 512, &warning));
  EXPECT_THAT(warning, testing::HasSubstr("Using max_seq_length=512"));
  EXPECT_EQ(128, ct::tasks::mlm_max_seq_length(128, 512, &warning));
}

TEST(MlmMasking, MasksEightyTenTenOfFifteenPercentAndNeverASpecialToken) {
  const int n = 1000, len = 200;
  ct::tasks::MaskingOptions o;
  o.mask_token_id = 4;
  o.vocab_size = 30522;
  int64_t tokens = 0, chosen = 0, masked = 0, kept = 0, special_chosen = 0;
  for (int s = 0; s < n; ++s) {
    std::vector<int32_t> ids(len);
    std::iota(ids.begin(), ids.end(), 1000);
    std::vector<uint8_t> special(len, 0);
    special[0] = special[len - 1] = 1;
    std::vector<int64_t> labels(len);
    const auto original = ids;
    ct::tasks::mask_tokens(ids, special, labels, o, 0, s);
    for (int t = 0; t < len; ++t) {
      tokens += !special[t];
      if (labels[t] == -100) {
        EXPECT_EQ(original[t], ids[t]);
        continue;
      }
      special_chosen += special[t];
      ++chosen;
      EXPECT_EQ(original[t], labels[t]);
      masked += ids[t] == 4;
      kept += ids[t] == original[t];
      EXPECT_LT(ids[t], o.vocab_size);
    }
  }
  EXPECT_EQ(0, special_chosen);
  // Binomial bounds of about 6 standard deviations at these counts.
  EXPECT_NEAR(0.15, static_cast<double>(chosen) / tokens, 0.005);
  EXPECT_NEAR(0.80, static_cast<double>(masked) / chosen, 0.015);
  EXPECT_NEAR(0.10, static_cast<double>(kept) / chosen, 0.01);
}

TEST(MlmMasking, DrawsArePureFunctionsOfSeedEpochAndPosition) {
  ct::tasks::MaskingOptions o;
  o.mask_token_id = 4;
  o.vocab_size = 100;
  auto run = [&](uint64_t epoch, uint64_t position, uint64_t seed) {
    o.seed = seed;
    std::vector<int32_t> ids(64, 7);
    std::vector<uint8_t> special(64, 0);
    std::vector<int64_t> labels(64);
    ct::tasks::mask_tokens(ids, special, labels, o, epoch, position);
    return labels;
  };
  EXPECT_EQ(run(1, 5, 42), run(1, 5, 42));  // any rank, any run, after any resume
  EXPECT_NE(run(1, 5, 42), run(2, 5, 42));  // re-drawn each epoch
  EXPECT_NE(run(1, 5, 42), run(1, 6, 42));
  EXPECT_NE(run(1, 5, 42), run(1, 5, 43));
  EXPECT_NE(run(ct::tasks::kEvalMaskEpoch, 5, 42), run(0, 5, 42));
}

TEST(MlmMasking, RefusesATokenizerWithoutAMaskToken) {
  ct::tasks::MaskingOptions o;
  o.vocab_size = 100;
  std::vector<int32_t> ids(4, 7);
  std::vector<uint8_t> special(4, 0);
  std::vector<int64_t> labels(4);
  EXPECT_THAT([&] { ct::tasks::mask_tokens(ids, special, labels, o, 0, 0); },
              testing::ThrowsMessage<ct::Error>(testing::HasSubstr("no mask token")));
  o.mask_token_id = 4;
  EXPECT_THAT(
      [&] { ct::tasks::mask_tokens(ids, special, std::span<int64_t>(labels).first(3), o, 0, 0); },
      testing::ThrowsMessage<ct::Error>(testing::HasSubstr("4 tokens, 4 special-token flags and 3 labels")));
}
