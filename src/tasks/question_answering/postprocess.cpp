#include "tasks/question_answering/postprocess.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/fs.h"

namespace ct::tasks {
namespace {

struct Prelim {
  Span span;
  bool is_null = false;
  float score = 0, start_logit = 0, end_logit = 0;
};

// Indices of the n largest values, largest first; ties put the higher index first (numpy's argsort reversed).
std::vector<int64_t> top_indices(const float* v, int64_t len, int64_t n) {
  std::vector<int64_t> idx(static_cast<size_t>(len));
  std::iota(idx.begin(), idx.end(), 0);
  auto greater = [v](int64_t a, int64_t b) { return v[a] > v[b] || (v[a] == v[b] && a > b); };
  const int64_t k = std::min(n, len);
  std::partial_sort(idx.begin(), idx.begin() + k, idx.end(), greater);
  idx.resize(static_cast<size_t>(k));
  return idx;
}

}  // namespace

std::vector<ExamplePrediction> postprocess_qa_predictions(const std::vector<Example>& examples,
                                                          const FeatureSet& features,
                                                          std::span<const float> start_logits,
                                                          std::span<const float> end_logits, int64_t seq_len,
                                                          const PostprocessOptions& options) {
  CT_CHECK(options.n_best_size > 0, "--n_best_size must be positive, got ", options.n_best_size);
  CT_CHECK(options.max_answer_length > 0, "--max_answer_length must be positive, got ",
           options.max_answer_length);
  const int64_t nf = features.size();
  CT_CHECK(seq_len > 0 && static_cast<int64_t>(start_logits.size()) == nf * seq_len &&
               static_cast<int64_t>(end_logits.size()) == nf * seq_len,
           "postprocess: expected start/end logits of ", nf, " features x ", seq_len,
           " positions = ", nf * seq_len, " values, got ", start_logits.size(), " and ", end_logits.size());
  std::vector<std::vector<int64_t>> per_example(examples.size());
  for (int64_t f = 0; f < nf; ++f) {
    const int64_t e = features[f].example_index;
    CT_CHECK(e >= 0 && e < static_cast<int64_t>(examples.size()), "postprocess: feature ", f,
             " refers to example ", e, " but only ", examples.size(), " examples were given");
    per_example[static_cast<size_t>(e)].push_back(f);
  }

  std::vector<ExamplePrediction> out;
  out.reserve(examples.size());
  for (size_t ei = 0; ei < examples.size(); ++ei) {
    const Example& ex = examples[ei];
    std::vector<Prelim> prelim;
    bool have_null = false;
    Prelim min_null;
    min_null.is_null = true;
    for (int64_t f : per_example[ei]) {
      const float* sl = start_logits.data() + f * seq_len;
      const float* el = end_logits.data() + f * seq_len;
      const float null_score = sl[0] + el[0];
      if (!have_null || min_null.score > null_score) {
        have_null = true;
        min_null.score = null_score;
        min_null.start_logit = sl[0];
        min_null.end_logit = el[0];
      }
      const std::vector<int64_t> starts = top_indices(sl, seq_len, options.n_best_size);
      const std::vector<int64_t> ends = top_indices(el, seq_len, options.n_best_size);
      for (int64_t s : starts) {
        const std::optional<Span> so = features.offset(f, s);
        if (!so) continue;
        for (int64_t e : ends) {
          const std::optional<Span> eo = features.offset(f, e);
          if (!eo) continue;
          if (e < s || e - s + 1 > options.max_answer_length) continue;
          prelim.push_back(Prelim{Span{so->begin, eo->end}, false, sl[s] + el[e], sl[s], el[e]});
        }
      }
    }
    const bool v2 = options.version_2_with_negative && have_null;
    if (v2) prelim.push_back(min_null);
    std::stable_sort(prelim.begin(), prelim.end(),
                     [](const Prelim& a, const Prelim& b) { return a.score > b.score; });
    if (static_cast<int64_t>(prelim.size()) > options.n_best_size) {
      prelim.resize(static_cast<size_t>(options.n_best_size));
    }
    if (v2 && std::none_of(prelim.begin(), prelim.end(), [](const Prelim& p) { return p.is_null; })) {
      prelim.push_back(min_null);
    }

    ExamplePrediction pred;
    pred.id = ex.id;
    std::vector<double> scores;
    for (const Prelim& p : prelim) {
      Candidate c;
      if (!p.is_null) {
        const size_t b = static_cast<size_t>(p.span.begin), e = static_cast<size_t>(p.span.end);
        c.text = e > b ? ex.context.substr(b, e - b) : std::string();
      }
      c.start_logit = p.start_logit;
      c.end_logit = p.end_logit;
      pred.nbest.push_back(std::move(c));
      scores.push_back(p.score);
    }
    if (pred.nbest.empty() || (pred.nbest.size() == 1 && pred.nbest[0].text.empty())) {
      Candidate empty;
      empty.text = "empty";
      pred.nbest.insert(pred.nbest.begin(), empty);
      scores.insert(scores.begin(), 0.0);
    }
    const double mx = *std::max_element(scores.begin(), scores.end());
    double sum = 0;
    for (double& s : scores) sum += (s = std::exp(s - mx));
    for (size_t k = 0; k < scores.size(); ++k)
      pred.nbest[k].probability = static_cast<float>(scores[k] / sum);

    if (!options.version_2_with_negative) {
      pred.text = pred.nbest[0].text;
    } else {
      size_t i = 0;
      while (i + 1 < pred.nbest.size() && pred.nbest[i].text.empty()) ++i;
      const Candidate& best = pred.nbest[i];
      const float null_score = have_null ? min_null.score : 0.0f;
      pred.null_score_diff = static_cast<double>(null_score - best.start_logit - best.end_logit);
      pred.text = pred.null_score_diff > options.null_score_diff_threshold ? std::string() : best.text;
    }
    out.push_back(std::move(pred));
  }
  return out;
}

void write_predictions(const std::vector<ExamplePrediction>& predictions, const std::string& dir,
                       const std::string& prefix, bool version_2_with_negative) {
  using nlohmann::ordered_json;
  ordered_json answers = ordered_json::object(), nbest = ordered_json::object(),
               odds = ordered_json::object();
  for (const ExamplePrediction& p : predictions) {
    answers[p.id] = p.text;
    ordered_json list = ordered_json::array();
    for (const Candidate& c : p.nbest) {
      ordered_json j = ordered_json::object();
      j["start_logit"] = static_cast<double>(c.start_logit);
      j["end_logit"] = static_cast<double>(c.end_logit);
      j["text"] = c.text;
      j["probability"] = static_cast<double>(c.probability);
      list.push_back(std::move(j));
    }
    nbest[p.id] = std::move(list);
    if (version_2_with_negative) odds[p.id] = p.null_score_diff;
  }
  // Python's json.dumps(indent=4) escapes non-ASCII; dump(4, ' ', true) writes the same text.
  auto text = [](const ordered_json& j) { return j.dump(4, ' ', true) + "\n"; };
  const std::string base = dir.empty() ? std::string() : dir + "/";
  fs::write_file_atomic(base + prefix + "_predictions.json", text(answers));
  fs::write_file_atomic(base + prefix + "_nbest_predictions.json", text(nbest));
  if (version_2_with_negative) fs::write_file_atomic(base + prefix + "_null_odds.json", text(odds));
}

}  // namespace ct::tasks
