// `coretrain glue --demo` and `coretrain classification --demo`: sentences of filler words with the label's
// words dropped in. glue: a sentence pair labelled yes when either sentence holds "treasure" (the model must
// read both segments); classification: multi-label topics (animal, color, number), each present when one of
// its words is. Json lines under <output_dir>/demo_data/, read as local files.
#pragma once

#include "tasks/sequence_classification/classification_args.h"
#include "tasks/sequence_classification/glue_args.h"

namespace ct::tasks {

const TaskDemo<GlueDataArguments>& glue_demo();
const TaskDemo<ClassificationDataArguments>& classification_demo();

}  // namespace ct::tasks
