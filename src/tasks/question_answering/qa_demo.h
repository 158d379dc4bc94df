// The built-in demo's setup: generates the templated SQuAD-format set (squad_demo_data.h), writes it with its
// vocab and the demos' small BERT config.json (tasks/task_demo.h) under <output_dir>/demo_data/, and points
// the run's arguments at them, so the rest of `coretrain qa --demo` is an ordinary run_qa run from random
// init.
#pragma once

#include "tasks/question_answering/qa_args.h"

namespace ct::tasks {

// Demo defaults for flags the user did not give (applied before parsing, so any flag still overrides).
void apply_demo_defaults(QaArguments& args);

// Fills train_file, validation_file, config_name, tokenizer_name; writes the data, vocab and config there
// when write_files (one process per node writes; the others wait for it).
void prepare_demo(QaArguments& args, bool write_files = true);

}  // namespace ct::tasks
