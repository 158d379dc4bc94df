// Python's str semantics over UTF-8 strings, for the string methods and filters chat templates call: Python
// indexes, slices and counts code points, and its strip()/split()/isspace() use Unicode whitespace, so a
// template that trims a U+3000 or slices a CJK string gets what transformers gets.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ct::text::py {

std::u32string decode(std::string_view s);
std::string encode(std::u32string_view s);
size_t length(std::string_view s);  // in code points

bool isspace(char32_t c);  // Python's str.isspace for one character
bool isprintable(char32_t c);

// str.strip/lstrip/rstrip: whitespace when `chars` is nullopt, else any of its characters.
std::string strip(std::string_view s, const std::optional<std::string>& chars, bool left, bool right);
// str.split(sep, maxsplit) / rsplit: whitespace runs when sep is nullopt. An empty sep is a ValueError.
std::vector<std::string> split(std::string_view s, const std::optional<std::string>& sep, int64_t maxsplit,
                               bool from_right);
std::vector<std::string> splitlines(std::string_view s, bool keepends);
std::string replace(std::string_view s, std::string_view old, std::string_view repl, int64_t count);
// Python's find on code points: the code-point index, or -1.
int64_t find(std::string_view s, std::string_view sub, bool from_right);
int64_t count(std::string_view s, std::string_view sub);

std::string upper(std::string_view s);
std::string lower(std::string_view s);
std::string title(std::string_view s);       // str.title
std::string capitalize(std::string_view s);  // str.capitalize
std::string swapcase(std::string_view s);
bool is_cased_lower(std::string_view s);  // str.islower
bool is_cased_upper(std::string_view s);  // str.isupper
bool isalpha(std::string_view s);
bool isdigit(std::string_view s);
bool isalnum(std::string_view s);
bool isspace(std::string_view s);

// repr() of a str: the quote Python picks, its escapes, printable non-ASCII kept.
std::string repr(std::string_view s);

// Python's integer parsing for int(str): optional sign, underscores between digits, surrounding whitespace.
std::optional<int64_t> parse_int(std::string_view s, int base);
std::optional<double> parse_float(std::string_view s);

}  // namespace ct::text::py
