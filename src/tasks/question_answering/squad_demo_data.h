// The built-in demo's data: seeded, templated factual paragraphs in SQuAD form. Each paragraph describes a
// few people; every person gets several facts (birth city, home city, birth year, year they started working,
// profession, employer, favorite color, car color, number of cats, number of books), each told by one of
// several sentence templates, all sentences shuffled. Facts of the same entity type appear for several people
// under different relations (birth vs home city, birth vs start year, favorite vs car color, cats vs books),
// so the question's wording picks the answer and neither a position nor a type guess does. By default a
// relation appears once per paragraph, which a 2-layer model learns quickly;
// `repeat_relations` lets several people share one, so the person's name must be matched too (slower to
// learn). Train and held-out sets use disjoint paragraphs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tasks/question_answering/squad.h"

namespace ct::tasks {

struct DemoOptions {
  uint64_t seed = 42;
  int64_t train_paragraphs = 2000;
  int64_t eval_paragraphs = 200;
  int64_t min_people = 2;  // per paragraph
  int64_t max_people = 2;
  int64_t min_facts = 2;  // per person
  int64_t max_facts = 2;
  // Draw relations in same-kind pairs, so most questions have a distractor of their answer's type.
  bool paired_relations = false;
  bool repeat_relations = false;  // let several people of a paragraph share a relation (names then matter)
  int64_t questions_per_paragraph = 4;
};

struct DemoData {
  std::vector<Example> train;
  std::vector<Example> eval;
};

// Throws ct::Error on options out of range (naming the option).
DemoData generate_demo_data(const DemoOptions& options);

// The demo's vocabulary: tasks/word_vocab.h's over the examples' contexts and questions.
std::vector<std::string> build_demo_vocab(const std::vector<Example>& examples);

// SQuAD v1.1 nested JSON (v2's is_impossible written when any example has it); consecutive examples sharing a
// context form one paragraph, consecutive paragraphs sharing a title one article. Written atomically.
std::string squad_json(const std::vector<Example>& examples);
void write_squad_json(const std::vector<Example>& examples, const std::string& path);

}  // namespace ct::tasks
