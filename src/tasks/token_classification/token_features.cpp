#include "tasks/token_classification/token_features.h"

#include "core/error.h"
#include "tasks/token_classification/ner_labels.h"
#include "tasks/tokenizer_call.h"

namespace ct::tasks {

nlohmann::json split_words_overrides(const std::string& model_type) {
  nlohmann::json overrides = nlohmann::json::object();
  if (model_type == "roberta" || model_type == "deberta" || model_type == "gpt2" || model_type == "bloom")
    overrides["add_prefix_space"] = true;
  return overrides;
}

TokenFeatures build_token_features(text::HfTokenizer& tokenizer,
                                   const std::vector<std::vector<std::string>>& words,
                                   const std::vector<std::vector<int64_t>>& word_labels,
                                   int64_t max_seq_length, bool label_all_tokens,
                                   const std::vector<int64_t>& b_to_i) {
  CT_CHECK(word_labels.empty() || word_labels.size() == words.size(), "ner: ", word_labels.size(),
           " label lists for ", words.size(), " examples");
  const TruncationScope scope(tokenizer, max_seq_length);
  const auto n = static_cast<int64_t>(words.size());
  TokenFeatures out;
  out.input_ids.resize(words.size());
  out.token_type_ids.resize(words.size());
  out.labels.resize(word_labels.empty() ? 0 : words.size());
  std::vector<std::string> errors(words.size());
#pragma omp parallel for schedule(dynamic, 64)
  for (int64_t i = 0; i < n; ++i) {
    const auto k = static_cast<size_t>(i);
    try {
      text::Encoding e = tokenizer.encode_words(words[k], nullptr);
      if (!word_labels.empty()) {
        CT_CHECK(word_labels[k].size() == words[k].size(), words[k].size(), " words but ",
                 word_labels[k].size(), " labels");
        std::vector<int64_t> word_ids(e.word_ids.begin(), e.word_ids.end());
        const auto aligned = align_labels_with_tokens(word_ids, word_labels[k], label_all_tokens, b_to_i);
        out.labels[k].assign(aligned.begin(), aligned.end());
      }
      out.input_ids[k] = std::move(e.ids);
      out.token_type_ids[k] = std::move(e.type_ids);
    } catch (const Error& e) {
      errors[k] = e.what();
    }
  }
  for (int64_t i = 0; i < n; ++i)
    CT_CHECK(errors[static_cast<size_t>(i)].empty(), "example ", i, ": ", errors[static_cast<size_t>(i)]);
  return out;
}

TokenFeatures cached_token_features(const SplitCache& cache, text::HfTokenizer& tokenizer,
                                    const std::vector<std::vector<std::string>>& words,
                                    const std::vector<std::vector<int64_t>>& word_labels,
                                    int64_t max_seq_length, bool label_all_tokens,
                                    const std::vector<int64_t>& b_to_i) {
  Hasher key = feature_key(cache, "token-v1");
  key.u64(static_cast<uint64_t>(max_seq_length)).u64(label_all_tokens).vec(b_to_i);
  key.u64(words.size());
  for (const auto& ws : words) {
    key.u64(ws.size());
    for (const auto& w : ws) key.str(w);
  }
  key.u64(word_labels.size());
  for (const auto& l : word_labels) key.vec(l);
  const size_t n = words.size();
  return cached_features<TokenFeatures>(
      cache, key.digest(),
      [&] {
        return build_token_features(tokenizer, words, word_labels, max_seq_length, label_all_tokens, b_to_i);
      },
      [](const TokenFeatures& f) {
        data::FeatureColumns c;
        c.add("input_ids", f.input_ids);
        c.add("token_type_ids", f.token_type_ids);
        c.add("labels", f.labels);
        return c;
      },
      [&](data::FeatureColumns c, const std::string& path) {
        TokenFeatures f;
        f.input_ids = take_rows(c, "input_ids", n, path);
        f.token_type_ids = take_rows(c, "token_type_ids", n, path);
        f.labels = take_rows(c, "labels", word_labels.empty() ? 0 : n, path);
        check_row_lengths(f.input_ids, f.token_type_ids, "token_type_ids", path);
        if (!f.labels.empty()) check_row_lengths(f.input_ids, f.labels, "labels", path);
        return f;
      },
      [](const TokenFeatures& f) { return f.size(); });
}

}  // namespace ct::tasks
