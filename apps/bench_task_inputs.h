// The inputs of `coretrain bench tokenize --task ...`, each the rows a task command hands its feature
// builder, read from one file per task: qa a SQuAD file (as `coretrain qa` reads it); glue JSON lines with
// "sentence1" and optionally "sentence2"; ner JSON lines with "tokens" (a list of words); swag JSON lines
// with "sent1", "sent2", "ending0".."ending3" and optionally "label"; mlm plain text, one text per line
// (run_mlm's txt files). bench/tokenize_tasks_vs_hf.py writes such files and gives HF's tokenizer the same
// ones.
#pragma once

#include <string>
#include <vector>

#include "tasks/multiple_choice/multiple_choice_features.h"
#include "tasks/question_answering/squad.h"
#include "tasks/sequence_classification/sequence_features.h"

namespace ct::app {

struct BenchTaskInputs {
  std::vector<tasks::Example> qa;
  std::vector<tasks::TextPair> pairs;
  std::vector<std::vector<std::string>> words;
  std::vector<std::string> texts;
  std::vector<tasks::MultipleChoiceExample> choices;
  int64_t skipped = 0;  // qa: examples read_squad skipped
  int64_t size() const;
};

// `task` is one of qa, glue, ner, mlm, swag. Fails naming the file, line and field on bad input.
BenchTaskInputs read_bench_task_inputs(const std::string& task, const std::string& path);

}  // namespace ct::app
