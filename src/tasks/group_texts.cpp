#include "tasks/group_texts.h"

#include <algorithm>

#include "core/error.h"

namespace ct::tasks {

std::vector<TokenChunk> group_texts(const std::vector<TokenizedText>& texts, int64_t max_seq_length,
                                    int64_t batch_size, const ShortBatchRule& short_batch) {
  CT_CHECK(max_seq_length > 0, "--max_seq_length ", max_seq_length,
           " (expected a positive number of tokens)");
  CT_CHECK(batch_size > 0, "group_texts: batch size ", batch_size, " (expected > 0)");
  std::vector<TokenChunk> out;
  TokenizedText joined;
  const auto n = static_cast<int64_t>(texts.size());
  for (int64_t first = 0; first < n; first += batch_size) {
    joined.input_ids.clear();
    joined.special_tokens_mask.clear();
    for (int64_t i = first; i < std::min(n, first + batch_size); ++i) {
      const auto& t = texts[static_cast<size_t>(i)];
      CT_CHECK(t.input_ids.size() == t.special_tokens_mask.size(), "group_texts: text ", i, " has ",
               t.input_ids.size(), " tokens but ", t.special_tokens_mask.size(), " special-token flags");
      joined.input_ids.insert(joined.input_ids.end(), t.input_ids.begin(), t.input_ids.end());
      joined.special_tokens_mask.insert(joined.special_tokens_mask.end(), t.special_tokens_mask.begin(),
                                        t.special_tokens_mask.end());
    }
    const auto tokens = static_cast<int64_t>(joined.input_ids.size());
    if (short_batch.fail_flag && tokens < max_seq_length)
      fail(short_batch.fail_flag, ": block_size of ", max_seq_length, " is too big: texts ", first, "-",
           std::min(n, first + batch_size) - 1, " of ", short_batch.source, " (one map batch of ", batch_size,
           ") hold ", tokens, " tokens; pass a smaller --block_size");
    const auto total = tokens / max_seq_length * max_seq_length;
    for (int64_t at = 0; at < total; at += max_seq_length) {
      TokenChunk c;
      c.input_ids.assign(joined.input_ids.begin() + at, joined.input_ids.begin() + at + max_seq_length);
      c.special_tokens_mask.assign(joined.special_tokens_mask.begin() + at,
                                   joined.special_tokens_mask.begin() + at + max_seq_length);
      out.push_back(std::move(c));
    }
  }
  return out;
}

int64_t mlm_max_seq_length(int64_t requested, int64_t model_max_length, std::string* warning) {
  if (warning) warning->clear();
  if (requested <= 0) {
    if (model_max_length > 1024) {
      if (warning)
        *warning = str("The chosen tokenizer supports a `model_max_length` that is longer than the default ",
                       "`block_size` value of 1024. If you would like to use a longer `block_size` up to ",
                       "`tokenizer.model_max_length` you can override this default with `--block_size xxx`.");
      return 1024;
    }
    return model_max_length;
  }
  if (requested > model_max_length) {
    if (warning)
      *warning =
          str("The max_seq_length passed (", requested, ") is larger than the maximum length for the model (",
              model_max_length, "). Using max_seq_length=", model_max_length, ".");
    return model_max_length;
  }
  return requested;
}

}  // namespace ct::tasks
