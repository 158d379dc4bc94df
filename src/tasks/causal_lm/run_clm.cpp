#include "tasks/causal_lm/run_clm.h"

#include <cmath>
#include <limits>
#include <memory>

#include "core/error.h"
#include "core/fs.h"
#include "core/log.h"
#include "model/checkpoint.h"
#include "model/decoder_io.h"
#include "tasks/cached_features.h"
#include "tasks/causal_lm/causal_lm_split.h"
#include "tasks/causal_lm/clm_model.h"
#include "tasks/group_texts.h"
#include "tasks/masked_lm/mlm_features.h"
#include "tasks/text_splits.h"
#include "train/encoder_loader.h"
#include "train/model_source.h"
#include "train/run_setup.h"

namespace ct::tasks {
namespace {

using Blocks = std::vector<std::vector<int32_t>>;

// The split's blocks through its feature cache (tasks/cached_features.h), keyed by the texts and block_size.
Blocks cached_blocks(const SplitCache& cache, const data::DatasetTable& table, const std::string& column,
                     int64_t block_size, text::HfTokenizer& tok) {
  const std::vector<std::string> texts = texts_of(table, column);
  Hasher key = feature_key(cache, "clm-v1");
  key.u64(static_cast<uint64_t>(block_size)).u64(kMapBatchSize).u64(texts.size());
  for (const auto& t : texts) key.str(t);
  return cached_features<Blocks>(
      cache, key.digest(),
      [&] {
        ShortBatchRule rule;
        rule.fail_flag = "--block_size";
        rule.source = table.source;
        Blocks out;
        for (auto& c : group_texts(tokenize_plain(tok, texts), block_size, kMapBatchSize, rule))
          out.push_back(std::move(c.input_ids));
        return out;
      },
      [](const Blocks& b) {
        data::FeatureColumns c;
        c.add("input_ids", Blocks(b));
        return c;
      },
      [](data::FeatureColumns c, const std::string& path) { return c.take("input_ids", path); },
      [](const Blocks& b) { return static_cast<int64_t>(b.size()); });
}

struct Prepared {
  Blocks blocks;
  std::unique_ptr<CausalLmSplit> split;
};

std::unique_ptr<Prepared> prepare(const FeatureCache& cache, const data::DatasetTable& table,
                                  const std::string& column, int64_t max_samples, const std::string& what,
                                  int64_t block_size, text::HfTokenizer& tok) {
  auto p = std::make_unique<Prepared>();
  p->blocks = cached_blocks(split_cache(&cache, table), table, column, block_size, tok);
  // select(range(min(len, max_samples))) after grouping, as run_clm.
  if (max_samples >= 0 && static_cast<int64_t>(p->blocks.size()) > max_samples)
    p->blocks.resize(static_cast<size_t>(max_samples));
  if (p->blocks.empty())
    fail(what, ": ", table.source, " (", table.num_rows(), " rows) yields no block of --block_size ",
         block_size, " tokens");
  p->split = std::make_unique<CausalLmSplit>(p->blocks, block_size);
  return p;
}

}  // namespace

int64_t clm_block_size(int64_t requested, int64_t model_max_length, int64_t max_positions,
                       std::vector<std::string>* warnings) {
  const int64_t mml = model_max_length > 0 ? model_max_length : std::numeric_limits<int64_t>::max();
  const std::string mml_text = model_max_length > 0 ? std::to_string(model_max_length) : "1e30";
  int64_t b;
  if (requested <= 0) {
    b = mml;
    const int64_t maxpos = max_positions > 0 ? max_positions : 1024;
    if (b > maxpos) {
      b = std::min<int64_t>(1024, maxpos);
      warnings->push_back(str("The tokenizer picked seems to have a very large `model_max_length` (",
                              mml_text, "). Using block_size=", b,
                              " instead. You can change that default value by passing --block_size xxx."));
    }
  } else {
    if (requested > mml)
      warnings->push_back(str("The block_size passed (", requested,
                              ") is larger than the maximum length for the model (", mml_text,
                              "). Using block_size=", mml, "."));
    b = std::min(requested, mml);
  }
  if (b > 8192)
    warnings->push_back(
        str("block_size resolved to ", b,
            " tokens per block: every block is one sequence of that length (pass --block_size "
            "for shorter ones)"));
  return b;
}

train::RunResult run_clm(ClmArguments args, const std::vector<std::string>& argv,
                         const train::DistContext& dist) {
  auto& t = args.training;
  auto& d = args.data;
  const std::string resume = train::begin_task_run(t, argv, dist, args.notes);

  RawTextSplits raw = read_script_text_splits(d, t, args.model, dist);

  // Config: a model folder's (or --config_name's), or CONFIG_MAPPING[--model_type]() from scratch.
  train::ModelArguments local = train::localize_model_sources(args.model, dist);
  const bool pretrained = !local.model_name_or_path.empty();
  model::DecoderConfig config;
  if (!local.config_name.empty()) {
    config = model::load_decoder_config(train::config_json_path("--config_name", local.config_name));
  } else if (pretrained) {
    config =
        model::load_decoder_config(train::config_json_path("--model_name_or_path", local.model_name_or_path));
  } else {
    log::warn("You are instantiating a new config instance from scratch.");
    if (!args.model_extra.config_overrides.empty())
      log::info("Overriding config: ", args.model_extra.config_overrides);
    config = scratch_decoder_config(args.model_extra.model_type, args.model_extra.config_overrides);
  }
  if (local.tokenizer_name.empty() && !pretrained)
    fail(
        "--tokenizer_name: required when training from scratch (run_clm does not build a tokenizer; save one "
        "and pass its folder)");
  model::ModelConfig unbounded;
  unbounded.vocab_size = std::numeric_limits<int64_t>::max();
  text::HfTokenizer tok = train::load_task_tokenizer(local, unbounded);
  const auto tokens = static_cast<int64_t>(tok.vocab_size());

  std::vector<std::string> warnings;
  const int64_t block_size =
      clm_block_size(d.block_size, tok.model_max_length(), config.max_positions, &warnings);
  for (const auto& w : warnings) log::warn(w);

  // The model: seeded init (from scratch: transformers' _init_weights), then the checkpoint's weights.
  auto model = std::make_unique<model::CausalLmModel>(config, block_size);
  model::init_decoder_weights(model->decoder(), static_cast<uint64_t>(t.seed));
  if (pretrained) {
    const std::string weights = model::find_weights_file(local.model_name_or_path);
    const model::LoadReport r = model::load_decoder_weights(model->decoder(), weights);
    for (const auto& s : r.unexpected) log::info("not used from ", weights, ": ", s);
  } else {
    log::info("Training new model from scratch - Total size=", model->num_params(), " params");
  }
  // model.resize_token_embeddings(len(tokenizer)) when the tokenizer outgrows the embeddings.
  if (tokens > config.vocab_size) {
    log::info("resizing the token embeddings from ", config.vocab_size, " to the tokenizer's ", tokens,
              " tokens");
    model = resize_token_embeddings(*model, tokens, block_size, static_cast<uint64_t>(t.seed));
  }
  model->decoder().set_gradient_checkpointing(d.gradient_checkpointing);
  train::broadcast_weights(*model, dist);

  const data::DatasetTable& columns_of = t.do_train ? *raw.train : *raw.validation;
  const std::string column = text_column_name(columns_of);
  const FeatureCache cache = make_feature_cache(tok, args.model.cache_dir, d.overwrite_cache, dist);
  std::unique_ptr<Prepared> train_p, eval_p;
  if (t.do_train)
    train_p = prepare(cache, *raw.train, column, d.max_train_samples, "--do_train", block_size, tok);
  if (t.do_eval)
    eval_p = prepare(cache, *raw.validation, column, d.max_eval_samples, "--do_eval", block_size, tok);
  raw = {};

  // save_pretrained's files beside the weights, in the model folder and every checkpoint: the tokenizer's
  // and generation_config.json.
  const nlohmann::json generation = generation_config(model->config(), local.model_name_or_path);
  train::TaskRunner runner(
      t, *model,
      [&tok, &generation](const std::string& dir) {
        tok.save(dir);
        fs::write_file_atomic(dir + "/generation_config.json", generation.dump(2) + "\n");
      },
      dist);
  runner.dump_eval_features(args.dump_eval_features, eval_p ? eval_p->split.get() : nullptr);
  runner.dump_train_features(args.dump_train_features, train_p ? train_p->split.get() : nullptr);
  auto count = [](const auto& p) { return p ? static_cast<int64_t>(p->blocks.size()) : int64_t{0}; };
  train::RunResult result = runner.train_and_evaluate(
      train_p ? train_p->split.get() : nullptr, count(train_p), eval_p ? eval_p->split.get() : nullptr,
      count(eval_p), resume, [](nlohmann::json& m) {
        // math.exp(eval_loss), inf where Python raises OverflowError (the json files say Infinity, as
        // json.dump writes float("inf")).
        m["perplexity"] = std::exp(m.value("eval_loss", std::numeric_limits<double>::quiet_NaN()));
      });
  if (args.demo && runner.writer() && result.eval_metrics.contains("perplexity"))
    log::info("demo: held-out perplexity ", result.eval_metrics["perplexity"].get<double>(),
              "; chance (a uniform guess over the ", tokens, " tokens) is ", tokens);
  runner.write_model_card(train::dataset_card_info(args.model.model_name_or_path, "text-generation",
                                                   d.dataset_name, d.dataset_config_name));
  return result;
}

}  // namespace ct::tasks
