#include "tasks/token_classification/token_classification_split.h"

#include <algorithm>
#include <filesystem>

#include "core/error.h"
#include "core/fs.h"
#include "tasks/metrics/seqeval.h"
#include "tasks/token_classification/ner_labels.h"

namespace ct::tasks {

TokenClassificationSplit::TokenClassificationSplit(const TokenFeatures& features,
                                                   TokenClassificationOptions options)
    : features_(features), o_(std::move(options)) {
  CT_CHECK(!o_.label_list.empty(), "token classification: an empty label list");
  const auto L = static_cast<int64_t>(o_.label_list.size());
  for (int64_t i = 0; i < features_.size(); ++i) {
    CT_CHECK(feature_length(i) <= o_.max_seq_length, "feature ", i, " has ", feature_length(i),
             " tokens, more than --max_seq_length ", o_.max_seq_length);
    if (has_labels())
      for (int32_t l : features_.labels[static_cast<size_t>(i)])
        CT_CHECK(l == kIgnoreIndex || (l >= 0 && l < L), "feature ", i, " has label id ", l, " (expected 0..",
                 L - 1, " or -100)");
  }
}

int64_t TokenClassificationSplit::feature_length(int64_t i) const {
  return static_cast<int64_t>(features_.input_ids[static_cast<size_t>(i)].size());
}

train::CollatedBatch TokenClassificationSplit::collate(std::span<const int64_t> idx, bool labels) const {
  struct Storage {
    std::vector<int32_t> ids, types, mask, lens, labels;
  };
  auto s = std::make_shared<Storage>();
  const auto B = static_cast<int64_t>(idx.size());
  const bool with_labels = labels && has_labels();
  train::CollatedBatch out;
  if (packed()) {
    for (int64_t f : idx) {
      const auto k = static_cast<size_t>(f);
      s->ids.insert(s->ids.end(), features_.input_ids[k].begin(), features_.input_ids[k].end());
      s->types.insert(s->types.end(), features_.token_type_ids[k].begin(), features_.token_type_ids[k].end());
      if (with_labels)
        s->labels.insert(s->labels.end(), features_.labels[k].begin(), features_.labels[k].end());
      s->lens.push_back(static_cast<int32_t>(features_.input_ids[k].size()));
      out.real_lengths.push_back(static_cast<int64_t>(features_.input_ids[k].size()));
    }
  } else {
    const int64_t T = o_.max_seq_length;
    s->ids.assign(static_cast<size_t>(B * T), o_.pad_token_id);
    s->types.assign(static_cast<size_t>(B * T), 0);
    s->mask.assign(static_cast<size_t>(B * T), 0);
    if (with_labels) s->labels.assign(static_cast<size_t>(B * T), static_cast<int32_t>(kIgnoreIndex));
    for (int64_t r = 0; r < B; ++r) {
      const auto k = static_cast<size_t>(idx[r]);
      const auto& ids = features_.input_ids[k];
      std::copy(ids.begin(), ids.end(), s->ids.begin() + r * T);
      std::copy(features_.token_type_ids[k].begin(), features_.token_type_ids[k].end(),
                s->types.begin() + r * T);
      std::fill_n(s->mask.begin() + r * T, ids.size(), 1);
      if (with_labels)
        std::copy(features_.labels[k].begin(), features_.labels[k].end(), s->labels.begin() + r * T);
      out.real_lengths.push_back(static_cast<int64_t>(ids.size()));
    }
  }
  out.batch.B = B;
  out.batch.T = o_.max_seq_length;
  out.batch.input_ids = s->ids.data();
  out.batch.token_type_ids = s->types.data();
  out.batch.attention_mask = packed() ? nullptr : s->mask.data();
  out.batch.seq_lens = packed() ? s->lens.data() : nullptr;
  out.batch.labels = with_labels ? s->labels.data() : nullptr;
  out.positions = static_cast<int64_t>(s->ids.size());
  out.storage = s;
  return out;
}

void TokenClassificationSplit::prediction_rows(const train::CollatedBatch& batch,
                                               const std::vector<float>& logits, float* rows) const {
  const auto L = static_cast<int64_t>(o_.label_list.size());
  const model::Batch& b = batch.batch;
  const int64_t T = o_.max_seq_length;
  int64_t from = 0;  // the row's first token in the logits ([tokens, L]: padded B x T, or packed)
  for (int64_t r = 0; r < b.B; ++r) {
    const int64_t len = batch.real_lengths[static_cast<size_t>(r)];
    float* row = rows + r * T;
    std::fill(row, row + T, static_cast<float>(kIgnoreIndex));
    for (int64_t t = 0; t < len; ++t) {
      const float* l = logits.data() + (from + t) * L;
      row[t] = static_cast<float>(std::max_element(l, l + L) - l);  // numpy's argmax: the first maximum
    }
    from += b.seq_lens ? len : T;
  }
}

nlohmann::json TokenClassificationSplit::score(const std::vector<float>& rows, const std::string& split,
                                               bool write_files, const std::string& output_dir) const {
  const int64_t T = o_.max_seq_length;
  std::vector<std::vector<int64_t>> predicted, labels;
  for (int64_t i = 0; i < features_.size(); ++i) {
    const int64_t len = feature_length(i);
    predicted.emplace_back(rows.begin() + i * T, rows.begin() + i * T + len);
    if (has_labels()) {
      const auto& l = features_.labels[static_cast<size_t>(i)];
      labels.emplace_back(l.begin(), l.end());
    } else {
      // Without labels every position but the special tokens' would be scored; run_ner's predict has labels.
      labels.emplace_back(static_cast<size_t>(len), kIgnoreIndex);
    }
  }
  const TagPairs tags = tags_for_scoring(predicted, labels, o_.label_list);
  if (write_files && split == "predict")
    fs::write_file_atomic((std::filesystem::path(output_dir) / "predictions.txt").string(),
                          ner_predictions_text(tags.predictions));
  if (!has_labels()) return nlohmann::json::object();
  return metrics_to_json(
      ner_metrics(seqeval(tags.predictions, tags.references), o_.return_entity_level_metrics), "");
}

}  // namespace ct::tasks
