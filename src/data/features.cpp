#include "data/features.h"

#include <algorithm>
#include <string>

#include "core/error.h"
#include "core/log.h"
#include "data/unicode_util.h"

namespace ct::data {
namespace {

void label(Feature& f, const TokenizedExample& te, const Example& ex) {
  f.start_position = f.end_position = 0;
  if (ex.answers.empty() || f.context_len == 0) return;
  const int64_t start_char = ex.answers[0].begin, end_char = ex.answers[0].end;
  const Span* off = te.context_offsets.data() + f.context_begin;
  const int32_t n = f.context_len;
  if (!(off[0].begin <= start_char && off[n - 1].end >= end_char)) return;
  // HF advances past every token starting at or before the answer; stopping at the window's last context
  // token avoids its run into [SEP]/padding when the answer starts there.
  int32_t s = 0;
  while (s + 1 < n && off[s + 1].begin <= start_char) ++s;
  int32_t e = n - 1;
  while (e >= 0 && off[e].end >= end_char) --e;
  e += 1;
  const int32_t base = static_cast<int32_t>(te.question_ids.size()) + 2;
  f.start_position = base + s;
  f.end_position = base + e;
}

}  // namespace

std::string_view lstrip_unicode(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    size_t len = 1;
    if (!python_isspace(decode_utf8(s, i, &len))) break;
    i += len;
  }
  return s.substr(i);
}

FeatureSet FeatureSet::build(const std::vector<Example>& examples, const text::Tokenizer& tokenizer,
                             FeatureOptions options) {
  CT_CHECK(options.max_seq_length > 0, "--max_seq_length must be positive, got ", options.max_seq_length);
  CT_CHECK(options.doc_stride >= 0, "--doc_stride must be >= 0, got ", options.doc_stride);
  CT_CHECK(options.pad_to_multiple_of >= 0, "pad_to_multiple_of must be >= 0, got ",
           options.pad_to_multiple_of);
  const int64_t model_max = tokenizer.options().model_max_length;
  if (model_max > 0 && options.max_seq_length > model_max) {
    log::warn("The max_seq_length passed (", options.max_seq_length,
              ") is larger than the maximum length for the model (", model_max,
              "). Using max_seq_length=", model_max, ".");
    options.max_seq_length = model_max;
  }
  FeatureSet fs;
  fs.options_ = options;
  fs.cls_id_ = tokenizer.cls_id();
  fs.sep_id_ = tokenizer.sep_id();
  fs.pad_id_ = tokenizer.pad_id();
  const int64_t n = static_cast<int64_t>(examples.size());
  fs.examples_.resize(static_cast<size_t>(n));
  std::vector<std::string> errors(static_cast<size_t>(n));
  // Exceptions must not cross the parallel region: collect them and rethrow the first in order.
#pragma omp parallel for schedule(dynamic, 64)
  for (int64_t i = 0; i < n; ++i) {
    try {
      const Example& ex = examples[static_cast<size_t>(i)];
      TokenizedExample& te = fs.examples_[static_cast<size_t>(i)];
      for (const auto& t : tokenizer.encode(lstrip_unicode(ex.question))) te.question_ids.push_back(t.id);
      for (const auto& t : tokenizer.encode(ex.context)) {
        te.context_ids.push_back(t.id);
        te.context_offsets.push_back(Span{t.begin, t.end});
      }
    } catch (const std::exception& e) {
      errors[static_cast<size_t>(i)] = e.what();
    }
  }
  for (int64_t i = 0; i < n; ++i) {
    if (!errors[static_cast<size_t>(i)].empty()) {
      fail("example id \"", examples[static_cast<size_t>(i)].id, "\": ", errors[static_cast<size_t>(i)]);
    }
  }
  const int64_t max_len = options.max_seq_length;
  for (int64_t i = 0; i < n; ++i) {
    const Example& ex = examples[static_cast<size_t>(i)];
    const TokenizedExample& te = fs.examples_[static_cast<size_t>(i)];
    const int64_t q = static_cast<int64_t>(te.question_ids.size());
    const int64_t c = static_cast<int64_t>(te.context_ids.size());
    int64_t budget = c;
    int64_t step = c > 0 ? c : 1;
    if (q + c + 3 > max_len) {
      budget = max_len - q - 3;
      if (budget <= 0) {
        fail("--max_seq_length ", max_len, " is too small for question id \"", ex.id, "\": it has ", q,
             " tokens, leaving no room for the context (need max_seq_length > ", q + 3, ")");
      }
      if (options.doc_stride >= budget) {
        fail("--doc_stride ", options.doc_stride,
             " must be smaller than the context window of question id \"", ex.id, "\" (max_seq_length ",
             max_len, " - ", q, " question tokens - 3 = ", budget, " tokens)");
      }
      step = budget - options.doc_stride;
    }
    for (int64_t start = 0;; start += step) {
      const int64_t stop = std::min(start + budget, c);
      Feature f;
      f.example_index = i;
      f.context_begin = static_cast<int32_t>(start);
      f.context_len = static_cast<int32_t>(stop - start);
      label(f, te, ex);
      fs.features_.push_back(f);
      if (stop >= c) break;
    }
  }
  return fs;
}

