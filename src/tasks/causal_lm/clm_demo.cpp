#include "tasks/causal_lm/clm_demo.h"

#include "core/fs.h"
#include "core/log.h"
#include "model/decoder_io.h"
#include "tasks/causal_lm/clm_model.h"
#include "tasks/task_demo.h"
#include "tasks/word_vocab.h"
#include "text/tokenizer.h"

namespace ct::tasks {
namespace {

const std::vector<std::string> kRing = {"one",   "two",   "three", "four", "five",   "six",
                                        "seven", "eight", "nine",  "ten",  "eleven", "twelve"};

void clm_files(ClmArguments& a, const std::string& dir) {
  auto& d = a.data;
  if (!d.dataset_name.empty() || !d.train_file.empty() || !d.validation_file.empty()) return;
  d.train_file = dir + "/train.txt";
  d.validation_file = dir + "/validation.txt";
}

void write_clm(const ClmArguments& a, const std::string& dir) {
  create_demo_folder(dir);
  const int64_t ring = static_cast<int64_t>(kRing.size());
  for (uint64_t split = 0; split < 2; ++split) {
    DemoRng rng(static_cast<uint64_t>(a.training.seed), split);
    std::string text;
    for (int64_t i = 0, n = split ? kDemoEvalExamples : kDemoTrainExamples; i < n; ++i) {
      std::vector<std::string> line;
      for (int64_t k = 0, start = rng.below(ring), len = rng.between(12, 30); k < len; ++k)
        line.push_back(kRing[static_cast<size_t>((start + k) % ring)]);
      text += join_words(line) + "\n";
    }
    fs::write_file_atomic(dir + (split ? "/validation.txt" : "/train.txt"), text);
  }
  const auto tok = text::Tokenizer::from_vocab(build_word_vocab({join_words(kRing)}));
  tok.save(dir);
  const model::DecoderConfig config = scratch_decoder_config(
      "llama", str("vocab_size=", tok.vocab_size(),
                   ",hidden_size=64,intermediate_size=128,num_hidden_layers=2,num_attention_heads=4,"
                   "num_key_value_heads=2,head_dim=16,max_position_embeddings=128,tie_word_embeddings=true"));
  fs::write_file_atomic(dir + "/config.json", model::decoder_config_text(config));
  log::info("demo: vocab ", tok.vocab_size(), " words (chance perplexity ", tok.vocab_size(), "), a ",
            config.num_layers, "-layer Llama of hidden ", config.hidden_size, " from random init, in ", dir);
}

}  // namespace

const TaskDemo<ClmDataArguments>& clm_demo() {
  static const TaskDemo<ClmDataArguments> d{"perplexity",
                                            [](ClmArguments& a) {
                                              a.data.block_size = 32;
                                              a.training.per_device_eval_batch_size = 32;
                                            },
                                            clm_files, write_clm};
  return d;
}

}  // namespace ct::tasks
