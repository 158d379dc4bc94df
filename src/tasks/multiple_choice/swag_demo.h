// `coretrain swag --demo`: a context naming one object among filler words, and four endings that each name an
// object; the right ending names the context's. Json lines with SWAG's columns (sent1, sent2, ending0..3,
// label) under <output_dir>/demo_data/.
#pragma once

#include "tasks/multiple_choice/swag_args.h"

namespace ct::tasks {

const TaskDemo<SwagDataArguments>& swag_demo();

}  // namespace ct::tasks