int64_t FeatureSet::length(int64_t i) const {
  const Feature& f = features_[static_cast<size_t>(i)];
  return static_cast<int64_t>(examples_[static_cast<size_t>(f.example_index)].question_ids.size()) +
         f.context_len + 3;
}

int64_t FeatureSet::context_start(int64_t i) const {
  const Feature& f = features_[static_cast<size_t>(i)];
  return static_cast<int64_t>(examples_[static_cast<size_t>(f.example_index)].question_ids.size()) + 2;
}

std::optional<Span> FeatureSet::offset(int64_t i, int64_t t) const {
  const Feature& f = features_[static_cast<size_t>(i)];
  const int64_t k = t - context_start(i);
  if (k < 0 || k >= f.context_len) return std::nullopt;
  return examples_[static_cast<size_t>(f.example_index)]
      .context_offsets[static_cast<size_t>(f.context_begin + k)];
}

std::vector<int32_t> FeatureSet::input_ids(int64_t i) const {
  const Feature& f = features_[static_cast<size_t>(i)];
  const TokenizedExample& te = examples_[static_cast<size_t>(f.example_index)];
  std::vector<int32_t> ids;
  ids.reserve(static_cast<size_t>(length(i)));
  ids.push_back(cls_id_);
  ids.insert(ids.end(), te.question_ids.begin(), te.question_ids.end());
  ids.push_back(sep_id_);
  ids.insert(ids.end(), te.context_ids.begin() + f.context_begin,
             te.context_ids.begin() + f.context_begin + f.context_len);
  ids.push_back(sep_id_);
  return ids;
}

void FeatureSet::keep_first(int64_t n) {
  data::keep_first(features_, n);
}

Batch FeatureSet::collate(std::span<const int64_t> indices) const {
  Batch b;
  b.batch_size = static_cast<int64_t>(indices.size());
  int64_t t = options_.max_seq_length;
  if (!options_.pad_to_max_length) {
    t = 0;
    for (int64_t i : indices) t = std::max(t, length(i));
    const int64_t m = options_.pad_to_multiple_of;
    if (m > 0) t = (t + m - 1) / m * m;
  }
  b.seq_len = t;
  const size_t total = static_cast<size_t>(b.batch_size * t);
  b.input_ids.assign(total, pad_id_);
  b.token_type_ids.assign(total, 0);
  b.attention_mask.assign(total, 0);
  for (size_t r = 0; r < indices.size(); ++r) {
    const int64_t i = indices[r];
    CT_ASSERT(i >= 0 && i < size());
    const Feature& f = features_[static_cast<size_t>(i)];
    const std::vector<int32_t> ids = input_ids(i);
    const int64_t len = static_cast<int64_t>(ids.size());
    CT_ASSERT(len <= t);
    const int64_t cs = context_start(i);
    int32_t* row = b.input_ids.data() + r * static_cast<size_t>(t);
    std::copy(ids.begin(), ids.end(), row);
    for (int64_t k = 0; k < len; ++k) {
      b.token_type_ids[r * static_cast<size_t>(t) + static_cast<size_t>(k)] = k >= cs ? 1 : 0;
      b.attention_mask[r * static_cast<size_t>(t) + static_cast<size_t>(k)] = 1;
    }
    b.start_positions.push_back(f.start_position);
    b.end_positions.push_back(f.end_position);
    b.feature_indices.push_back(i);
  }
  return b;
}

Batch FeatureSet::collate_packed(std::span<const int64_t> indices) const {
  Batch b;
  b.batch_size = static_cast<int64_t>(indices.size());
  // max_seq_length, not the batch's longest: it keys the dropout counters, so a feature draws the same masks
  // whatever its batch-mates (N ranks x b then follow 1 rank x N*b).
  b.seq_len = options_.max_seq_length;
  for (int64_t i : indices) {
    CT_ASSERT(i >= 0 && i < size());
    const Feature& f = features_[static_cast<size_t>(i)];
    const std::vector<int32_t> ids = input_ids(i);
    const int64_t cs = context_start(i);
    for (size_t k = 0; k < ids.size(); ++k) b.token_type_ids.push_back(static_cast<int64_t>(k) >= cs ? 1 : 0);
    b.input_ids.insert(b.input_ids.end(), ids.begin(), ids.end());
    b.lengths.push_back(static_cast<int32_t>(ids.size()));
    b.start_positions.push_back(f.start_position);
    b.end_positions.push_back(f.end_position);
    b.feature_indices.push_back(i);
  }
  return b;
}

}  // namespace ct::data
