// Python's two string-formatting languages, as the `format` filter (printf-style `%`) and the str.format
// method reach them from a template, and Python's arithmetic operators on the engine's values.
#pragma once

#include <string>

#include "text/jinja_value.h"

namespace ct::text::py {

// `fmt % args`: a tuple supplies positional values, a dict named ones (`%(key)s`), anything else one value.
std::string percent_format(const std::string& fmt, const jinja::Value& args);
// fmt.format(*args, **kwargs) with the format-spec mini-language for str, int and float.
std::string str_format(const std::string& fmt, const jinja::CallArgs& args);
// format(value, spec) for one value.
std::string format_value(const jinja::Value& v, const std::string& spec);

// a <op> b for + - * / // % **, raising Python's TypeError/ZeroDivisionError messages; `max_bytes` bounds
// the strings and lists that * and + build.
jinja::Value binary_op(const std::string& op, const jinja::Value& a, const jinja::Value& b, size_t max_bytes);
// `item in container`.
bool contains(const jinja::Value& container, const jinja::Value& item);

}  // namespace ct::text::py
