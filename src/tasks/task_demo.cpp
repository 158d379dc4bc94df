#include "tasks/task_demo.h"

#include <filesystem>

#include "core/error.h"
#include "core/fs.h"
#include "core/log.h"
#include "tasks/word_vocab.h"
#include "text/tokenizer.h"

namespace ct::tasks {

const std::vector<std::string>& demo_filler_words() {
  static const std::vector<std::string> kWords = {
      "the",   "a",     "of",     "and",   "to",    "in",     "on",    "with",   "for",    "at",
      "from",  "by",    "about",  "over",  "after", "before", "under", "near",   "some",   "many",
      "old",   "new",   "small",  "large", "quick", "slow",   "warm",  "cold",   "bright", "quiet",
      "walks", "talks", "reads",  "finds", "makes", "takes",  "sees",  "keeps",  "brings", "leaves",
      "road",  "house", "garden", "river", "table", "window", "paper", "letter", "market", "bridge"};
  return kWords;
}

std::vector<std::string> demo_filler(DemoRng& rng, int64_t n) {
  std::vector<std::string> out;
  for (int64_t i = 0; i < n; ++i) out.push_back(rng.pick(demo_filler_words()));
  return out;
}

std::string join_words(const std::vector<std::string>& words) {
  std::string s;
  for (const auto& w : words) s += (s.empty() ? "" : " ") + w;
  return s;
}

void create_demo_folder(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) fail("--output_dir: cannot create ", dir, " (", ec.message(), ")");
}

void write_json_lines(const std::string& path, const std::vector<nlohmann::ordered_json>& rows) {
  std::string s;
  for (const auto& r : rows) s += r.dump() + "\n";
  fs::write_file_atomic(path, s);
}

model::ModelConfig demo_model_config(int64_t vocab_size) {
  model::ModelConfig c;
  c.model_type = "bert";
  c.vocab_size = vocab_size;
  c.hidden_size = 64;
  c.num_hidden_layers = 2;
  c.num_attention_heads = 4;
  c.intermediate_size = 128;
  c.max_position_embeddings = 256;
  c.type_vocab_size = 2;
  c.hidden_dropout_prob = 0.1;
  c.attention_probs_dropout_prob = 0.1;
  return c;
}

void write_demo_model(const std::string& dir, const std::vector<std::string>& texts) {
  const auto tok = text::Tokenizer::from_vocab(build_word_vocab(texts));
  tok.save(dir);
  auto config = demo_model_config(tok.vocab_size());
  config.initializer_range = 0.1;
  config.hidden_dropout_prob = 0;
  config.attention_probs_dropout_prob = 0;
  fs::write_file_atomic(dir + "/config.json", model::config_to_json(config));
  log::info("demo: vocab ", tok.vocab_size(), " words, a ", config.num_hidden_layers,
            "-layer BERT of hidden ", config.hidden_size, " from random init, in ", dir);
}

}  // namespace ct::tasks
