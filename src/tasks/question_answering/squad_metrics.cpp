#include "tasks/question_answering/squad_metrics.h"

#include <utf8proc.h>

#include <algorithm>
#include <map>
#include <numeric>

#include "core/error.h"
#include "data/unicode_util.h"

namespace ct::tasks {
namespace {

// Python's \w for str patterns: alphanumeric (letters and numbers of any script) or '_'.
bool is_word(uint32_t c) {
  if (c == '_') return true;
  switch (utf8proc_category(static_cast<utf8proc_int32_t>(c))) {
    case UTF8PROC_CATEGORY_LU:
    case UTF8PROC_CATEGORY_LL:
    case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO:
    case UTF8PROC_CATEGORY_ND:
    case UTF8PROC_CATEGORY_NL:
    case UTF8PROC_CATEGORY_NO:
      return true;
    default:
      return false;
  }
}

bool is_ascii_punct(uint32_t c) {
  return (c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) || (c >= 123 && c <= 126);
}

std::vector<std::string> tokens(std::string_view s) {
  std::vector<std::string> out;
  const std::string n = normalize_answer(s);
  size_t i = 0;
  while (i < n.size()) {
    size_t j = n.find(' ', i);
    if (j == std::string::npos) j = n.size();
    if (j > i) out.emplace_back(n.substr(i, j - i));
    i = j + 1;
  }
  return out;
}

size_t common_count(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  std::map<std::string_view, int64_t> ca;
  for (const auto& t : a) ++ca[t];
  size_t same = 0;
  for (const auto& t : b) {
    auto it = ca.find(t);
    if (it != ca.end() && it->second > 0) {
      --it->second;
      ++same;
    }
  }
  return same;
}

double f1_from(const std::vector<std::string>& pred, const std::vector<std::string>& gold) {
  const size_t same = common_count(pred, gold);
  if (same == 0) return 0.0;
  const double precision = static_cast<double>(same) / static_cast<double>(pred.size());
  const double recall = static_cast<double>(same) / static_cast<double>(gold.size());
  return 2 * precision * recall / (precision + recall);
}

// squad_v2's compute_f1: an empty side scores 1 only when both are empty.
double f1_v2(std::string_view pred, std::string_view gold) {
  const auto p = tokens(pred), g = tokens(gold);
  if (p.empty() || g.empty()) return p == g ? 1.0 : 0.0;
  return f1_from(p, g);
}

}  // namespace

std::string normalize_answer(std::string_view s) {
  // lower() then drop punctuation, as code points.
  std::vector<uint32_t> cps;
  for (size_t i = 0; i < s.size();) {
    size_t len = 1;
    uint32_t c = data::decode_utf8(s, i, &len);
    i += len;
    c = static_cast<uint32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(c)));
    if (!is_ascii_punct(c)) cps.push_back(c);
  }
  // re.sub(r"\b(a|an|the)\b", " ", text): longest alternative that ends at a word boundary wins.
  std::vector<uint32_t> out;
  const size_t n = cps.size();
  static const std::u32string kArticles[] = {U"a", U"an", U"the"};
  for (size_t i = 0; i < n;) {
    bool replaced = false;
    if (i == 0 || !is_word(cps[i - 1])) {
      for (const auto& art : kArticles) {
        const size_t m = art.size();
        if (i + m > n || !std::equal(art.begin(), art.end(), cps.begin() + static_cast<std::ptrdiff_t>(i)))
          continue;
        if (i + m < n && is_word(cps[i + m])) continue;
        out.push_back(' ');
        i += m;
        replaced = true;
        break;
      }
    }
    if (!replaced) out.push_back(cps[i++]);
  }
  // " ".join(text.split())
  std::string result;
  bool pending_space = false;
  for (uint32_t c : out) {
    if (data::python_isspace(c)) {
      pending_space = !result.empty();
      continue;
    }
    if (pending_space) result += ' ';
    pending_space = false;
    data::append_utf8(result, c);
  }
  return result;
}

double exact_match_score(std::string_view prediction, std::string_view gold) {
  return normalize_answer(prediction) == normalize_answer(gold) ? 1.0 : 0.0;
}

double f1_score(std::string_view prediction, std::string_view gold) {
  return f1_from(tokens(prediction), tokens(gold));
}

