// The official SQuAD scores, as HF `evaluate` computes them: v1.1 (exact_match, f1) and v2.0 (exact, f1,
// total, HasAns_*, NoAns_*, best_exact(_thresh), best_f1(_thresh)). Answers are normalized by lower-casing,
// dropping ASCII punctuation (Python string.punctuation), dropping the whole words a/an/the and collapsing
// whitespace; each question scores the max over its gold answers; totals are percentages.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tasks/metrics/metric.h"

namespace ct::tasks {

struct GoldAnswers {
  std::string id;
  std::vector<std::string> texts;  // empty: unanswerable (v2)
};

// id -> predicted text.
using PredictionMap = std::unordered_map<std::string, std::string>;

std::string normalize_answer(std::string_view s);
// Per-question scores (0/1 and [0,1]) against one gold answer, v1 rules (F1 = 0 when a side is empty).
double exact_match_score(std::string_view prediction, std::string_view gold);
double f1_score(std::string_view prediction, std::string_view gold);

// v1.1: {exact_match, f1}. A question without a prediction scores 0; one without gold answers is an error
// (it needs --version_2_with_negative), naming its id.
Metrics squad_v1(const std::vector<GoldAnswers>& gold, const PredictionMap& predictions);

// v2.0 with HF's no_answer_probability 0 for every question unless `na_probs` is given, and
// no_answer_threshold 1.0. Questions without a prediction are left out of the totals, as the official script.
Metrics squad_v2(const std::vector<GoldAnswers>& gold, const PredictionMap& predictions,
                 const std::unordered_map<std::string, double>* na_probs = nullptr,
                 double no_answer_threshold = 1.0);

}  // namespace ct::tasks
