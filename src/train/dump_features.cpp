#include "train/dump_features.h"

#include <algorithm>
#include <vector>

#include "train/checkpoint.h"

namespace ct::train {

namespace {

// One collated batch's features appended to `feats`.
void append_features(nlohmann::json& feats, const TaskSplit& split, std::span<const int64_t> idx,
                     const BatchKey& key) {
  const CollatedBatch cb = split.collate(idx, /*labels=*/true, key);
  const model::Batch& b = cb.batch;
  // Row r's token range in the batch's flat arrays.
  std::vector<int64_t> start(static_cast<size_t>(b.B) + 1, 0);
  for (int64_t r = 0; r < b.B; ++r)
    start[static_cast<size_t>(r) + 1] = start[static_cast<size_t>(r)] + (b.seq_lens ? b.seq_lens[r] : b.T);
  auto slice = [&](const int32_t* v, int64_t r) {
    if (!v) return nlohmann::json();
    return nlohmann::json(
        std::vector<int32_t>(v + start[static_cast<size_t>(r)], v + start[static_cast<size_t>(r) + 1]));
  };
  const int64_t per_feature = b.num_choices > 0 ? b.num_choices : 1;
  const bool per_token = split.token_labels();
  for (int64_t f = 0; f < b.B / per_feature; ++f) {
    nlohmann::json rows = nlohmann::json::array();
    for (int64_t c = 0; c < per_feature; ++c) {
      const int64_t r = f * per_feature + c;
      nlohmann::json row = {{"input_ids", slice(b.input_ids, r)},
                            {"token_type_ids", slice(b.token_type_ids, r)}};
      row["attention_mask"] =
          b.attention_mask
              ? slice(b.attention_mask, r)
              : nlohmann::json(std::vector<int32_t>(
                    static_cast<size_t>(start[static_cast<size_t>(r) + 1] - start[static_cast<size_t>(r)]),
                    1));
      if (b.labels && b.num_choices == 0)
        row["labels"] = per_token ? slice(b.labels, r) : nlohmann::json(b.labels[r]);
      rows.push_back(std::move(row));
    }
    nlohmann::json feat = per_feature == 1 ? rows[0] : nlohmann::json{{"choices", rows}};
    if (b.num_choices > 0 && b.labels) feat["labels"] = b.labels[f];
    if (b.float_labels) {
      const int64_t width = static_cast<int64_t>(split.prediction_width());
      feat["labels"] = std::vector<float>(b.float_labels + f * width, b.float_labels + (f + 1) * width);
    }
    feats.push_back(std::move(feat));
  }
}

}  // namespace

void dump_eval_features(const std::string& path, const TaskSplit& split, int64_t eval_batch_size) {
  nlohmann::json feats = nlohmann::json::array();
  const int64_t n = split.num_features();
  for (int64_t b0 = 0; b0 < n; b0 += eval_batch_size) {
    std::vector<int64_t> idx;
    for (int64_t i = b0; i < std::min(n, b0 + eval_batch_size); ++i) idx.push_back(i);
    append_features(feats, split, idx, BatchKey{BatchKey::kEvalEpoch, idx});
  }
  write_json(path, {{"features", feats}}, -1);
}

void dump_train_features(const std::string& path, const TaskSplit& split,
                         const std::vector<data::SampledBatch>& batches, uint64_t epoch) {
  nlohmann::json feats = nlohmann::json::array();
  for (const auto& b : batches) append_features(feats, split, b.indices, BatchKey{epoch, b.positions});
  write_json(path, {{"features", feats}}, -1);
}

}  // namespace ct::train