Metrics squad_v1(const std::vector<GoldAnswers>& gold, const PredictionMap& predictions) {
  double em = 0, f1 = 0;
  for (const GoldAnswers& g : gold) {
    if (g.texts.empty()) {
      fail("question id \"", g.id,
           "\" has no gold answers; the SQuAD v1.1 metric needs one (use --version_2_with_negative)");
    }
    auto it = predictions.find(g.id);
    if (it == predictions.end()) continue;
    double best_em = 0, best_f1 = 0;
    for (const std::string& t : g.texts) {
      best_em = std::max(best_em, exact_match_score(it->second, t));
      best_f1 = std::max(best_f1, f1_score(it->second, t));
    }
    em += best_em;
    f1 += best_f1;
  }
  const double total = static_cast<double>(gold.size());
  return {{"exact_match", total > 0 ? 100.0 * em / total : 0.0, false},
          {"f1", total > 0 ? 100.0 * f1 / total : 0.0, false}};
}

Metrics squad_v2(const std::vector<GoldAnswers>& gold, const PredictionMap& predictions,
                 const std::unordered_map<std::string, double>* na_probs, double no_answer_threshold) {
  struct Row {
    bool has_ans;
    bool answered;  // prediction non-empty
    double exact_raw, f1_raw;
    double exact, f1;  // after the no-answer threshold
    double na_prob;
  };
  std::vector<Row> rows;
  int64_t num_no_ans = 0;
  for (const GoldAnswers& g : gold) {
    const bool has_ans = !g.texts.empty();
    if (!has_ans) ++num_no_ans;
    auto it = predictions.find(g.id);
    if (it == predictions.end()) continue;
    std::vector<std::string> golds;
    for (const auto& t : g.texts) {
      if (!normalize_answer(t).empty()) golds.push_back(t);
    }
    if (golds.empty()) golds.push_back("");
    Row r{has_ans, !it->second.empty(), 0, 0, 0, 0, 0};
    for (const auto& t : golds) {
      r.exact_raw = std::max(r.exact_raw, normalize_answer(t) == normalize_answer(it->second) ? 1.0 : 0.0);
      r.f1_raw = std::max(r.f1_raw, f1_v2(it->second, t));
    }
    if (na_probs) {
      auto p = na_probs->find(g.id);
      if (p != na_probs->end()) r.na_prob = p->second;
    }
    const bool pred_na = r.na_prob > no_answer_threshold;
    r.exact = pred_na ? (has_ans ? 0.0 : 1.0) : r.exact_raw;
    r.f1 = pred_na ? (has_ans ? 0.0 : 1.0) : r.f1_raw;
    rows.push_back(r);
  }
  Metrics m;
  auto add_eval = [&](const std::string& prefix, int which) {  // which: 0 all, 1 has-ans, 2 no-ans
    double ex = 0, f = 0;
    int64_t total = 0;
    for (const Row& r : rows) {
      if ((which == 1 && !r.has_ans) || (which == 2 && r.has_ans)) continue;
      ex += r.exact;
      f += r.f1;
      ++total;
    }
    const double t = static_cast<double>(total);
    m.push_back({prefix + "exact", total ? 100.0 * ex / t : 0.0, false});
    m.push_back({prefix + "f1", total ? 100.0 * f / t : 0.0, false});
    m.push_back({prefix + "total", t, true});
  };
  add_eval("", 0);
  if (std::any_of(gold.begin(), gold.end(), [](const GoldAnswers& g) { return !g.texts.empty(); })) {
    add_eval("HasAns_", 1);
  }
  if (num_no_ans > 0) add_eval("NoAns_", 2);
  // Best threshold over the no-answer probabilities (questions in na_prob order, ties in gold order).
  std::vector<size_t> order(rows.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return rows[a].na_prob < rows[b].na_prob; });
  auto best = [&](bool use_f1, const std::string& name) {
    double cur = static_cast<double>(num_no_ans), best_score = cur, best_thresh = 0.0;
    for (size_t k : order) {
      const Row& r = rows[k];
      const double diff = r.has_ans ? (use_f1 ? r.f1_raw : r.exact_raw) : (r.answered ? -1.0 : 0.0);
      cur += diff;
      if (cur > best_score) {
        best_score = cur;
        best_thresh = r.na_prob;
      }
    }
    const double denom = static_cast<double>(rows.size());
    m.push_back({name, denom > 0 ? 100.0 * best_score / denom : 0.0, false});
    m.push_back({name + "_thresh", best_thresh, false});
  };
  best(false, "best_exact");
  best(true, "best_f1");
  return m;
}

}  // namespace ct::tasks
