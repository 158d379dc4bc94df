#include "tasks/multiple_choice/multiple_choice_features.h"

#include "core/error.h"
#include "tasks/tokenizer_call.h"

namespace ct::tasks {

MultipleChoiceFeatures build_multiple_choice_features(text::HfTokenizer& tokenizer,
                                                      const std::vector<MultipleChoiceExample>& examples,
                                                      int64_t max_seq_length) {
  constexpr int64_t C = kSwagNumChoices;
  const auto n = static_cast<int64_t>(examples.size());
  // Checked before tokenizing, so a malformed example fails at once and names itself.
  for (int64_t i = 0; i < n; ++i) {
    const MultipleChoiceExample& e = examples[static_cast<size_t>(i)];
    CT_CHECK(static_cast<int64_t>(e.endings.size()) == C, "example ", i, " has ", e.endings.size(),
             " endings (expected ", C, ": ending0..ending", C - 1, ")");
    CT_CHECK(e.label >= 0 && e.label < C, "example ", i, " has label ", e.label, " (expected 0..", C - 1,
             ")");
  }
  const TruncationScope scope(tokenizer, max_seq_length);
  MultipleChoiceFeatures out;
  out.num_choices = C;
  out.input_ids.resize(static_cast<size_t>(n * C));
  out.token_type_ids.resize(static_cast<size_t>(n * C));
  out.labels.reserve(static_cast<size_t>(n));
  for (const auto& e : examples) out.labels.push_back(e.label);
  std::vector<std::string> errors(static_cast<size_t>(n * C));
#pragma omp parallel for schedule(dynamic, 64)
  for (int64_t r = 0; r < n * C; ++r) {
    const MultipleChoiceExample& e = examples[static_cast<size_t>(r / C)];
    try {
      // run_swag's second sentence: f"{header} {end}", even when the header is empty.
      text::Encoding enc =
          tokenizer.encode_pair(e.context, e.header + " " + e.endings[static_cast<size_t>(r % C)]);
      out.input_ids[static_cast<size_t>(r)] = std::move(enc.ids);
      out.token_type_ids[static_cast<size_t>(r)] = std::move(enc.type_ids);
    } catch (const Error& err) {
      errors[static_cast<size_t>(r)] = err.what();
    }
  }
  for (int64_t r = 0; r < n * C; ++r)
    CT_CHECK(errors[static_cast<size_t>(r)].empty(), "example ", r / C, ", ending", r % C, ": ",
             errors[static_cast<size_t>(r)]);
  return out;
}

MultipleChoiceFeatures cached_multiple_choice_features(const SplitCache& cache, text::HfTokenizer& tokenizer,
                                                       const std::vector<MultipleChoiceExample>& examples,
                                                       int64_t max_seq_length) {
  Hasher key = feature_key(cache, "multiple-choice-v1");
  key.u64(static_cast<uint64_t>(max_seq_length)).u64(examples.size());
  for (const auto& e : examples) {
    key.str(e.context).str(e.header).u64(e.endings.size());
    for (const auto& ending : e.endings) key.str(ending);
    key.u64(static_cast<uint64_t>(e.label));
  }
  const size_t n = examples.size();
  return cached_features<MultipleChoiceFeatures>(
      cache, key.digest(),
      [&] { return build_multiple_choice_features(tokenizer, examples, max_seq_length); },
      [](const MultipleChoiceFeatures& f) {
        data::FeatureColumns c;
        c.add("input_ids", f.input_ids);
        c.add("token_type_ids", f.token_type_ids);
        c.add("labels", {std::vector<int32_t>(f.labels.begin(), f.labels.end())});
        return c;
      },
      [&](data::FeatureColumns c, const std::string& path) {
        MultipleChoiceFeatures f;
        f.num_choices = kSwagNumChoices;
        f.input_ids = take_rows(c, "input_ids", n * kSwagNumChoices, path);
        f.token_type_ids = take_rows(c, "token_type_ids", n * kSwagNumChoices, path);
        check_row_lengths(f.input_ids, f.token_type_ids, "token_type_ids", path);
        const auto labels = take_rows(c, "labels", 1, path);
        if (labels[0].size() != n)
          fail(path, ": corrupt feature cache (", labels[0].size(), " labels for ", n, " examples)");
        f.labels.assign(labels[0].begin(), labels[0].end());
        return f;
      },
      [](const MultipleChoiceFeatures& f) { return f.size(); });
}

}  // namespace ct::tasks
