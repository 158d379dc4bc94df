#include "text/encoding.h"

#include <algorithm>

#include "core/error.h"

namespace ct::text {

std::vector<int32_t> Encoding::sequence_ids() const {
  if (sequence_ranges.empty()) return std::vector<int32_t>(size(), 0);
  std::vector<int32_t> out(size(), -1);
  for (const auto& [seq, r] : sequence_ranges) {
    for (size_t i = r.first; i < r.second && i < out.size(); ++i) out[i] = seq;
  }
  return out;
}

void Encoding::push(int32_t id, int32_t type_id, std::string token, std::pair<uint32_t, uint32_t> offset,
                    int32_t word, bool special) {
  ids.push_back(id);
  type_ids.push_back(type_id);
  tokens.push_back(std::move(token));
  offsets.push_back(offset);
  word_ids.push_back(word);
  special_tokens_mask.push_back(special ? 1 : 0);
  attention_mask.push_back(1);
}

void Encoding::merge_with(Encoding pair) {
  std::vector<Encoding> over;
  for (const Encoding& self_o : overflowing) {
    Encoding n = self_o;
    n.merge_with(pair);
    over.push_back(std::move(n));
    for (const Encoding& other_o : pair.overflowing) {
      Encoding m = self_o;
      m.merge_with(other_o);
      over.push_back(std::move(m));
    }
  }
  for (const Encoding& other_o : pair.overflowing) {
    Encoding n = *this;
    n.merge_with(other_o);
    over.push_back(std::move(n));
  }
  const size_t base = size();
  for (const auto& [seq, r] : pair.sequence_ranges) sequence_ranges[seq] = {base + r.first, base + r.second};
  auto append = [](auto& dst, auto& src) { dst.insert(dst.end(), src.begin(), src.end()); };
  append(ids, pair.ids);
  append(type_ids, pair.type_ids);
  append(tokens, pair.tokens);
  append(offsets, pair.offsets);
  append(word_ids, pair.word_ids);
  append(special_tokens_mask, pair.special_tokens_mask);
  append(attention_mask, pair.attention_mask);
  overflowing = std::move(over);
}

Encoding Encoding::merge(std::vector<Encoding> parts) {
  Encoding out;
  for (auto& p : parts) out.merge_with(std::move(p));
  return out;
}

namespace {

Encoding slice(const Encoding& e, size_t b, size_t end) {
  Encoding o;
  auto cut = [&](auto& dst, const auto& src) {
    dst.assign(src.begin() + static_cast<ptrdiff_t>(b), src.begin() + static_cast<ptrdiff_t>(end));
  };
  cut(o.ids, e.ids);
  cut(o.type_ids, e.type_ids);
  cut(o.tokens, e.tokens);
  cut(o.offsets, e.offsets);
  cut(o.word_ids, e.word_ids);
  cut(o.special_tokens_mask, e.special_tokens_mask);
  cut(o.attention_mask, e.attention_mask);
  return o;
}

}  // namespace

void Encoding::truncate(size_t max_len, size_t stride, bool left) {
  const size_t n = size();
  if (max_len >= n) return;
  if (max_len == 0) {
    Encoding whole = std::move(*this);
    *this = Encoding{};
    overflowing.push_back(std::move(whole));
    return;
  }
  CT_CHECK(stride < max_len, "truncation: stride ", stride, " must be less than the ", max_len,
           " tokens a window holds (max_length minus the special tokens and the other sequence)");
  const size_t step = max_len - stride;
  std::vector<std::pair<size_t, size_t>> parts;
  if (!left) {
    for (size_t start = 0; start < n; start += step) {
      const size_t stop = std::min(start + max_len, n);
      parts.emplace_back(start, stop);
      if (stop == n) break;
    }
  } else {
    // (0..n).rev().step_by(step): stop - 1 = n-1, n-1-step, ...
    for (size_t k = 0;; ++k) {
      if (k * step > n - 1) break;
      const size_t stop = n - k * step;
      const size_t start = stop > max_len ? stop - max_len : 0;
      parts.emplace_back(start, stop);
      if (start == 0) break;
    }
  }
  Encoding first = slice(*this, parts[0].first, parts[0].second);
  for (size_t i = 1; i < parts.size(); ++i)
    first.overflowing.push_back(slice(*this, parts[i].first, parts[i].second));
  *this = std::move(first);
}

void Encoding::pad(size_t target, int32_t pad_id, int32_t pad_type_id, const std::string& pad_token,
                   bool left) {
  for (auto& o : overflowing) o.pad(target, pad_id, pad_type_id, pad_token, left);
  if (size() >= target) return;
  const size_t k = target - size();
  auto fill = [&](auto& v, auto value) {
    using T = typename std::decay_t<decltype(v)>::value_type;
    v.insert(left ? v.begin() : v.end(), k, static_cast<T>(value));
  };
  fill(ids, pad_id);
  fill(type_ids, pad_type_id);
  tokens.insert(left ? tokens.begin() : tokens.end(), k, pad_token);
  offsets.insert(left ? offsets.begin() : offsets.end(), k, std::pair<uint32_t, uint32_t>{0, 0});
  fill(word_ids, -1);
  fill(special_tokens_mask, 1);
  fill(attention_mask, 0);
  if (left) {
    for (auto& [seq, r] : sequence_ranges) r = {r.first + k, r.second + k};
  }
}

void truncate_encodings(Encoding& a, Encoding* pair, const TruncationParams& p) {
  if (p.max_length == 0) {
    a.truncate(0, p.stride, p.left);
    if (pair) pair->truncate(0, p.stride, p.left);
    return;
  }
  const size_t total = a.size() + (pair ? pair->size() : 0);
  if (total <= p.max_length) return;
  const size_t to_remove = total - p.max_length;
  switch (p.strategy) {
    case TruncationStrategy::kLongestFirst:
      if (pair) {
        size_t n1 = a.size(), n2 = pair->size();
        const bool swap = n1 > n2;
        if (swap) std::swap(n1, n2);
        n2 = n1 > p.max_length ? n1 : std::max(n1, p.max_length - n1);
        if (n1 + n2 > p.max_length) {
          n1 = p.max_length / 2;
          n2 = n1 + p.max_length % 2;
        }
        if (swap) std::swap(n1, n2);
        a.truncate(n1, p.stride, p.left);
        pair->truncate(n2, p.stride, p.left);
      } else {
        a.truncate(total - to_remove, p.stride, p.left);
      }
      break;
    case TruncationStrategy::kOnlyFirst:
    case TruncationStrategy::kOnlySecond: {
      Encoding* target = p.strategy == TruncationStrategy::kOnlyFirst ? &a : pair;
      CT_CHECK(target, "truncation only_second needs a pair of sequences");
      CT_CHECK(target->size() > to_remove, "truncation: the sequence to truncate has ", target->size(),
               " tokens, too short to remove the ", to_remove, " that exceed max_length ", p.max_length);
      target->truncate(target->size() - to_remove, p.stride, p.left);
      break;
    }
  }
}

void pad_encodings(std::vector<Encoding*>& batch, const PaddingParams& p) {
  if (batch.empty()) return;
  size_t len = p.fixed;
  if (len == 0) {
    for (const Encoding* e : batch) len = std::max(len, e->size());
  }
  if (p.pad_to_multiple_of > 0 && len % p.pad_to_multiple_of > 0)
    len += p.pad_to_multiple_of - len % p.pad_to_multiple_of;
  for (Encoding* e : batch) e->pad(len, p.pad_id, p.pad_type_id, p.pad_token, p.left);
}

}  // namespace ct::text
