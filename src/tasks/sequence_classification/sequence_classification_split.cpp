#include "tasks/sequence_classification/sequence_classification_split.h"

#include "tasks/metrics/evaluate_metric.h"

#include <algorithm>
#include <filesystem>

#include "core/error.h"
#include "core/fs.h"
#include "tasks/metrics/classification_metrics.h"
#include "tasks/metrics/evaluate_metric.h"
#include "tasks/metrics/glue_metric.h"
#include "tasks/sequence_classification/predict_results.h"

namespace ct::tasks {

SequenceClassificationSplit::SequenceClassificationSplit(const SequenceFeatures& features,
                                                         std::vector<int64_t> labels,
                                                         std::vector<float> float_labels,
                                                         SequenceClassificationOptions options)
    : features_(features),
      labels_(std::move(labels)),
      float_labels_(std::move(float_labels)),
      o_(std::move(options)) {
  const int64_t n = features_.size();
  CT_CHECK(o_.num_labels > 0, "sequence classification: num_labels ", o_.num_labels, " (expected > 0)");
  if (o_.kind == LabelKind::single_label) {
    CT_CHECK(labels_.empty() || static_cast<int64_t>(labels_.size()) == n,
             "sequence classification: ", labels_.size(), " labels for ", n, " features");
    for (size_t i = 0; i < labels_.size(); ++i)
      CT_CHECK(labels_[i] >= -1 && labels_[i] < o_.num_labels, "example ", i, " has label id ", labels_[i],
               " (expected 0..", o_.num_labels - 1, ", or -1 for none)");
    // GLUE's test splits label every example -1: such a split is predicted, not scored (run_glue drops its
    // label column).
    labelled_ =
        !labels_.empty() && std::all_of(labels_.begin(), labels_.end(), [](int64_t l) { return l >= 0; });
  } else {
    const int64_t per = o_.kind == LabelKind::regression ? 1 : o_.num_labels;
    CT_CHECK(o_.kind != LabelKind::regression || o_.num_labels == 1, "regression: num_labels must be 1, got ",
             o_.num_labels);
    CT_CHECK(float_labels_.empty() || static_cast<int64_t>(float_labels_.size()) == n * per,
             "sequence classification: ", float_labels_.size(), " label values for ", n, " features x ", per);
    labelled_ = !float_labels_.empty();
  }
  for (int64_t i = 0; i < n; ++i)
    CT_CHECK(feature_length(i) <= o_.max_seq_length, "feature ", i, " has ", feature_length(i),
             " tokens, more than --max_seq_length ", o_.max_seq_length);
}

int64_t SequenceClassificationSplit::feature_length(int64_t i) const {
  return static_cast<int64_t>(features_.input_ids[static_cast<size_t>(i)].size());
}

train::CollatedBatch SequenceClassificationSplit::collate(std::span<const int64_t> idx, bool labels) const {
  struct Storage {
    std::vector<int32_t> ids, types, mask, lens, labels;
    std::vector<float> float_labels;
  };
  auto s = std::make_shared<Storage>();
  const auto B = static_cast<int64_t>(idx.size());
  train::CollatedBatch out;
  if (packed()) {
    for (int64_t f : idx) {
      const auto& ids = features_.input_ids[static_cast<size_t>(f)];
      const auto& types = features_.token_type_ids[static_cast<size_t>(f)];
      s->ids.insert(s->ids.end(), ids.begin(), ids.end());
      s->types.insert(s->types.end(), types.begin(), types.end());
      s->lens.push_back(static_cast<int32_t>(ids.size()));
      out.real_lengths.push_back(static_cast<int64_t>(ids.size()));
    }
  } else {
    const int64_t T = o_.max_seq_length;
    s->ids.assign(static_cast<size_t>(B * T), o_.pad_token_id);
    s->types.assign(static_cast<size_t>(B * T), 0);
    s->mask.assign(static_cast<size_t>(B * T), 0);
    for (int64_t r = 0; r < B; ++r) {
      const auto& ids = features_.input_ids[static_cast<size_t>(idx[r])];
      const auto& types = features_.token_type_ids[static_cast<size_t>(idx[r])];
      std::copy(ids.begin(), ids.end(), s->ids.begin() + r * T);
      std::copy(types.begin(), types.end(), s->types.begin() + r * T);
      std::fill_n(s->mask.begin() + r * T, ids.size(), 1);
      out.real_lengths.push_back(static_cast<int64_t>(ids.size()));
    }
  }
  out.batch.B = B;
  out.batch.T = o_.max_seq_length;
  out.batch.input_ids = s->ids.data();
  out.batch.token_type_ids = s->types.data();
  out.batch.attention_mask = packed() ? nullptr : s->mask.data();
  out.batch.seq_lens = packed() ? s->lens.data() : nullptr;
  if (labels && labelled_) {
    if (o_.kind == LabelKind::single_label) {
      for (int64_t f : idx) s->labels.push_back(static_cast<int32_t>(labels_[static_cast<size_t>(f)]));
      out.batch.labels = s->labels.data();
    } else {
      const int64_t per = o_.kind == LabelKind::regression ? 1 : o_.num_labels;
      for (int64_t f : idx)
        s->float_labels.insert(s->float_labels.end(), float_labels_.begin() + f * per,
                               float_labels_.begin() + (f + 1) * per);
      out.batch.float_labels = s->float_labels.data();
    }
  }
  out.positions = static_cast<int64_t>(s->ids.size());
  out.storage = s;
  return out;
}

void SequenceClassificationSplit::prediction_rows(const train::CollatedBatch& batch,
                                                  const std::vector<float>& logits, float* rows) const {
  const int64_t n = batch.batch.B * o_.num_labels;
  CT_CHECK(static_cast<int64_t>(logits.size()) == n, "sequence classification: the model gave ",
           logits.size(), " logits for ", batch.batch.B, " rows x ", o_.num_labels, " labels");
  std::copy_n(logits.data(), n, rows);
}

std::vector<int64_t> SequenceClassificationSplit::predicted_ids(const std::vector<float>& rows) const {
  const int64_t L = o_.num_labels, n = static_cast<int64_t>(rows.size()) / L;
  std::vector<int64_t> out;
  for (int64_t i = 0; i < n; ++i) {
    const float* r = rows.data() + i * L;
    if (o_.kind == LabelKind::multi_label) {
      for (int64_t k = 0; k < L; ++k) out.push_back(r[k] > 0 ? 1 : 0);
    } else {
      out.push_back(std::max_element(r, r + L) - r);  // the first maximum, as numpy.argmax
    }
  }
  return out;
}

nlohmann::json SequenceClassificationSplit::score(const std::vector<float>& rows, const std::string& split,
                                                  bool write_files, const std::string& output_dir) const {
  Metrics m;
  if (o_.kind == LabelKind::regression) {
    if (labelled_)
      m = o_.metric_name.empty() ? glue_regression_metrics(o_.task_name, rows, float_labels_)
                                 : evaluate_regression_metric(o_.metric_name, rows, float_labels_);
    if (write_files && split == "predict")
      fs::write_file_atomic((std::filesystem::path(output_dir) / o_.predict_file_name).string(),
                            predict_results_regression(rows));
  } else {
    const auto pred = predicted_ids(rows);
    if (labelled_) {
      if (o_.kind == LabelKind::multi_label) {
        std::vector<int64_t> cells(float_labels_.begin(), float_labels_.end());
        m = evaluate_multilabel_metric(o_.metric_name.empty() ? "f1" : o_.metric_name, pred, cells,
                                       o_.num_labels);
      } else {
        m = o_.metric_name.empty() ? glue_classification_metrics(o_.task_name, pred, labels_)
                                   : evaluate_classification_metric(o_.metric_name, pred, labels_);
      }
    }
    if (write_files && split == "predict") {
      CT_CHECK(static_cast<int64_t>(o_.label_list.size()) == o_.num_labels, "the label list has ",
               o_.label_list.size(), " names for ", o_.num_labels, " labels");
      fs::write_file_atomic((std::filesystem::path(output_dir) / o_.predict_file_name).string(),
                            o_.kind == LabelKind::multi_label
                                ? predict_results_multilabel(pred, o_.label_list)
                                : predict_results_classes(pred, o_.label_list));
    }
  }
  return metrics_to_json(m, "");
}

}  // namespace ct::tasks
