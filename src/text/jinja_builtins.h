// What Jinja2's ImmutableSandboxedEnvironment offers a template beyond syntax, with transformers' additions:
// filters and tests (Jinja2's builtins, transformers' tojson), attribute and item lookup in the sandbox's
// order (Python attribute first for `.x`, item first for `[x]`), the str/list/dict methods templates call
// (mutating ones are unsafe, as in the immutable sandbox), and the globals (range, dict, namespace, cycler,
// joiner, raise_exception, strftime_now).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "text/jinja_value.h"

namespace ct::text::jinja {

class Renderer;

bool has_filter(const std::string& name);
bool has_test(const std::string& name);
Value apply_filter(Renderer& r, const std::string& name, const Value& input, const CallArgs& args);
bool apply_test(Renderer& r, const std::string& name, const Value& input, const CallArgs& args);

// `obj.name` and `obj[key]`; a miss is an Undefined that says what was missing. The object must not be
// Undefined (the renderer raises its hint first).
Value get_attr(const Value& obj, const std::string& name);
Value get_item(const Value& obj, const Value& key);
// obj[start:stop:step] on str, list or tuple (absent parts Undefined), else Undefined.
Value slice(const Value& obj, const Value& start, const Value& stop, const Value& step);

// Python's iter(): the items of a list or tuple, a dict's keys, a str's characters, nothing for Undefined;
// TypeError otherwise.
List iterate(const Value& v);

std::vector<std::pair<std::string, Value>> globals();

}  // namespace ct::text::jinja
