// `coretrain bench tokenize`: times the feature build a task command runs before training, through the same
// code: --task qa (run_qa's windows and answer labels, QaTokenizer::build_features), glue (run_glue's
// tokenizer(s1, s2, truncation=True, max_length), build_sequence_features), ner (run_ner's pre-split words
// with label alignment, build_token_features), mlm (run_mlm's tokenize + group_texts, build_mlm_chunks) or
// swag (run_swag's four rows per example, build_multiple_choice_features); prints examples/s, features/s and
// tokens/s at the run's thread count and at one thread. bench/tokenize_tasks_vs_hf.py runs it beside HF's
// Rust tokenizer on the same files.
#include <omp.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "apps/bench_task_inputs.h"
#include "apps/cli_checks.h"
#include "apps/command.h"
#include "core/error.h"
#include "core/fs.h"
#include "tasks/masked_lm/mlm_features.h"
#include "tasks/multiple_choice/multiple_choice_features.h"
#include "tasks/question_answering/qa_tokenizer.h"
#include "tasks/sequence_classification/sequence_features.h"
#include "tasks/token_classification/token_features.h"
#include "text/hf_tokenizer.h"
#include "train/model_source.h"
#include "train/threads.h"

namespace {

struct Built {
  int64_t features = 0, tokens = 0;
};

struct Pass {
  int threads = 0;
  double mean_s = 0, best_s = 0;
  Built built;
};

// Timed builds after one untimed one (first-touch allocation and cold caches are not what an epoch pays).
Pass time_builds(const std::function<Built()>& build, int iters) {
  using clock = std::chrono::steady_clock;
  Pass p;
  p.threads = omp_get_max_threads();
  double total = 0;
  p.best_s = 1e300;
  for (int it = 0; it <= iters; ++it) {
    const auto t0 = clock::now();
    const Built b = build();
    const double s = std::chrono::duration<double>(clock::now() - t0).count();
    if (it == 0) {
      p.built = b;
      continue;
    }
    CT_CHECK(b.features == p.built.features, "feature count changed between builds: ", p.built.features,
             " then ", b.features);
    total += s;
    p.best_s = std::min(p.best_s, s);
  }
  p.mean_s = total / iters;
  return p;
}

template <typename Rows>
int64_t total_tokens(const Rows& rows) {
  int64_t n = 0;
  for (const auto& r : rows) n += static_cast<int64_t>(r.size());
  return n;
}

// config.json's model_type in the tokenizer's folder (what the commands read it from), else BERT's.
std::string folder_model_type(const std::string& dir) {
  const std::string path = dir + "/config.json";
  if (!std::filesystem::exists(path)) return "bert";
  const nlohmann::json c = nlohmann::json::parse(ct::fs::read_file(path), nullptr, false);
  if (c.is_object() && c.contains("model_type") && c["model_type"].is_string())
    return c["model_type"].get<std::string>();
  return "bert";
}

int64_t default_max_seq_length(const std::string& task) {
  // run_qa's and run_glue's defaults; run_ner, run_mlm and run_swag take BERT's model_max_length.
  if (task == "qa") return 384;
  if (task == "glue") return 128;
  return 512;
}

int run_bench_tokenize(int argc, char** argv) {
  CLI::App app{"Time a task command's feature build (tokenization + the task's windows, chunks or rows)",
               "coretrain bench tokenize"};
  std::string task = "qa", train_file, tokenizer_name, model_name_or_path, model_type;
  int64_t max_seq_length = 0, doc_stride = 128;
  int threads = 0, iters = 3;
  bool json = false, no_single = false, line_by_line = false;
  app.add_option("--task", task, "qa (default), glue, ner, mlm or swag: whose feature build to time");
  app.add_option(
         "--train_file", train_file,
         "qa: SQuAD JSON / JSON lines / CSV, as `coretrain qa` reads it; glue: JSON lines with "
         "sentence1 [sentence2]; ner: JSON lines with tokens (a list of words); swag: JSON lines with "
         "sent1 sent2 ending0..ending3; mlm: text, one text per line")
      ->required();
  app.add_option("--tokenizer_name", tokenizer_name, "folder with vocab.txt or tokenizer.json, or a Hub id");
  app.add_option("--model_name_or_path", model_name_or_path,
                 "the tokenizer's source when --tokenizer_name is not given (only its tokenizer is read)");
  app.add_option(
      "--model_type", model_type,
      "config.json's model_type, as the commands read it (qa: BERT's fast path and token type ids; "
      "ner: add_prefix_space); default: the folder's config.json, else bert");
  app.add_option("--max_seq_length", max_seq_length,
                 "tokens per feature (default: qa 384, glue 128, ner/mlm/swag 512)")
      ->check(ct::app::kPositive);
  app.add_option("--doc_stride", doc_stride, "qa: overlap between windows of a long context")
      ->check(ct::app::kNonNegative);
  app.add_flag("--line_by_line", line_by_line, "mlm: one feature per non-blank line instead of group_texts");
  app.add_option("--threads", threads,
                 "OpenMP threads (default: as the commands, OMP_NUM_THREADS or all CPUs)")
      ->check(ct::app::kPositive);
  app.add_option("--iters", iters, "timed builds (after one untimed)")->check(ct::app::kPositive);
  app.add_flag("--json", json, "one JSON object instead of text");
  app.add_flag("--no_single_thread", no_single, "skip the extra 1-thread pass when running more threads");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (task != "qa" && task != "glue" && task != "ner" && task != "mlm" && task != "swag")
    ct::fail("--task: expected qa, glue, ner, mlm or swag, got '", task, "'");
  if (tokenizer_name.empty() && model_name_or_path.empty())
    ct::fail("--tokenizer_name or --model_name_or_path: one is required");
  if (max_seq_length == 0) max_seq_length = default_max_seq_length(task);

  // Only the tokenizer's files: a Hub id given as --model_name_or_path must not pull the weights.
  ct::train::ModelArguments m;
  m.tokenizer_name = tokenizer_name.empty() ? model_name_or_path : tokenizer_name;
  const std::string tok_dir = ct::train::localize_model_sources(m).tokenizer_name;
  if (model_type.empty()) model_type = folder_model_type(tok_dir);

  const auto t0 = std::chrono::steady_clock::now();
  const ct::app::BenchTaskInputs in = ct::app::read_bench_task_inputs(task, train_file);
  const double read_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  // The tokenizer each command loads: qa's QaTokenizer (BERT's fast path for BERT-family WordPiece), the
  // others HfTokenizer::from_dir (ner with run_ner's add_prefix_space override).
  ct::tasks::QaTokenizer qa_tok;
  ct::text::HfTokenizer hf_tok;
  int64_t vocab = 0;
  const char* kind = "tokenizer.json";
  if (task == "qa") {
    qa_tok = ct::tasks::QaTokenizer::from_dir(tok_dir, model_type);
    vocab = qa_tok.vocab_size();
    kind = qa_tok.kind();
  } else {
    const nlohmann::json overrides =
        task == "ner" ? ct::tasks::split_words_overrides(model_type) : nlohmann::json::object();
    hf_tok = ct::text::HfTokenizer::from_dir(tok_dir, &overrides);
    vocab = static_cast<int64_t>(hf_tok.vocab_size());
  }
  ct::tasks::FeatureOptions fo;
  fo.max_seq_length = max_seq_length;
  fo.doc_stride = doc_stride;
  // ner: every word labelled (run_ner always has labels), so the label alignment is timed too.
  std::vector<std::vector<int64_t>> word_labels;
  for (const auto& w : in.words) word_labels.emplace_back(w.size(), 0);

  const std::function<Built()> build = [&]() -> Built {
    if (task == "qa") {
      const ct::tasks::FeatureSet fs = qa_tok.build_features(in.qa, fo);
      Built b{fs.size(), 0};
      for (size_t i = 0; i < in.qa.size(); ++i) {
        const auto& te = fs.tokenized(static_cast<int64_t>(i));
        b.tokens += static_cast<int64_t>(te.question_ids.size() + te.context_ids.size());
      }
      return b;
    }
    if (task == "glue") {
      const auto f = ct::tasks::build_sequence_features(hf_tok, in.pairs, max_seq_length);
      return {f.size(), total_tokens(f.input_ids)};
    }
    if (task == "ner") {
      const auto f =
          ct::tasks::build_token_features(hf_tok, in.words, word_labels, max_seq_length, false, {0});
      return {f.size(), total_tokens(f.input_ids)};
    }
    if (task == "swag") {
      const auto f = ct::tasks::build_multiple_choice_features(hf_tok, in.choices, max_seq_length);
      return {static_cast<int64_t>(f.input_ids.size()), total_tokens(f.input_ids)};
    }
    const auto chunks = ct::tasks::build_mlm_chunks(hf_tok, in.texts, line_by_line, max_seq_length);
    Built b{static_cast<int64_t>(chunks.size()), 0};
    for (const auto& c : chunks) b.tokens += static_cast<int64_t>(c.input_ids.size());
    return b;
  };

  if (threads > 0) {
    omp_set_num_threads(threads);
  } else {
    ct::train::apply_thread_plan(1);
  }
  std::vector<Pass> passes{time_builds(build, iters)};
  if (passes[0].threads > 1 && !no_single) {
    omp_set_num_threads(1);
    passes.push_back(time_builds(build, iters));
    CT_CHECK(passes[1].built.features == passes[0].built.features, "1-thread build made ",
             passes[1].built.features, " features, ", passes[0].threads, " threads made ",
             passes[0].built.features);
  }

  const double n = static_cast<double>(in.size());
  const Built& b = passes[0].built;
  if (json) {
    std::printf(
        "{\"examples\": %lld, \"skipped\": %lld, \"features\": %lld, \"tokens\": %lld, \"task\": \"%s\", "
        "\"tokenizer_kind\": \"%s\", \"model_type\": \"%s\", \"max_seq_length\": %lld, \"doc_stride\": %lld, "
        "\"iters\": %d, \"read_s\": %.4f",
        static_cast<long long>(in.size()), static_cast<long long>(in.skipped),
        static_cast<long long>(b.features), static_cast<long long>(b.tokens), task.c_str(), kind,
        model_type.c_str(), static_cast<long long>(max_seq_length), static_cast<long long>(doc_stride), iters,
        read_s);
    for (size_t k = 0; k < passes.size(); ++k) {
      const Pass& p = passes[k];
      // The run's own thread count unprefixed; the 1-thread pass as "single_thread_*".
      const char* pre = k == 0 ? "" : "single_thread_";
      std::printf(
          ", \"%sthreads\": %d, \"%sseconds\": %.5f, \"%sbest_seconds\": %.5f, \"%sexamples_per_s\": %.1f, "
          "\"%sfeatures_per_s\": %.1f, \"%stokens_per_s\": %.1f",
          pre, p.threads, pre, p.mean_s, pre, p.best_s, pre, n / p.mean_s, pre,
          static_cast<double>(p.built.features) / p.mean_s, pre,
          static_cast<double>(p.built.tokens) / p.mean_s);
    }
    std::printf("}\n");
    return 0;
  }
  std::printf(
      "bench tokenize --task %s: %s: %lld examples (%lld skipped), tokenizer %s (%s, %lld tokens), "
      "max_seq_length %lld%s; %d timed builds after 1 untimed; reading the file took %.3f s (not timed "
      "below)\n",
      task.c_str(), train_file.c_str(), static_cast<long long>(in.size()), static_cast<long long>(in.skipped),
      tok_dir.c_str(), kind, static_cast<long long>(vocab), static_cast<long long>(max_seq_length),
      task == "qa" ? (", doc_stride " + std::to_string(doc_stride)).c_str() : "", iters, read_s);
  std::printf("features %lld  tokens %lld (%s)\n", static_cast<long long>(b.features),
              static_cast<long long>(b.tokens),
              task == "qa" ? "questions + contexts, once per example" : "in the features");
  for (const Pass& p : passes) {
    std::printf(
        "%d thread%s: %.4f s per build (best %.4f)  examples/s %.0f  features/s %.0f  tokens/s %.0f\n",
        p.threads, p.threads == 1 ? "" : "s", p.mean_s, p.best_s, n / p.mean_s,
        static_cast<double>(p.built.features) / p.mean_s, static_cast<double>(p.built.tokens) / p.mean_s);
  }
  return 0;
}

}  // namespace

CT_COMMAND("bench tokenize",
           "time a task's feature build (--task qa|glue|ner|mlm|swag) through the commands' own code",
           run_bench_tokenize);
