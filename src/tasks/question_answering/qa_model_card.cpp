#include "tasks/question_answering/qa_model_card.h"

namespace ct::tasks {

train::ModelCardInfo qa_card_info(const QaArguments& args) {
  train::ModelCardInfo info;
  info.finetuned_from = args.model.model_name_or_path;
  info.tasks = "question-answering";
  const auto& d = args.data;
  if (!d.dataset_name.empty()) {
    info.dataset_tag = d.dataset_name;
    info.dataset_arg = d.dataset_config_name;
    info.dataset =
        d.dataset_config_name.empty() ? d.dataset_name : d.dataset_name + " " + d.dataset_config_name;
  }
  return info;
}

}  // namespace ct::tasks
