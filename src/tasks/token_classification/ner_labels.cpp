#include "tasks/token_classification/ner_labels.h"

#include <algorithm>

#include "core/error.h"

namespace ct::tasks {

std::vector<int64_t> b_to_i_labels(const std::vector<std::string>& label_list) {
  std::vector<int64_t> out;
  for (size_t i = 0; i < label_list.size(); ++i) {
    const std::string& label = label_list[i];
    int64_t to = static_cast<int64_t>(i);
    if (label.rfind("B-", 0) == 0) {
      std::string as_i = label;
      for (size_t at = as_i.find("B-"); at != std::string::npos; at = as_i.find("B-", at + 2)) as_i[at] = 'I';
      auto it = std::find(label_list.begin(), label_list.end(), as_i);
      if (it != label_list.end()) to = it - label_list.begin();
    }
    out.push_back(to);
  }
  return out;
}

std::vector<int64_t> align_labels_with_tokens(std::span<const int64_t> word_ids,
                                              std::span<const int64_t> word_labels, bool label_all_tokens,
                                              std::span<const int64_t> b_to_i) {
  std::vector<int64_t> out;
  out.reserve(word_ids.size());
  int64_t previous = kNoWord;
  for (size_t t = 0; t < word_ids.size(); ++t) {
    const int64_t w = word_ids[t];
    if (w == kNoWord) {
      out.push_back(kIgnoreIndex);
    } else {
      CT_CHECK(w >= 0 && w < static_cast<int64_t>(word_labels.size()), "token ", t, " belongs to word ", w,
               " but the example has ", word_labels.size(), " word label(s) (expected one label per word)");
      const int64_t label = word_labels[static_cast<size_t>(w)];
      if (w != previous) {
        out.push_back(label);
      } else if (label_all_tokens) {
        CT_CHECK(label >= 0 && label < static_cast<int64_t>(b_to_i.size()), "word ", w, " has label id ",
                 label, " outside the ", b_to_i.size(), " labels");
        out.push_back(b_to_i[static_cast<size_t>(label)]);
      } else {
        out.push_back(kIgnoreIndex);
      }
    }
    previous = w;
  }
  return out;
}

TagPairs tags_for_scoring(const std::vector<std::vector<int64_t>>& predicted_ids,
                          const std::vector<std::vector<int64_t>>& label_ids,
                          const std::vector<std::string>& label_list) {
  CT_CHECK(predicted_ids.size() == label_ids.size(), "ner predictions: ", predicted_ids.size(), " rows for ",
           label_ids.size(), " label rows");
  auto name = [&](int64_t id, size_t row) -> const std::string& {
    CT_CHECK(id >= 0 && id < static_cast<int64_t>(label_list.size()), "ner predictions: row ", row,
             " has label id ", id, " (expected 0..", label_list.size() - 1, ")");
    return label_list[static_cast<size_t>(id)];
  };
  TagPairs out;
  for (size_t r = 0; r < label_ids.size(); ++r) {
    CT_CHECK(predicted_ids[r].size() >= label_ids[r].size(), "ner predictions: row ", r, " has ",
             predicted_ids[r].size(), " predictions for ", label_ids[r].size(), " labels");
    auto& p = out.predictions.emplace_back();
    auto& l = out.references.emplace_back();
    for (size_t t = 0; t < label_ids[r].size(); ++t) {
      if (label_ids[r][t] == kIgnoreIndex) continue;
      p.push_back(name(predicted_ids[r][t], r));
      l.push_back(name(label_ids[r][t], r));
    }
  }
  return out;
}

Metrics ner_metrics(const SeqevalScores& scores, bool entity_level) {
  Metrics m;
  if (!entity_level) {
    m.push_back({"precision", scores.overall_precision});
    m.push_back({"recall", scores.overall_recall});
    m.push_back({"f1", scores.overall_f1});
    m.push_back({"accuracy", scores.overall_accuracy});
    return m;
  }
  for (const auto& [type, s] : scores.per_type) {
    m.push_back({type + "_precision", s.precision});
    m.push_back({type + "_recall", s.recall});
    m.push_back({type + "_f1", s.f1});
    m.push_back({type + "_number", static_cast<double>(s.number), true});
  }
  m.push_back({"overall_precision", scores.overall_precision});
  m.push_back({"overall_recall", scores.overall_recall});
  m.push_back({"overall_f1", scores.overall_f1});
  m.push_back({"overall_accuracy", scores.overall_accuracy});
  return m;
}

std::string ner_predictions_text(const TagSequences& predictions) {
  std::string out;
  for (const auto& sentence : predictions) {
    for (size_t i = 0; i < sentence.size(); ++i) out += (i ? " " : "") + sentence[i];
    out += '\n';
  }
  return out;
}

}  // namespace ct::tasks
