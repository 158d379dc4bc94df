// The command line of each example-script command: ModelArguments (the fields every script has, plus the ones
// only some scripts declare), the script's own DataTrainingArguments, and HF's TrainingArguments, parsed with
// the shared ArgParser so flags, defaults, JSON argv and errors behave the same in every command.
#pragma once

#include <functional>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "train/arg_parser.h"
#include "train/training_args.h"

namespace ct::tasks {

// ModelArguments fields that only some scripts declare; a script registers the ones it has (a flag another
// script has is an unknown flag here, as it is to HfArgumentParser).
struct ModelExtras {
  bool use_fast_tokenizer = true;        // glue, classification, mlm, swag (ner requires a fast one)
  bool ignore_mismatched_sizes = false;  // glue, classification, ner
  std::string model_type;                // mlm, clm: a fresh model of this type when training from scratch
  std::string config_overrides;          // mlm, clm: "n_embd=10,resid_pdrop=0.2" applied to the fresh config
  std::string dtype;                     // clm: the parameters' dtype (--dtype / --torch_dtype); "" = None
};

template <class Data>
struct ScriptArguments {
  train::ModelArguments model;
  ModelExtras model_extra;
  Data data;
  train::TrainingArguments training;
  std::string dump_eval_features;   // coretrain debug flag: the eval features' inputs and labels to this file
  std::string dump_train_features;  // coretrain debug flag: the first epoch's training features, likewise
  std::vector<std::string> notes;   // flags accepted under an old name, and the like
  bool help = false;
  bool demo = false;               // coretrain --demo: generated data, a small model from random init
  bool demo_global_batch = false;  // set by the parser: the demo's train batch is split over the ranks
};

// A command's `--demo`: a generated task with a learnable signal, written as the files the command reads, so
// the rest is an ordinary run from random init (the model and tokenizer in the same folder).
template <class Data>
struct TaskDemo {
  const char* metric;  // the eval_results.json key the demo prints
  // Before parsing, after the shared demo defaults (may be null): any flag given still overrides.
  void (*defaults)(ScriptArguments<Data>&);
  // After parsing, before validation: point the data flags the user left empty at `dir`.
  void (*files)(ScriptArguments<Data>&, const std::string& dir);
  // Generate the data into the files `files` named, and the tokenizer and config.json into `dir`.
  void (*write)(const ScriptArguments<Data>&, const std::string& dir);
};

// Fails naming the flag unless `path` ends in one of `extensions` (as the scripts' __post_init__ asserts).
void check_extension(const std::string& flag, const std::string& path,
                     const std::vector<std::string>& extensions);
// The part of `path` after its last '.', as the scripts take it (path.split(".")[-1]).
std::string file_extension(const std::string& path);

// run_glue's and run_classification's local files: both given (else fails with `need`), csv or json, the same
// extension.
void check_train_validation_pair(const std::string& train_file, const std::string& validation_file,
                                 const std::string& need);

// --max_train_samples and friends: -1 (None) or positive.
void check_max_samples(std::initializer_list<std::pair<const char*, int64_t>> flags);

// Shared validation: --output_dir required, model source given (unless `from_scratch_ok`), TrainingArguments.
void validate_common(train::ModelArguments& model, train::TrainingArguments& training, bool from_scratch_ok,
                     std::vector<std::string>* notes);

// coretrain's own flags every task command has (--dump_eval_features, --dump_train_features).
void add_debug_flags(train::ArgParser& parser, std::string& dump_eval_features,
                     std::string& dump_train_features);

// The demo's pieces every command shares.
// Output folder demo-out-{command}, train + eval, batch 32 at lr 2e-3 for 3 epochs, no checkpoints (before
// the task's defaults).
void apply_demo_training_defaults(train::TrainingArguments& training, const std::string& command);
// <output_dir>/demo_data; the model config and tokenizer come from there unless a flag names them.
std::string demo_folder(const train::TrainingArguments& training);
void use_demo_model(train::ModelArguments& model, const std::string& dir);

// --demo (coretrain's own).
void add_demo_flag(train::ArgParser& parser, bool& demo);

// The parser of a task command, pointing into `s`: the model's common flags, the script's (`add_flags`),
// coretrain's debug flags, --demo when `with_demo`, then TrainingArguments'.
template <class Data>
train::ArgParser script_parser(
    const std::string& command,
    const std::function<void(train::ArgParser&, ScriptArguments<Data>&)>& add_flags, bool with_demo,
    ScriptArguments<Data>& s) {
  train::ArgParser p(command);
  train::add_model_args(p, s.model);
  add_flags(p, s);
  add_debug_flags(p, s.dump_eval_features, s.dump_train_features);
  if (with_demo) add_demo_flag(p, s.demo);
  train::add_training_args(p, s.training);
  return p;
}

// Parses `argv` for `command`: `add_flags` registers the script's flags on the parser (after the model's
// common ones and before TrainingArguments'), `validate` runs the script's __post_init__ unless --help was
// asked. With `demo` the command takes --demo.
template <class Data>
ScriptArguments<Data> parse_script_args(
    const std::string& command, const std::vector<std::string>& argv,
    const std::function<void(train::ArgParser&, ScriptArguments<Data>&)>& add_flags,
    const std::function<void(ScriptArguments<Data>&)>& validate, const TaskDemo<Data>* demo = nullptr) {
  auto parser_for = [&](ScriptArguments<Data>& s) {
    return script_parser(command, add_flags, demo != nullptr, s);
  };
  ScriptArguments<Data> a;
  // The demo's defaults go in before the flags are read so that any flag given overrides them; a first read
  // (of the command line or of a JSON argv alike) only asks whether --demo is on.
  ScriptArguments<Data> probe;
  if (demo && parser_for(probe).parse(argv, nullptr) && probe.demo) {
    apply_demo_training_defaults(a.training, command);
    if constexpr (requires { a.data.max_seq_length; }) {
      a.data.max_seq_length = 64;  // the generated texts are short; every batch padded to its longest
      a.data.pad_to_max_length = false;
    }
    if (demo->defaults) demo->defaults(a);
  }
  train::ArgParser p = parser_for(a);
  a.help = !p.parse(argv, &a.notes);
  if (a.help) return a;
  if (a.demo) {
    const std::string dir = demo_folder(a.training);
    use_demo_model(a.model, dir);
    demo->files(a, dir);
    a.demo_global_batch = !p.given("per_device_train_batch_size");
  }
  validate(a);
  return a;
}

template <class Data>
std::string script_args_help(const std::string& command, const std::string& script,
                             const std::function<void(train::ArgParser&, ScriptArguments<Data>&)>& add_flags,
                             bool with_demo = false) {
  ScriptArguments<Data> defaults;
  return script_parser(command, add_flags, with_demo, defaults)
      .help("usage: coretrain " + command + " [--flag value ...] | coretrain " + command + " args.json" +
            (with_demo ? " | coretrain " + command + " --demo" : std::string()) +
            "\n\nFlags keep the names and defaults of HF " + script + " and TrainingArguments.\n\n");
}

}  // namespace ct::tasks
