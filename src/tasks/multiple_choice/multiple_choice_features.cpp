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

}  // namespace ct::tasks
