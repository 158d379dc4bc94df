#include "tasks/causal_lm/causal_lm_split.h"

#include <algorithm>

#include "core/error.h"
#include "tasks/metrics/classification_metrics.h"

namespace ct::tasks {

CausalLmSplit::CausalLmSplit(const std::vector<std::vector<int32_t>>& blocks, int64_t block_size)
    : blocks_(blocks), block_size_(block_size) {
  for (size_t i = 0; i < blocks_.size(); ++i)
    CT_CHECK(static_cast<int64_t>(blocks_[i].size()) == block_size_, "causal LM: block ", i, " has ",
             blocks_[i].size(), " tokens, not --block_size ", block_size_);
}

train::CollatedBatch CausalLmSplit::collate(std::span<const int64_t> features, bool labels) const {
  struct Storage {
    std::vector<int32_t> ids, lens, labels;
  };
  auto s = std::make_shared<Storage>();
  const int64_t T = block_size_;
  train::CollatedBatch out;
  for (const int64_t f : features) {
    const std::vector<int32_t>& b = blocks_[static_cast<size_t>(f)];
    s->ids.insert(s->ids.end(), b.begin(), b.end());
    if (labels) {
      s->labels.insert(s->labels.end(), b.begin() + 1, b.end());
      s->labels.push_back(-100);
    }
    s->lens.push_back(static_cast<int32_t>(T));
    out.real_lengths.push_back(T);
  }
  out.batch.B = static_cast<int64_t>(features.size());
  out.batch.T = T;
  out.batch.input_ids = s->ids.data();
  out.batch.seq_lens = s->lens.data();
  out.batch.labels = labels ? s->labels.data() : nullptr;
  out.positions = static_cast<int64_t>(s->ids.size());
  out.storage = s;
  return out;
}

void CausalLmSplit::prediction_rows(const train::CollatedBatch& batch, const std::vector<float>& logits,
                                    float* rows) const {
  // The causal-LM model's logits() is each token's argmax, [tokens] in the batch's order.
  const int64_t n = batch.batch.B * block_size_;
  CT_CHECK(static_cast<int64_t>(logits.size()) == n, "causal LM: the model gave ", logits.size(),
           " predictions for ", n, " tokens");
  std::copy_n(logits.begin(), n, rows);
}

nlohmann::json CausalLmSplit::score(const std::vector<float>& rows, const std::string& /*split*/,
                                    bool /*write_files*/, const std::string& /*output_dir*/) const {
  std::vector<int64_t> predictions, references;
  const int64_t T = block_size_;
  for (int64_t i = 0; i < num_features(); ++i) {
    const std::vector<int32_t>& b = blocks_[static_cast<size_t>(i)];
    for (int64_t t = 0; t + 1 < T; ++t) {
      predictions.push_back(static_cast<int64_t>(rows[static_cast<size_t>(i * T + t)]));
      references.push_back(b[static_cast<size_t>(t + 1)]);
    }
  }
  nlohmann::json out = nlohmann::json::object();
  if (!references.empty()) out["accuracy"] = accuracy(predictions, references);
  return out;
}

}  // namespace ct::tasks
