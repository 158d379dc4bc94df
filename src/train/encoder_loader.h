// transformers' Auto* loading as every example script calls it, for any head: AutoConfig from --config_name
// (a config.json or its folder) else --model_name_or_path; AutoTokenizer from --tokenizer_name else the model
// folder (else the config's folder), with the script's keyword overrides (add_prefix_space=True); the
// AutoModelFor<Head> built from the config, seeded init, then the checkpoint's weights (a head the checkpoint
// lacks starts fresh with HF's warning; --ignore_mismatched_sizes lets a head of another label count start
// fresh too). Paths here are local: train/model_source.h turns repo ids into snapshot folders first. Every
// failure names the flag and the path.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/config.h"
#include "model/encoder_model.h"
#include "text/hf_tokenizer.h"
#include "train/dist_context.h"
#include "train/training_args.h"

namespace ct::train {

// The config.json path behind `flag`'s value (a folder holding one, or the file itself).
std::string config_json_path(const std::string& flag, const std::string& path);

// AutoConfig.from_pretrained(--config_name or --model_name_or_path). `num_labels` > 0 applies the kwarg:
// a config whose id2label has another size gets LABEL_i names (PretrainedConfig's num_labels setter).
model::ModelConfig load_task_config(const ModelArguments& m, int64_t num_labels = 0);

// AutoTokenizer.from_pretrained with `overrides` (may be null) as its keyword arguments. Fails when the
// tokenizer has more tokens than the config's vocabulary.
text::HfTokenizer load_task_tokenizer(const ModelArguments& m, const model::ModelConfig& config,
                                      const nlohmann::json* overrides = nullptr);

// id2label / label2id as the scripts set them on model.config (label2id[names[i]] = i).
void set_label_names(model::ModelConfig& config, const std::vector<std::string>& names);
// The config's label2id ({} when it has none, or only the LABEL_i defaults of PretrainedConfig).
std::vector<std::pair<std::string, int64_t>> checkpoint_label2id(const model::ModelConfig& config);

struct EncoderBuild {
  model::HeadKind head = model::HeadKind::sequence_classification;
  bool ignore_mismatched_sizes = false;
  std::function<float*(int64_t)> grad_alloc;  // optional: the gradient slab (DDP: the node's segment)
};

// The model of `config` with `head`, seeded from --seed, then the --model_name_or_path weights when given
// (else "training from random init").
std::unique_ptr<model::EncoderModel> build_task_model(const ModelArguments& m,
                                                      const model::ModelConfig& config,
                                                      const TrainingArguments& t, const EncoderBuild& b);

}  // namespace ct::train

namespace ct::train {

// The scripts' max_seq_length rule: larger than the tokenizer's model_max_length -> that, with HF's warning;
// then the model must have positions for it (RoBERTa's start past the padding index). `flag` names it.
int64_t fit_max_seq_length(const std::string& flag, int64_t requested, const text::HfTokenizer& tokenizer,
                           const model::ModelConfig& config);

// build_task_model with the gradient slab in the node's shared memory, then every rank takes rank 0's
// weights (DDP's start). Collective.
std::unique_ptr<model::EncoderModel> build_shared_model(const ModelArguments& m,
                                                        const model::ModelConfig& config,
                                                        const TrainingArguments& t, model::HeadKind head,
                                                        bool ignore_mismatched_sizes,
                                                        const DistContext& dist);

// DDP's start: every rank takes rank 0's weights. Collective.
void broadcast_weights(model::Model& model, const DistContext& dist);

}  // namespace ct::train
