// run_ner.py's labels: word-level tags onto tokens through the tokenizer's word ids (the first sub-token of
// each word carries the word's label, the others -100, or with --label_all_tokens the word's label with B-
// turned into I- when the label list has that I- label), and back from token predictions to tag sequences for
// seqeval (positions labelled -100 dropped), with run_ner's result keys.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "tasks/metrics/glue_metric.h"
#include "tasks/metrics/seqeval.h"

namespace ct::tasks {

constexpr int64_t kIgnoreIndex = -100;  // CrossEntropyLoss's ignore_index: no loss, no score
constexpr int64_t kNoWord = -1;         // a token that belongs to no word (special tokens, padding)

// For each label id, the id its sub-tokens get with --label_all_tokens: the id of "I-X" for "B-X" when the
// list has it (every "B-" in the name replaced, as str.replace does), else the label itself.
std::vector<int64_t> b_to_i_labels(const std::vector<std::string>& label_list);

// Token labels for one sequence: `word_ids` per token (kNoWord for special tokens), `word_labels` the
// word-level label ids. Fails naming the token when a word id has no label (a tokenizer/words mismatch).
std::vector<int64_t> align_labels_with_tokens(std::span<const int64_t> word_ids,
                                              std::span<const int64_t> word_labels, bool label_all_tokens,
                                              std::span<const int64_t> b_to_i);

// seqeval's inputs from one row per sequence of predicted ids and token labels: tags of the positions whose
// label is not kIgnoreIndex, as label names.
struct TagPairs {
  TagSequences predictions, references;
};
TagPairs tags_for_scoring(const std::vector<std::vector<int64_t>>& predicted_ids,
                          const std::vector<std::vector<int64_t>>& label_ids,
                          const std::vector<std::string>& label_list);

// run_ner's compute_metrics: {precision, recall, f1, accuracy} from the overall scores, or with
// --return_entity_level_metrics every entry flattened: {TYPE}_precision, {TYPE}_recall, {TYPE}_f1,
// {TYPE}_number for each type, then overall_precision, overall_recall, overall_f1, overall_accuracy.
Metrics ner_metrics(const SeqevalScores& scores, bool entity_level);

// The text of run_ner's predictions.txt (--do_predict): each sentence's predicted tags joined by spaces, a
// line each.
std::string ner_predictions_text(const TagSequences& predictions);

}  // namespace ct::tasks
