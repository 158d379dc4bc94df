#include "text/regex.h"

#include <oniguruma.h>

#include <mutex>

#include "core/error.h"

namespace ct::text {
namespace {

void init_onig() {
  static std::once_flag once;
  std::call_once(once, [] {
    OnigEncoding encodings[] = {ONIG_ENCODING_UTF8};
    onig_initialize(encodings, 1);
  });
}

size_t utf8_len(unsigned char lead) {
  if (lead < 0x80) return 1;
  if (lead < 0xE0) return 2;
  if (lead < 0xF0) return 3;
  return 4;
}

}  // namespace

Regex::Regex(const std::string& pattern, const std::string& where) {
  init_onig();
  OnigRegex re = nullptr;
  OnigErrorInfo info;
  const auto* p = reinterpret_cast<const OnigUChar*>(pattern.data());
  const int rc =
      onig_new(&re, p, p + pattern.size(), ONIG_OPTION_NONE, ONIG_ENCODING_UTF8, ONIG_SYNTAX_RUBY, &info);
  if (rc != ONIG_NORMAL) {
    OnigUChar msg[ONIG_MAX_ERROR_MESSAGE_LEN];
    onig_error_code_to_str(msg, rc, &info);
    fail(where, ": regex '", pattern, "' is not valid (", reinterpret_cast<const char*>(msg), ")");
  }
  re_ = re;
}

Regex::~Regex() {
  if (re_) onig_free(static_cast<OnigRegex>(re_));
}

std::vector<std::pair<size_t, size_t>> Regex::find_all(std::string_view text) const {
  std::vector<std::pair<size_t, size_t>> out;
  auto* re = static_cast<OnigRegex>(re_);
  OnigRegion* region = onig_region_new();
  const auto* begin = reinterpret_cast<const OnigUChar*>(text.data());
  const auto* end = begin + text.size();
  size_t from = 0;
  bool have_last = false;
  size_t last_end = 0;
  // As rust-onig's FindMatches: an empty match right where the previous match ended is skipped by moving the
  // search start one character on.
  while (from <= text.size()) {
    const int r = onig_search(re, begin, end, begin + from, end, region, ONIG_OPTION_NONE);
    if (r < 0) break;
    const auto s = static_cast<size_t>(region->beg[0]);
    const auto e = static_cast<size_t>(region->end[0]);
    if (s == e && have_last && last_end == e) {
      from += from < text.size() ? utf8_len(static_cast<unsigned char>(text[from])) : 1;
      continue;
    }
    from = e;
    have_last = true;
    last_end = e;
    out.emplace_back(s, e);
  }
  onig_region_free(region, 1);
  return out;
}

std::string Regex::escape(std::string_view literal) {
  std::string out;
  for (char c : literal) {
    if (std::string_view("\\.+*?()|[]{}^$#&-~").find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

}  // namespace ct::text
