#include "tasks/question_answering/qa_features.h"

#include <algorithm>
#include <string>

#include "core/error.h"
#include "core/log.h"
#include "data/unicode_util.h"

namespace ct::tasks {
namespace {

void label(Feature& f, const TokenizedExample& te, const Example& ex, int32_t context_start) {
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
  const int32_t base = context_start;
  f.start_position = base + s;
  f.end_position = base + e;
}

}  // namespace

std::string_view lstrip_unicode(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    size_t len = 1;
    if (!data::python_isspace(data::decode_utf8(s, i, &len))) break;
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
  fs.layout_.prefix = {tokenizer.cls_id()};
  fs.layout_.middle = {tokenizer.sep_id()};
  fs.layout_.suffix = {tokenizer.sep_id()};
  fs.layout_.prefix_types = {0};
  fs.layout_.middle_types = {0};
  fs.layout_.suffix_types = {1};
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
  fs.cut_windows(examples);
  return fs;
}

FeatureSet FeatureSet::build(const std::vector<Example>& examples, const text::HfTokenizer& tokenizer,
                             FeatureOptions options, int32_t pad_id, bool token_type_ids) {
  CT_CHECK(options.max_seq_length > 0, "--max_seq_length must be positive, got ", options.max_seq_length);
  CT_CHECK(options.doc_stride >= 0, "--doc_stride must be >= 0, got ", options.doc_stride);
  CT_CHECK(options.pad_to_multiple_of >= 0, "pad_to_multiple_of must be >= 0, got ",
           options.pad_to_multiple_of);
  CT_CHECK(!tokenizer.truncation() && !tokenizer.padding(),
           "QA features: the tokenizer must have no truncation or padding set (the windows are cut here)");
  FeatureSet fs;
  fs.options_ = options;
  fs.pad_id_ = pad_id;
  const int64_t n = static_cast<int64_t>(examples.size());
  fs.examples_.resize(static_cast<size_t>(n));
  std::vector<SequenceLayout> layouts(static_cast<size_t>(n));
  std::vector<std::string> errors(static_cast<size_t>(n));
#pragma omp parallel for schedule(dynamic, 64)
  for (int64_t i = 0; i < n; ++i) {
    try {
      const Example& ex = examples[static_cast<size_t>(i)];
      TokenizedExample& te = fs.examples_[static_cast<size_t>(i)];
      // The pair with the tokenizer's own special tokens: the post-processor also decides the offsets
      // (ByteLevel trim_offsets), token by token, as it does in each of HF's windows.
      const text::Encoding e = tokenizer.encode_pair(lstrip_unicode(ex.question), ex.context, true);
      const auto r0 = e.sequence_ranges.count(0) ? e.sequence_ranges.at(0) : std::pair<size_t, size_t>{0, 0};
      const auto r1 = e.sequence_ranges.count(1) ? e.sequence_ranges.at(1)
                                                 : std::pair<size_t, size_t>{r0.second, r0.second};
      CT_CHECK(r0.second <= r1.first, "the tokenizer's post-processor puts the context before the question");
      SequenceLayout& l = layouts[static_cast<size_t>(i)];
      auto part = [&](size_t b, size_t end, std::vector<int32_t>& ids, std::vector<int32_t>& types) {
        for (size_t k = b; k < end; ++k) {
          ids.push_back(e.ids[k]);
          types.push_back(token_type_ids ? e.type_ids[k] : 0);
        }
      };
      part(0, r0.first, l.prefix, l.prefix_types);
      part(r0.second, r1.first, l.middle, l.middle_types);
      part(r1.second, e.size(), l.suffix, l.suffix_types);
      l.question_type = token_type_ids && r0.second > r0.first ? e.type_ids[r0.first] : 0;
      l.context_type =
          token_type_ids && r1.second > r1.first ? e.type_ids[r1.first] : (token_type_ids ? -1 : 0);
      te.question_ids.assign(e.ids.begin() + static_cast<ptrdiff_t>(r0.first),
                             e.ids.begin() + static_cast<ptrdiff_t>(r0.second));
      for (size_t k = r1.first; k < r1.second; ++k) {
        te.context_ids.push_back(e.ids[k]);
        te.context_offsets.push_back(
            Span{static_cast<int32_t>(e.offsets[k].first), static_cast<int32_t>(e.offsets[k].second)});
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
  // Every example has the same special tokens around it; an empty context only lacks its type.
  bool have = false;
  for (int64_t i = 0; i < n; ++i) {
    SequenceLayout l = layouts[static_cast<size_t>(i)];
    if (l.context_type < 0) {
      if (have)
        l.context_type = fs.layout_.context_type;
      else
        continue;
    }
    if (!have) {
      fs.layout_ = l;
      have = true;
    } else if (!(l == fs.layout_)) {
      fail("example id \"", examples[static_cast<size_t>(i)].id,
           "\": the tokenizer puts other special tokens around it than around the first example");
    }
  }
  if (!have && n > 0) {
    fs.layout_ = layouts[0];
    fs.layout_.context_type = token_type_ids ? 1 : 0;
  }
  CT_CHECK(n == 0 || !fs.layout_.prefix.empty(),
           "QA features: the tokenizer adds no token before the question (run_qa's CLS index for impossible "
           "answers)");
  fs.cut_windows(examples);
  return fs;
}

void FeatureSet::cut_windows(const std::vector<Example>& examples) {
  const int64_t max_len = options_.max_seq_length;
  const int64_t n = static_cast<int64_t>(examples.size());
  const int64_t specials = static_cast<int64_t>(layout_.num_special());
  for (int64_t i = 0; i < n; ++i) {
    const Example& ex = examples[static_cast<size_t>(i)];
    const TokenizedExample& te = examples_[static_cast<size_t>(i)];
    const int64_t q = static_cast<int64_t>(te.question_ids.size());
    const int64_t c = static_cast<int64_t>(te.context_ids.size());
    int64_t budget = c;
    int64_t step = c > 0 ? c : 1;
    if (q + c + specials > max_len) {
      budget = max_len - q - specials;
      if (budget <= 0) {
        fail("--max_seq_length ", max_len, " is too small for question id \"", ex.id, "\": it has ", q,
             " tokens, leaving no room for the context (need max_seq_length > ", q + specials, ")");
      }
      if (options_.doc_stride >= budget) {
        fail("--doc_stride ", options_.doc_stride,
             " must be smaller than the context window of question id \"", ex.id, "\" (max_seq_length ",
             max_len, " - ", q, " question tokens - ", specials, " special tokens = ", budget, " tokens)");
      }
      step = budget - options_.doc_stride;
    }
    for (int64_t start = 0;; start += step) {
      const int64_t stop = std::min(start + budget, c);
      Feature f;
      f.example_index = i;
      f.context_begin = static_cast<int32_t>(start);
      f.context_len = static_cast<int32_t>(stop - start);
      label(f, te, ex,
            static_cast<int32_t>(layout_.prefix.size() + te.question_ids.size() + layout_.middle.size()));
      features_.push_back(f);
      if (stop >= c) break;
    }
  }
}

int64_t FeatureSet::length(int64_t i) const {
  const Feature& f = features_[static_cast<size_t>(i)];
  return static_cast<int64_t>(examples_[static_cast<size_t>(f.example_index)].question_ids.size()) +
         f.context_len + static_cast<int64_t>(layout_.num_special());
}

int64_t FeatureSet::context_start(int64_t i) const {
  const Feature& f = features_[static_cast<size_t>(i)];
  return static_cast<int64_t>(layout_.prefix.size() +
                              examples_[static_cast<size_t>(f.example_index)].question_ids.size() +
                              layout_.middle.size());
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
  ids.insert(ids.end(), layout_.prefix.begin(), layout_.prefix.end());
  ids.insert(ids.end(), te.question_ids.begin(), te.question_ids.end());
  ids.insert(ids.end(), layout_.middle.begin(), layout_.middle.end());
  ids.insert(ids.end(), te.context_ids.begin() + f.context_begin,
             te.context_ids.begin() + f.context_begin + f.context_len);
  ids.insert(ids.end(), layout_.suffix.begin(), layout_.suffix.end());
  return ids;
}

void FeatureSet::fill_types(int64_t q, int64_t c, int32_t* out) const {
  out = std::copy(layout_.prefix_types.begin(), layout_.prefix_types.end(), out);
  out = std::fill_n(out, q, layout_.question_type);
  out = std::copy(layout_.middle_types.begin(), layout_.middle_types.end(), out);
  out = std::fill_n(out, c, layout_.context_type);
  std::copy(layout_.suffix_types.begin(), layout_.suffix_types.end(), out);
}

void FeatureSet::keep_first(int64_t n) {
  tasks::keep_first(features_, n);
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
    const int64_t q =
        static_cast<int64_t>(examples_[static_cast<size_t>(f.example_index)].question_ids.size());
    int32_t* row = b.input_ids.data() + r * static_cast<size_t>(t);
    std::copy(ids.begin(), ids.end(), row);
    fill_types(q, f.context_len, b.token_type_ids.data() + r * static_cast<size_t>(t));
    std::fill_n(b.attention_mask.data() + r * static_cast<size_t>(t), len, 1);
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
    const int64_t q =
        static_cast<int64_t>(examples_[static_cast<size_t>(f.example_index)].question_ids.size());
    const size_t at = b.token_type_ids.size();
    b.token_type_ids.resize(at + ids.size());
    fill_types(q, f.context_len, b.token_type_ids.data() + at);
    b.input_ids.insert(b.input_ids.end(), ids.begin(), ids.end());
    b.lengths.push_back(static_cast<int32_t>(ids.size()));
    b.start_positions.push_back(f.start_position);
    b.end_positions.push_back(f.end_position);
    b.feature_indices.push_back(i);
  }
  return b;
}

}  // namespace ct::tasks
