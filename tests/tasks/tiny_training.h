// What the tasks' training tests share: the fixture tokenizer, a tiny BERT and short TrainingArguments.
#pragma once

#include <filesystem>
#include <string>

#include "model/config.h"
#include "text/hf_tokenizer.h"
#include "train/training_args.h"

namespace ct::tasks::test {

// A BERT WordPiece tokenizer.json of 391 tokens (tests/text/data/tokenizers/bert.json).
inline text::HfTokenizer bert_tokenizer() {
  return text::HfTokenizer::from_file(std::string(CORETRAIN_SOURCE_DIR) +
                                      "/tests/text/data/tokenizers/bert.json");
}

// Hidden 32, 2 layers, 2 heads: trains in well under a second a hundred steps.
inline model::ModelConfig tiny_bert(int64_t vocab, int64_t num_labels = 2) {
  model::ModelConfig c;
  c.vocab_size = vocab;
  c.hidden_size = 32;
  c.num_hidden_layers = 2;
  c.num_attention_heads = 2;
  c.intermediate_size = 64;
  c.max_position_embeddings = 64;
  c.num_labels = num_labels;
  return c;
}

// max_steps steps of 16 at `lr` (10% warm-up), no checkpoints, a log line every 40-50 steps, into a fresh
// folder.
inline train::TrainingArguments quick_args(const std::string& name, int64_t max_steps, double lr) {
  train::TrainingArguments t;
  t.output_dir = ::testing::TempDir() + "/" + name;
  std::filesystem::create_directories(t.output_dir);
  t.per_device_train_batch_size = 16;
  t.per_device_eval_batch_size = 32;
  t.learning_rate = lr;
  t.max_steps = max_steps;
  t.warmup_ratio = 0.1;
  t.save_strategy = "no";
  t.logging_steps = static_cast<double>(max_steps / 4);
  t.disable_tqdm = true;
  return t;
}

}  // namespace ct::tasks::test
