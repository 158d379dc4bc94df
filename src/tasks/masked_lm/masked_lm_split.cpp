#include "tasks/masked_lm/masked_lm_split.h"

#include <algorithm>

#include "core/error.h"
#include "tasks/metrics/classification_metrics.h"

namespace ct::tasks {

MaskedLmSplit::MaskedLmSplit(const std::vector<TokenChunk>& chunks, MaskedLmOptions options)
    : chunks_(chunks), o_(std::move(options)) {
  for (size_t i = 0; i < chunks_.size(); ++i)
    CT_CHECK(static_cast<int64_t>(chunks_[i].input_ids.size()) <= o_.max_seq_length, "chunk ", i, " has ",
             chunks_[i].input_ids.size(), " tokens, more than --max_seq_length ", o_.max_seq_length);
}

int64_t MaskedLmSplit::feature_length(int64_t i) const {
  return static_cast<int64_t>(chunks_[static_cast<size_t>(i)].input_ids.size());
}

train::CollatedBatch MaskedLmSplit::collate(std::span<const int64_t> features, bool labels) const {
  return collate(features, labels, train::BatchKey{train::BatchKey::kEvalEpoch, features});
}

void MaskedLmSplit::eval_masked(int64_t i, std::vector<int32_t>* ids, std::vector<int64_t>* labels) const {
  const TokenChunk& c = chunks_[static_cast<size_t>(i)];
  *ids = c.input_ids;
  labels->assign(ids->size(), -100);
  mask_tokens(*ids, c.special_tokens_mask, *labels, o_.masking, train::BatchKey::kEvalEpoch,
              static_cast<uint64_t>(i));
}

train::CollatedBatch MaskedLmSplit::collate(std::span<const int64_t> features, bool /*labels*/,
                                            const train::BatchKey& key) const {
  CT_CHECK(key.positions.size() == features.size(), "masked LM: ", key.positions.size(), " positions for ",
           features.size(), " features");
  struct Storage {
    std::vector<int32_t> ids, types, mask, lens, labels;
  };
  auto s = std::make_shared<Storage>();
  const auto B = static_cast<int64_t>(features.size());
  const int64_t T = o_.max_seq_length;
  train::CollatedBatch out;
  std::vector<int32_t> ids;
  std::vector<int64_t> labels;
  for (int64_t r = 0; r < B; ++r) {
    const TokenChunk& c = chunks_[static_cast<size_t>(features[r])];
    ids = c.input_ids;
    labels.assign(ids.size(), -100);
    // The masks are the labels, so they are drawn whether or not the caller asked for labels.
    mask_tokens(ids, c.special_tokens_mask, labels, o_.masking, key.epoch,
                static_cast<uint64_t>(key.positions[r]));
    const auto len = static_cast<int64_t>(ids.size());
    out.real_lengths.push_back(len);
    if (packed()) {
      s->ids.insert(s->ids.end(), ids.begin(), ids.end());
      s->labels.insert(s->labels.end(), labels.begin(), labels.end());
      s->lens.push_back(static_cast<int32_t>(len));
    } else {
      s->ids.resize(static_cast<size_t>((r + 1) * T), o_.pad_token_id);
      s->labels.resize(static_cast<size_t>((r + 1) * T), -100);
      s->mask.resize(static_cast<size_t>((r + 1) * T), 0);
      std::copy(ids.begin(), ids.end(), s->ids.begin() + r * T);
      std::copy(labels.begin(), labels.end(), s->labels.begin() + r * T);
      std::fill_n(s->mask.begin() + r * T, len, 1);
    }
  }
  s->types.assign(s->ids.size(), 0);
  out.batch.B = B;
  out.batch.T = T;
  out.batch.input_ids = s->ids.data();
  out.batch.token_type_ids = s->types.data();
  out.batch.attention_mask = packed() ? nullptr : s->mask.data();
  out.batch.seq_lens = packed() ? s->lens.data() : nullptr;
  out.batch.labels = s->labels.data();
  out.positions = static_cast<int64_t>(s->ids.size());
  out.storage = s;
  return out;
}

void MaskedLmSplit::prediction_rows(const train::CollatedBatch& batch, const std::vector<float>& logits,
                                    float* rows) const {
  // The head's logits are [labelled tokens, vocab] in the batch's token order.
  const model::Batch& b = batch.batch;
  const int64_t T = o_.max_seq_length, V = o_.masking.vocab_size;
  int64_t token = 0, masked = 0;
  for (int64_t r = 0; r < b.B; ++r) {
    const int64_t len = batch.real_lengths[static_cast<size_t>(r)];
    float* row = rows + r * T;
    std::fill(row, row + T, -100.0f);
    for (int64_t t = 0; t < len; ++t) {
      if (b.labels[token + t] == -100) continue;
      CT_CHECK((masked + 1) * V <= static_cast<int64_t>(logits.size()), "masked LM: the model gave ",
               logits.size(), " logits, fewer than ", masked + 1, " masked tokens x vocabulary ", V);
      const float* l = logits.data() + masked * V;
      row[t] = static_cast<float>(std::max_element(l, l + V) - l);
      ++masked;
    }
    token += b.seq_lens ? len : T;
  }
}

nlohmann::json MaskedLmSplit::score(const std::vector<float>& rows, const std::string& /*split*/,
                                    bool /*write_files*/, const std::string& /*output_dir*/) const {
  const int64_t T = o_.max_seq_length;
  std::vector<int64_t> predictions, references;
  std::vector<int32_t> ids;
  std::vector<int64_t> labels;
  for (int64_t i = 0; i < num_features(); ++i) {
    eval_masked(i, &ids, &labels);
    for (size_t t = 0; t < labels.size(); ++t) {
      if (labels[t] == -100) continue;
      predictions.push_back(static_cast<int64_t>(rows[static_cast<size_t>(i * T) + t]));
      references.push_back(labels[t]);
    }
  }
  nlohmann::json out = nlohmann::json::object();
  if (!references.empty()) out["accuracy"] = accuracy(predictions, references);
  return out;
}

}  // namespace ct::tasks
