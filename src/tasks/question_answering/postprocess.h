// From start/end logits per feature to an answer per example, as HF utils_qa.postprocess_qa_predictions:
// per example over all its features, the top n_best_size start and end indices, invalid spans dropped
// (outside the context, end < start, longer than max_answer_length), score = start + end logit, the best
// n_best_size kept, text cut from the context by the token offsets, "empty" when nothing survives, softmax
// over the scores; SQuAD v2 adds the null answer (min over features of start[0] + end[0]) and answers ""
// when null score - best span score > null_score_diff_threshold.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "tasks/question_answering/qa_features.h"
#include "tasks/question_answering/squad.h"

namespace ct::tasks {

struct PostprocessOptions {
  int64_t n_best_size = 20;
  int64_t max_answer_length = 30;
  bool version_2_with_negative = false;
  double null_score_diff_threshold = 0.0;
};

struct Candidate {
  std::string text;
  float start_logit = 0;
  float end_logit = 0;
  float probability = 0;
};

struct ExamplePrediction {
  std::string id;
  std::string text;              // the answer ("" for no answer under v2)
  std::vector<Candidate> nbest;  // best first, as eval_nbest_predictions.json lists them
  double null_score_diff = 0;    // v2 only: null score - best non-null start - end logit
};

// start_logits / end_logits: [features.size(), seq_len] row-major, row f for feature f (seq_len = the padded
// length the model saw; HF pads eval rows of different length with -100, callers may do the same).
std::vector<ExamplePrediction> postprocess_qa_predictions(const std::vector<Example>& examples,
                                                          const FeatureSet& features,
                                                          std::span<const float> start_logits,
                                                          std::span<const float> end_logits, int64_t seq_len,
                                                          const PostprocessOptions& options);

// Writes {prefix}_predictions.json ({id: text}), {prefix}_nbest_predictions.json ({id: [{start_logit,
// end_logit, text, probability}]}) and, for v2, {prefix}_null_odds.json ({id: score_diff}) into `dir`,
// atomically, as HF's json.dumps(indent=4) (ASCII-escaped) plus a newline.
void write_predictions(const std::vector<ExamplePrediction>& predictions, const std::string& dir,
                       const std::string& prefix, bool version_2_with_negative);

}  // namespace ct::tasks
