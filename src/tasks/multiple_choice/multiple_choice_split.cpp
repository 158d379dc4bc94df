#include "tasks/multiple_choice/multiple_choice_split.h"

#include <algorithm>
#include <limits>

#include "core/error.h"

namespace ct::tasks {

MultipleChoiceSplit::MultipleChoiceSplit(const MultipleChoiceFeatures& features,
                                         MultipleChoiceOptions options)
    : features_(features), o_(options) {
  const int64_t C = features_.num_choices, n = features_.size();
  CT_CHECK(C > 0, "multiple choice: num_choices ", C, " (expected > 0)");
  CT_CHECK(static_cast<int64_t>(features_.input_ids.size()) == n * C &&
               features_.token_type_ids.size() == features_.input_ids.size(),
           "multiple choice: ", features_.input_ids.size(), " rows for ", n, " examples x ", C, " choices");
  for (int64_t i = 0; i < n; ++i) {
    CT_CHECK(features_.labels[static_cast<size_t>(i)] >= 0 && features_.labels[static_cast<size_t>(i)] < C,
             "example ", i, " has label ", features_.labels[static_cast<size_t>(i)], " (expected 0..", C - 1,
             ")");
    for (int64_t c = 0; c < C; ++c)
      CT_CHECK(features_.row_length(i * C + c) <= o_.max_seq_length, "example ", i, ", ending", c, " has ",
               features_.row_length(i * C + c), " tokens, more than --max_seq_length ", o_.max_seq_length);
  }
}

int64_t MultipleChoiceSplit::feature_length(int64_t i) const {
  const int64_t C = features_.num_choices;
  int64_t longest = 0;
  for (int64_t c = 0; c < C; ++c) longest = std::max(longest, features_.row_length(i * C + c));
  return longest;
}

train::CollatedBatch MultipleChoiceSplit::collate(std::span<const int64_t> idx, bool labels) const {
  struct Storage {
    std::vector<int32_t> ids, types, mask, lens, labels;
  };
  auto s = std::make_shared<Storage>();
  const int64_t C = features_.num_choices, rows = static_cast<int64_t>(idx.size()) * C;
  const int64_t T = o_.max_seq_length;
  train::CollatedBatch out;
  if (packed()) {
    for (int64_t f : idx)
      for (int64_t c = 0; c < C; ++c) {
        const auto& ids = features_.input_ids[static_cast<size_t>(f * C + c)];
        const auto& types = features_.token_type_ids[static_cast<size_t>(f * C + c)];
        s->ids.insert(s->ids.end(), ids.begin(), ids.end());
        s->types.insert(s->types.end(), types.begin(), types.end());
        s->lens.push_back(static_cast<int32_t>(ids.size()));
        out.real_lengths.push_back(static_cast<int64_t>(ids.size()));
      }
  } else {
    s->ids.assign(static_cast<size_t>(rows * T), o_.pad_token_id);
    s->types.assign(static_cast<size_t>(rows * T), 0);
    s->mask.assign(static_cast<size_t>(rows * T), 0);
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t row = idx[static_cast<size_t>(r / C)] * C + r % C;
      const auto& ids = features_.input_ids[static_cast<size_t>(row)];
      const auto& types = features_.token_type_ids[static_cast<size_t>(row)];
      std::copy(ids.begin(), ids.end(), s->ids.begin() + r * T);
      std::copy(types.begin(), types.end(), s->types.begin() + r * T);
      std::fill_n(s->mask.begin() + r * T, ids.size(), 1);
      out.real_lengths.push_back(static_cast<int64_t>(ids.size()));
    }
  }
  out.batch.B = rows;
  out.batch.T = T;
  out.batch.num_choices = C;
  out.batch.input_ids = s->ids.data();
  out.batch.token_type_ids = s->types.data();
  out.batch.attention_mask = packed() ? nullptr : s->mask.data();
  out.batch.seq_lens = packed() ? s->lens.data() : nullptr;
  if (labels) {
    for (int64_t f : idx) s->labels.push_back(static_cast<int32_t>(features_.labels[static_cast<size_t>(f)]));
    out.batch.labels = s->labels.data();
  }
  out.positions = static_cast<int64_t>(s->ids.size());
  out.storage = s;
  return out;
}

void MultipleChoiceSplit::prediction_rows(const train::CollatedBatch& batch, const std::vector<float>& logits,
                                          float* rows) const {
  // The model's multiple-choice logits are [B / num_choices, num_choices]: B / num_choices prediction rows.
  CT_CHECK(static_cast<int64_t>(logits.size()) == batch.batch.B, "multiple choice: the model gave ",
           logits.size(), " logits for ", batch.batch.B, " rows (examples x ", features_.num_choices,
           " choices)");
  std::copy(logits.begin(), logits.end(), rows);
}

nlohmann::json MultipleChoiceSplit::score(const std::vector<float>& rows, const std::string& /*split*/,
                                          bool /*write_files*/, const std::string& /*output_dir*/) const {
  const int64_t C = features_.num_choices, n = features_.size();
  CT_CHECK(static_cast<int64_t>(rows.size()) == n * C, "multiple choice: ", rows.size(),
           " prediction values for ", n, " examples x ", C, " choices");
  int64_t right = 0;
  for (int64_t i = 0; i < n; ++i) {
    const float* r = rows.data() + i * C;
    right += (std::max_element(r, r + C) - r) == features_.labels[static_cast<size_t>(i)];  // first maximum
  }
  // run_swag writes no prediction file, only the metric. An empty split's mean is numpy's nan.
  const float accuracy =
      n > 0 ? static_cast<float>(right) / static_cast<float>(n) : std::numeric_limits<float>::quiet_NaN();
  return nlohmann::json{{"accuracy", static_cast<double>(accuracy)}};
}

}  // namespace ct::tasks
