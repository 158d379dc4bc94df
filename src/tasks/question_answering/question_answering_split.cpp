#include "tasks/question_answering/question_answering_split.h"

#include <algorithm>

#include "core/error.h"
#include "core/log.h"
#include "tasks/question_answering/postprocess.h"
#include "tasks/question_answering/squad_metrics.h"
#include "train/checkpoint.h"

namespace ct::tasks {

void dump_eval_features(const std::string& path, const QaDataset& eval, int64_t eval_batch_size) {
  nlohmann::json feats = nlohmann::json::array();
  const int64_t n = eval.features.size();
  for (int64_t b0 = 0; b0 < n; b0 += eval_batch_size) {
    std::vector<int64_t> idx;
    for (int64_t i = b0; i < std::min(n, b0 + eval_batch_size); ++i) idx.push_back(i);
    auto b = eval.features.collate(idx);
    for (int64_t r = 0; r < b.batch_size; ++r) {
      const int64_t f = idx[static_cast<size_t>(r)];
      auto row = [&](const std::vector<int32_t>& v) {
        if (v.empty()) return nlohmann::json();
        return nlohmann::json(
            std::vector<int32_t>(v.begin() + r * b.seq_len, v.begin() + (r + 1) * b.seq_len));
      };
      nlohmann::json offsets = nlohmann::json::array();
      for (int64_t t = 0; t < b.seq_len; ++t) {
        auto o = eval.features.offset(f, t);
        offsets.push_back(o ? nlohmann::json({o->begin, o->end}) : nlohmann::json());
      }
      const auto& ex = eval.examples[static_cast<size_t>(eval.features[f].example_index)];
      feats.push_back({{"example_id", ex.id},
                       {"input_ids", row(b.input_ids)},
                       {"token_type_ids", row(b.token_type_ids)},
                       {"attention_mask", row(b.attention_mask)},
                       {"offsets", offsets}});
    }
  }
  nlohmann::json contexts = nlohmann::json::object();
  for (const auto& ex : eval.examples) contexts[ex.id] = ex.context;
  train::write_json(path, {{"features", feats}, {"contexts", contexts}}, -1);
}

QuestionAnsweringSplit::QuestionAnsweringSplit(const QaDataset& ds, const QaDataArguments& args,
                                               bool has_answers)
    : ds_(ds), args_(args), has_answers_(has_answers) {
  for (int64_t i = 0; i < ds_.features.size(); ++i) T_ = std::max(T_, ds_.features.length(i));
  if (ds_.features.options().pad_to_max_length) T_ = std::max(T_, ds_.features.options().max_seq_length);
}

train::CollatedBatch QuestionAnsweringSplit::collate(std::span<const int64_t> features, bool labels) const {
  struct Storage {
    Batch db;
    std::vector<int32_t> start, end;
  };
  auto s = std::make_shared<Storage>();
  // --pad_to_max_length False: no pad rows at all (tokens end to end), rather than HF's per-batch padding.
  s->db = packed() ? ds_.features.collate_packed(features) : ds_.features.collate(features);
  const Batch& b = s->db;
  train::CollatedBatch out;
  out.batch.B = b.batch_size;
  out.batch.T = b.seq_len;
  out.batch.input_ids = b.input_ids.data();
  out.batch.token_type_ids = b.token_type_ids.empty() ? nullptr : b.token_type_ids.data();
  out.batch.attention_mask = b.attention_mask.empty() ? nullptr : b.attention_mask.data();
  out.batch.seq_lens = b.lengths.empty() ? nullptr : b.lengths.data();
  if (labels) {
    s->start.assign(b.start_positions.begin(), b.start_positions.end());
    s->end.assign(b.end_positions.begin(), b.end_positions.end());
    out.batch.start_positions = s->start.data();
    out.batch.end_positions = s->end.data();
  }
  for (int64_t r = 0; r < b.batch_size; ++r) {
    if (!b.lengths.empty()) {
      out.real_lengths.push_back(b.lengths[static_cast<size_t>(r)]);
    } else if (b.attention_mask.empty()) {
      out.real_lengths.push_back(b.seq_len);
    } else {
      int64_t n = 0;
      for (int64_t t = 0; t < b.seq_len; ++t) n += b.attention_mask[static_cast<size_t>(r * b.seq_len + t)];
      out.real_lengths.push_back(n);
    }
  }
  out.positions = static_cast<int64_t>(b.input_ids.size());
  out.storage = s;
  return out;
}

void QuestionAnsweringSplit::prediction_rows(const train::CollatedBatch& batch,
                                             const std::vector<float>& logits, float* rows) const {
  // The span head's logits are [tokens, 2] (start, end) in the batch's token order: rows padded (stride T)
  // or packed (each row its own length).
  const model::Batch& b = batch.batch;
  int64_t from = 0;
  for (int64_t r = 0; r < b.B; ++r) {
    const int64_t len = b.seq_lens ? b.seq_lens[r] : b.T;
    CT_ASSERT(len <= T_);
    float* start = rows + r * 2 * T_;
    float* end = start + T_;
    std::fill(start, start + 2 * T_, -100.f);
    for (int64_t t = 0; t < len; ++t) {
      start[t] = logits[static_cast<size_t>(2 * (from + t))];
      end[t] = logits[static_cast<size_t>(2 * (from + t) + 1)];
    }
    from += len;
  }
}

nlohmann::json QuestionAnsweringSplit::score(const std::vector<float>& rows, const std::string& split,
                                             bool write_files, const std::string& output_dir) const {
  const int64_t n = ds_.features.size();
  std::vector<float> start(static_cast<size_t>(n * T_)), end(static_cast<size_t>(n * T_));
  for (int64_t i = 0; i < n; ++i) {
    std::copy_n(rows.data() + i * 2 * T_, T_, start.data() + i * T_);
    std::copy_n(rows.data() + i * 2 * T_ + T_, T_, end.data() + i * T_);
  }
  PostprocessOptions po;
  po.n_best_size = args_.n_best_size;
  po.max_answer_length = args_.max_answer_length;
  po.version_2_with_negative = args_.version_2_with_negative;
  po.null_score_diff_threshold = args_.null_score_diff_threshold;
  const auto preds = postprocess_qa_predictions(ds_.examples, ds_.features, start, end, T_, po);
  if (write_files) write_predictions(preds, output_dir, split, args_.version_2_with_negative);
  if (!has_answers_) return nlohmann::json::object();
  std::vector<GoldAnswers> gold;
  for (const auto& ex : ds_.examples) {
    GoldAnswers g{ex.id, {}};
    for (const auto& a : ex.answers) g.texts.push_back(a.text);
    gold.push_back(std::move(g));
  }
  PredictionMap pm;
  for (const auto& p : preds) pm[p.id] = p.text;
  return metrics_to_json(args_.version_2_with_negative ? squad_v2(gold, pm) : squad_v1(gold, pm), "");
}

}  // namespace ct::tasks
