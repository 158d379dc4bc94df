// A small generated SQuAD set (train.json, dev.json) and an HF model folder (vocab + config.json of the given
// shape) under `root`: the starting point of the trainer tests that run real training.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "core/fs.h"
#include "model/config.h"
#include "tasks/question_answering/squad_demo_data.h"
#include "text/tokenizer.h"

namespace ct::train::test {

inline void write_demo_workspace(const std::string& root, uint64_t seed, int64_t train_paragraphs,
                                 int64_t eval_paragraphs, model::ModelConfig shape) {
  std::filesystem::remove_all(root);
  std::filesystem::create_directories(root + "/model");
  tasks::DemoOptions o;
  o.seed = seed;
  o.train_paragraphs = train_paragraphs;
  o.eval_paragraphs = eval_paragraphs;
  auto demo = tasks::generate_demo_data(o);
  tasks::write_squad_json(demo.train, root + "/train.json");
  tasks::write_squad_json(demo.eval, root + "/dev.json");
  auto tok = text::Tokenizer::from_vocab(tasks::build_demo_vocab(demo.train));
  tok.save(root + "/model");
  shape.vocab_size = tok.vocab_size();
  fs::write_file_atomic(root + "/model/config.json", model::config_to_json(shape));
}

}  // namespace ct::train::test
