// `coretrain ner --demo`: sentences of filler words with people (a first name, B-PER, sometimes followed by a
// surname, I-PER) and cities (B-LOC) dropped in, as json lines of tokens and ner_tags under
// <output_dir>/demo_data/.
#pragma once

#include "tasks/token_classification/ner_args.h"

namespace ct::tasks {

const TaskDemo<NerDataArguments>& ner_demo();

}  // namespace ct::tasks
