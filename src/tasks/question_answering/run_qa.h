// run_qa.py's main(), in one call: arguments -> (demo data) -> config, tokenizer and model (HF loading rules)
// -> SQuAD examples -> features -> Trainer train / evaluate -> the output folder HF writes.
// apps/qa_command.cpp is a thin shell around this.
#pragma once

#include <functional>
#include <memory>

#include "model/config.h"
#include "model/encoder_model.h"
#include "tasks/question_answering/qa_args.h"
#include "tasks/question_answering/qa_tokenizer.h"
#include "train/dist_context.h"
#include "train/task_runner.h"

namespace ct::tasks {

struct LoadedModel {
  model::ModelConfig config;
  QaTokenizer tokenizer;
  std::unique_ptr<model::EncoderModel> model;  // the span head (HeadKind::span)
};

// HF's AutoConfig/AutoTokenizer/AutoModelForQuestionAnswering as run_qa calls them: config from --config_name
// (a config.json or its folder) else the model folder; tokenizer from --tokenizer_name else the model folder
// (else the config folder); weights from the model folder when given (missing qa_outputs -> fresh head and a
// warning, unused tensors listed), else random init from --seed. Every failure names the flag and the path.
// grad_alloc (optional) provides the gradient slab (DDP: the node's shared segment).
LoadedModel load_model(const QaArguments& args, const std::function<float*(int64_t)>& grad_alloc = {});

// The demo's one departure from HF's init: position embeddings start as scaled transformer sinusoids (still a
// standard BERT; only the starting values differ), which lets a tiny model from scratch learn which words
// share a sentence within the demo's time budget.
void init_sinusoidal_positions(model::EncoderModel& model);

// dist: this process's place in a data-parallel job (default: one process). Collective: every rank calls it.
train::RunResult run_qa(QaArguments args, const train::DistContext& dist = {});

}  // namespace ct::tasks
