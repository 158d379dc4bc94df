#include "tasks/sequence_classification/sequence_features.h"

#include "core/error.h"
#include "tasks/tokenizer_call.h"

namespace ct::tasks {

SequenceFeatures build_sequence_features(text::HfTokenizer& tokenizer, const std::vector<TextPair>& texts,
                                         int64_t max_seq_length) {
  const TruncationScope scope(tokenizer, max_seq_length);
  const auto n = static_cast<int64_t>(texts.size());
  SequenceFeatures out;
  out.input_ids.resize(texts.size());
  out.token_type_ids.resize(texts.size());
  std::vector<std::string> errors(texts.size());
#pragma omp parallel for schedule(dynamic, 64)
  for (int64_t i = 0; i < n; ++i) {
    const TextPair& p = texts[static_cast<size_t>(i)];
    try {
      text::Encoding e = p.second ? tokenizer.encode_pair(p.first, *p.second) : tokenizer.encode(p.first);
      out.input_ids[static_cast<size_t>(i)] = std::move(e.ids);
      out.token_type_ids[static_cast<size_t>(i)] = std::move(e.type_ids);
    } catch (const Error& e) {
      errors[static_cast<size_t>(i)] = e.what();
    }
  }
  for (int64_t i = 0; i < n; ++i)
    CT_CHECK(errors[static_cast<size_t>(i)].empty(), "example ", i, ": ", errors[static_cast<size_t>(i)]);
  return out;
}

SequenceFeatures cached_sequence_features(const SplitCache& cache, text::HfTokenizer& tokenizer,
                                          const std::vector<TextPair>& texts, int64_t max_seq_length) {
  Hasher key = feature_key(cache, "sequence-v1");
  key.u64(static_cast<uint64_t>(max_seq_length)).u64(texts.size());
  for (const auto& t : texts) {
    key.str(t.first).u64(t.second.has_value());
    if (t.second) key.str(*t.second);
  }
  return cached_features<SequenceFeatures>(
      cache, key.digest(), [&] { return build_sequence_features(tokenizer, texts, max_seq_length); },
      [](const SequenceFeatures& f) {
        data::FeatureColumns c;
        c.add("input_ids", f.input_ids);
        c.add("token_type_ids", f.token_type_ids);
        return c;
      },
      [&](data::FeatureColumns c, const std::string& path) {
        SequenceFeatures f;
        f.input_ids = take_rows(c, "input_ids", texts.size(), path);
        f.token_type_ids = take_rows(c, "token_type_ids", texts.size(), path);
        check_row_lengths(f.input_ids, f.token_type_ids, "token_type_ids", path);
        return f;
      },
      [](const SequenceFeatures& f) { return f.size(); });
}

}  // namespace ct::tasks
