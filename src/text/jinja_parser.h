// Tokens -> Template, with Jinja2's grammar and operator precedence (jinja2/parser.py): the statements
// chat templates use (if/for/set/macro/call/filter/with/break/continue and transformers' generation tag),
// expressions from conditional expressions down to postfix subscripts, calls, filters and tests.
#pragma once

#include <memory>
#include <string>

#include "text/jinja_ast.h"

namespace ct::text::jinja {

// Throws JinjaError with the line and column of the offending token. Nesting deeper than a fixed bound is an
// error too, so a hostile template cannot exhaust the stack.
std::shared_ptr<const Template> parse(const std::string& source);

}  // namespace ct::text::jinja
