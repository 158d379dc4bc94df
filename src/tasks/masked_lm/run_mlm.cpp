#include "tasks/masked_lm/run_mlm.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>

#include "core/error.h"
#include "core/log.h"
#include "data/dataset_table.h"
#include "tasks/cached_features.h"
#include "tasks/config_overrides.h"
#include "tasks/group_texts.h"
#include "tasks/masked_lm/masked_lm_split.h"
#include "tasks/masked_lm/mlm_features.h"
#include "tasks/text_splits.h"
#include "train/encoder_loader.h"
#include "train/model_source.h"
#include "train/run_setup.h"

namespace ct::tasks {
namespace {

using nlohmann::json;

// ---- training from scratch

// The PretrainedConfig defaults of each family (transformers' <Family>Config()), under HF's field names.
json family_defaults(const std::string& type) {
  if (type == "distilbert")
    return json{{"model_type", "distilbert"},
                {"vocab_size", 30522},
                {"max_position_embeddings", 512},
                {"sinusoidal_pos_embds", false},
                {"n_layers", 6},
                {"n_heads", 12},
                {"dim", 768},
                {"hidden_dim", 3072},
                {"dropout", 0.1},
                {"attention_dropout", 0.1},
                {"activation", "gelu"},
                {"initializer_range", 0.02},
                {"qa_dropout", 0.1},
                {"seq_classif_dropout", 0.2},
                {"pad_token_id", 0}};
  json j{{"model_type", type},
         {"vocab_size", 30522},
         {"hidden_size", 768},
         {"num_hidden_layers", 12},
         {"num_attention_heads", 12},
         {"intermediate_size", 3072},
         {"hidden_act", "gelu"},
         {"hidden_dropout_prob", 0.1},
         {"attention_probs_dropout_prob", 0.1},
         {"max_position_embeddings", 512},
         {"type_vocab_size", 2},
         {"initializer_range", 0.02},
         {"layer_norm_eps", 1e-12},
         {"pad_token_id", 0}};
  if (type == "roberta" || type == "xlm-roberta" || type == "camembert") {
    j["pad_token_id"] = 1;
    j["bos_token_id"] = 0;
    j["eos_token_id"] = 2;
  } else if (type == "electra") {
    j["embedding_size"] = 128;
    j["hidden_size"] = 256;
    j["num_attention_heads"] = 4;
    j["intermediate_size"] = 1024;
  }
  return j;
}

// ---- data

// One split's features: its texts through run_mlm's tokenization (mlm_features.h).
std::vector<TokenChunk> tokenize_split(const std::vector<std::string>& texts, bool line_by_line,
                                       int64_t max_seq_length, text::HfTokenizer& tok) {
  return build_mlm_chunks(tok, texts, line_by_line, max_seq_length);
}

// tokenize_split through the split's feature cache (tasks/cached_features.h), keyed by the texts and the two
// flags that shape the chunks.
std::vector<TokenChunk> cached_chunks(const SplitCache& cache, const data::DatasetTable& table,
                                      const std::string& column, bool line_by_line, int64_t max_seq_length,
                                      text::HfTokenizer& tok) {
  const std::vector<std::string> texts = texts_of(table, column);
  Hasher key = feature_key(cache, "mlm-v1");
  key.u64(line_by_line).u64(static_cast<uint64_t>(max_seq_length)).u64(kMapBatchSize).u64(texts.size());
  for (const auto& t : texts) key.str(t);
  return cached_features<std::vector<TokenChunk>>(
      cache, key.digest(), [&] { return tokenize_split(texts, line_by_line, max_seq_length, tok); },
      [](const std::vector<TokenChunk>& chunks) {
        std::vector<std::vector<int32_t>> ids, special;
        ids.reserve(chunks.size());
        special.reserve(chunks.size());
        for (const auto& c : chunks) {
          ids.push_back(c.input_ids);
          special.emplace_back(c.special_tokens_mask.begin(), c.special_tokens_mask.end());
        }
        data::FeatureColumns c;
        c.add("input_ids", std::move(ids));
        c.add("special_tokens_mask", std::move(special));
        return c;
      },
      [](data::FeatureColumns c, const std::string& path) {
        auto ids = c.take("input_ids", path);
        auto special = take_rows(c, "special_tokens_mask", ids.size(), path);
        check_row_lengths(ids, special, "special_tokens_mask", path);
        std::vector<TokenChunk> chunks(ids.size());
        for (size_t i = 0; i < ids.size(); ++i) {
          chunks[i].input_ids = std::move(ids[i]);
          chunks[i].special_tokens_mask.assign(special[i].begin(), special[i].end());
        }
        return chunks;
      },
      [](const std::vector<TokenChunk>& chunks) { return static_cast<int64_t>(chunks.size()); });
}

// tokenizer.mask_token_id: tokenizer_config.json's mask_token (a string or an AddedToken), else the usual
// spellings; DataCollatorForLanguageModeling refuses a tokenizer without one.
int32_t mask_token_id(const text::HfTokenizer& tok, const std::string& flag) {
  std::vector<std::string> candidates;
  if (const json* c = tok.config(); c && c->contains("mask_token")) {
    const json& m = (*c)["mask_token"];
    if (m.is_string()) candidates.push_back(m.get<std::string>());
    if (m.is_object() && m.contains("content") && m["content"].is_string())
      candidates.push_back(m["content"].get<std::string>());
  }
  candidates.insert(candidates.end(), {"[MASK]", "<mask>"});
  for (const auto& c : candidates)
    if (const int32_t id = tok.token_to_id(c); id >= 0) return id;
  fail(
      flag,
      ": this tokenizer does not have a mask token ([MASK] or <mask>), which masked language modeling needs");
}

// One split ready for the Trainer: its chunks, kept alive beside the split that refers to them.
struct Prepared {
  std::vector<TokenChunk> chunks;
  std::unique_ptr<MaskedLmSplit> split;
};

std::unique_ptr<Prepared> prepare(const FeatureCache& cache, const data::DatasetTable& table,
                                  const std::string& column, int64_t max_samples, const std::string& what,
                                  const MlmArguments& a, const MaskedLmOptions& o, text::HfTokenizer& tok) {
  auto p = std::make_unique<Prepared>();
  p->chunks =
      cached_chunks(split_cache(&cache, table), table, column, a.data.line_by_line, o.max_seq_length, tok);
  // select(range(min(len, max_samples))) after grouping, as run_mlm.
  if (max_samples >= 0 && static_cast<int64_t>(p->chunks.size()) > max_samples)
    p->chunks.resize(static_cast<size_t>(max_samples));
  if (p->chunks.empty())
    fail(what, ": ", table.source, " (", table.num_rows(), " rows) yields no example",
         a.data.line_by_line
             ? " (no non-blank line)"
             : str(" (fewer than --max_seq_length ", o.max_seq_length, " tokens per 1,000 texts)"));
  p->split = std::make_unique<MaskedLmSplit>(p->chunks, o);
  return p;
}

// resize_token_embeddings of a loaded checkpoint: every parameter copied into a model of the larger
// vocabulary, the word embeddings (and the tied decoder's bias) row by row; the new rows keep the seeded
// init, N(0, initializer_range) as transformers' _init_weights draws them (transformers >= 4.46 draws them
// around the old rows' mean instead), the new bias entries 0 as its padding leaves them.
std::unique_ptr<model::EncoderModel> resized(const model::EncoderModel& loaded,
                                             const model::ModelConfig& config,
                                             const train::TrainingArguments& t,
                                             const train::EncoderBuild& b) {
  const auto precision = model::resolve_precision(t.bf16);
  float* grads = b.grad_alloc ? b.grad_alloc(model::make_param_layout(config, b.head).total) : nullptr;
  auto out = std::make_unique<model::EncoderModel>(config, b.head, precision, grads);
  out->init_weights(static_cast<uint64_t>(t.seed));
  std::map<std::string, const model::ParamInfo*> by_name;
  for (const auto& p : loaded.params()) by_name[p.name] = &p;
  float* to = out->params_data();
  for (const auto& p : out->params()) {
    const auto it = by_name.find(p.name);
    CT_CHECK(it != by_name.end(), "resize_token_embeddings: ", p.name, " is not in the loaded model");
    const model::ParamInfo& from = *it->second;
    // Row-major [vocab, width] or [vocab]: the old rows are the first numel() floats.
    CT_CHECK(from.numel() <= p.numel(), "resize_token_embeddings: ", p.name, " shrinks");
    if (from.numel() < p.numel() && p.shape.size() == 1) std::fill_n(to + p.offset, p.numel(), 0.0f);
    std::copy_n(loaded.params_data() + from.offset, from.numel(), to + p.offset);
  }
  out->mark_weights_changed();
  return out;
}

}  // namespace

model::ModelConfig scratch_config(const std::string& model_type, const std::string& overrides) {
  static const std::vector<std::string> kTypes = {"bert",      "roberta",    "xlm-roberta",
                                                  "camembert", "distilbert", "electra"};
  if (std::find(kTypes.begin(), kTypes.end(), model_type) == kTypes.end())
    fail("--model_type: '", model_type,
         "' is not a type coretrain trains from scratch (bert, roberta, xlm-roberta, camembert, distilbert, "
         "electra)");
  json j = family_defaults(model_type);
  // DistilBertConfig.attribute_map: the common names set DistilBERT's own fields.
  const std::vector<std::pair<std::string, std::string>> aliases =
      model_type == "distilbert"
          ? std::vector<std::pair<std::string, std::string>>{{"hidden_size", "dim"},
                                                             {"num_attention_heads", "n_heads"},
                                                             {"num_hidden_layers", "n_layers"}}
          : std::vector<std::pair<std::string, std::string>>{};
  // Fields carried for HF's config.json but not read by the model stay as they are.
  auto overridable = [&](const std::string& k) {
    return j.contains(k) && k != "model_type" && k != "bos_token_id" && k != "eos_token_id" &&
           k != "sinusoidal_pos_embds";
  };
  update_from_string(j, overrides, model_type, overridable, aliases);
  return model::config_from_json(j, overrides.empty() ? "--model_type " + model_type : "--config_overrides");
}

train::RunResult run_mlm(MlmArguments args, const std::vector<std::string>& argv,
                         const train::DistContext& dist) {
  auto& t = args.training;
  auto& d = args.data;
  const std::string resume = train::begin_task_run(t, argv, dist, args.notes);

  RawTextSplits raw = read_script_text_splits(d, t, args.model, dist);

  // Config, tokenizer, model: a checkpoint's, or run_mlm's training from scratch.
  train::ModelArguments local = train::localize_model_sources(args.model, dist);
  const bool pretrained = !local.model_name_or_path.empty();
  model::ModelConfig config;
  if (!local.config_name.empty() || pretrained) {
    config = train::load_task_config(local);
  } else {
    log::warn("You are instantiating a new config instance from scratch.");
    if (!args.model_extra.config_overrides.empty())
      log::info("Overriding config: ", args.model_extra.config_overrides);
    config = scratch_config(args.model_extra.model_type, args.model_extra.config_overrides);
  }
  if (local.tokenizer_name.empty() && !pretrained)
    fail(
        "--tokenizer_name: required when training from scratch (run_mlm does not build a tokenizer; save one "
        "and pass its folder)");
  // The vocabulary check waits for the resize rule below.
  model::ModelConfig unbounded = config;
  unbounded.vocab_size = std::numeric_limits<int64_t>::max();
  text::HfTokenizer tok = train::load_task_tokenizer(local, unbounded);
  const auto tokens = static_cast<int64_t>(tok.vocab_size());
  const std::string tok_flag = local.tokenizer_name.empty() ? "--model_name_or_path" : "--tokenizer_name";
  // model.resize_token_embeddings(len(tokenizer)) when the tokenizer outgrows the embeddings.
  const int64_t loaded_vocab = config.vocab_size;
  if (tokens > config.vocab_size) {
    log::info("resizing the token embeddings from ", config.vocab_size, " to the tokenizer's ", tokens,
              " tokens");
    config.vocab_size = tokens;
  }
  const int32_t mask_id = mask_token_id(tok, tok_flag);

  train::EncoderBuild build;
  build.head = model::HeadKind::masked_lm;
  build.grad_alloc = train::gradient_allocator(dist);
  std::unique_ptr<model::EncoderModel> model;
  if (pretrained && loaded_vocab != config.vocab_size) {
    model::ModelConfig checkpoint_config = config;
    checkpoint_config.vocab_size = loaded_vocab;
    train::EncoderBuild plain = build;
    plain.grad_alloc = nullptr;
    model = resized(*train::build_task_model(local, checkpoint_config, t, plain), config, t, build);
  } else {
    model = train::build_task_model(local, config, t, build);
  }
  train::broadcast_weights(*model, dist);

  // The text column: "text", else the first (of train when training, as run_mlm).
  const data::DatasetTable& columns_of = t.do_train       ? *raw.train
                                         : raw.validation ? *raw.validation
                                                          : *raw.train;
  const std::string column = text_column_name(columns_of);

  std::string warning;
  const int64_t mml =
      tok.model_max_length() > 0 ? tok.model_max_length() : std::numeric_limits<int64_t>::max();
  int64_t max_seq_length = mlm_max_seq_length(d.max_seq_length, mml, &warning);
  if (!warning.empty()) log::warn(warning);
  max_seq_length = train::fit_max_seq_length("--max_seq_length", max_seq_length, tok, config);

  MaskedLmOptions o;
  o.max_seq_length = max_seq_length;
  // Padding only exists line by line; grouped chunks all have max_seq_length tokens.
  o.pad_to_max_length = d.line_by_line && d.pad_to_max_length;
  o.pad_token_id = tok.pad_token_id();
  o.masking.mlm_probability = d.mlm_probability;
  o.masking.mask_token_id = mask_id;
  o.masking.vocab_size = tokens;
  o.masking.seed = static_cast<uint64_t>(t.seed);

  const FeatureCache cache = make_feature_cache(tok, args.model.cache_dir, d.overwrite_cache, dist);
  std::unique_ptr<Prepared> train_p, eval_p;
  if (t.do_train)
    train_p = prepare(cache, *raw.train, column, d.max_train_samples, "--do_train", args, o, tok);
  if (t.do_eval)
    eval_p = prepare(cache, *raw.validation, column, d.max_eval_samples, "--do_eval", args, o, tok);
  raw = {};  // the texts are not needed past tokenization

  train::TaskRunner runner(
      t, *model, [&tok](const std::string& dir) { tok.save(dir); }, dist);
  runner.dump_eval_features(args.dump_eval_features, eval_p ? eval_p->split.get() : nullptr);
  runner.dump_train_features(args.dump_train_features, train_p ? train_p->split.get() : nullptr);
  auto count = [](const auto& p) { return p ? static_cast<int64_t>(p->chunks.size()) : int64_t{0}; };
  train::RunResult result = runner.train_and_evaluate(
      train_p ? train_p->split.get() : nullptr, count(train_p), eval_p ? eval_p->split.get() : nullptr,
      count(eval_p), resume, [](nlohmann::json& m) {
        // math.exp(eval_loss), inf where Python raises OverflowError (the json files say Infinity, as
        // json.dump writes float("inf")).
        m["perplexity"] = std::exp(m.value("eval_loss", std::numeric_limits<double>::quiet_NaN()));
      });
  runner.write_model_card(train::dataset_card_info(args.model.model_name_or_path, "fill-mask", d.dataset_name,
                                                   d.dataset_config_name));
  return result;
}

}  // namespace ct::tasks
