// What run_qa.py passes to trainer.create_model_card: finetuned_from = --model_name_or_path, tasks
// "question-answering", and the dataset's tag, config and display name from --dataset_name and
// --dataset_config_name (none for local files).
#pragma once

#include "tasks/question_answering/qa_args.h"
#include "train/model_card.h"

namespace ct::tasks {

train::ModelCardInfo qa_card_info(const QaArguments& args);

}  // namespace ct::tasks
