// The parsed template: Jinja2's node kinds (jinja2/nodes.py) that chat templates can reach, each carrying
// the line and column of its first token so runtime errors point into the template.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "text/jinja_value.h"

namespace ct::text::jinja {

struct Expr;
struct Stmt;
using ExprPtr = std::unique_ptr<Expr>;
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

struct Pos {
  int line = 0;
  int column = 0;
};

enum class ExprKind {
  kLiteral,    // value
  kName,       // name
  kList,       // items
  kTuple,      // items
  kDict,       // items as key, value, key, value...
  kGetAttr,    // a.name
  kGetItem,    // a[b]
  kSlice,      // a[b:c:d], absent parts null
  kCall,       // a(args, kwargs, *b, **c)
  kFilter,     // a|name(args, kwargs); a null inside {% filter %}
  kTest,       // a is [not] name(args)
  kNot,        // not a
  kNeg,        // -a
  kPos,        // +a
  kBinary,     // a op b: + - * / // % ** ~ and or
  kCompare,    // a op1 b op2 c...: == != < <= > >= in notin
  kCondition,  // b if a else c (c may be null)
};

struct Expr {
  Expr() = default;
  Expr(const Expr&) = delete;
  Expr& operator=(const Expr&) = delete;
  // Iterative: a chain like `1 + 1 + ... + 1` is a tree as deep as it is long, and a recursive destructor
  // would exhaust the stack on a hostile template before any limit could refuse it.
  ~Expr();

  ExprKind kind;
  Pos pos;
  Value value;
  std::string name;  // name, attribute, filter/test name, binary operator
  ExprPtr a, b, c, d;
  std::vector<ExprPtr> items;                           // literals, positional call arguments
  std::vector<std::pair<std::string, ExprPtr>> kwargs;  // keyword call arguments
  std::vector<std::string> ops;                         // comparison operators, one per items[i]
  bool negated = false;                                 // `is not`
};

enum class StmtKind {
  kText,         // text
  kOutput,       // {{ expr }}
  kIf,           // conditions[i] -> bodies[i]; else_body
  kFor,          // targets in expr [if cond] body [else else_body]
  kSet,          // targets (or ns.attr) = expr
  kSetBlock,     // {% set x %}body{% endset %}, optional filter chain in expr (with a null innermost input)
  kMacro,        // name(params) body
  kCallBlock,    // {% call(params) expr %} body
  kFilterBlock,  // {% filter f %} body
  kWith,         // {% with a = 1 %} body
  kBreak,
  kContinue,
  kGeneration,  // {% generation %} body
};

struct Param {
  std::string name;
  ExprPtr default_value;  // null: required
};

struct Stmt {
  StmtKind kind;
  Pos pos;
  std::string text;                  // text, macro name
  ExprPtr expr;                      // output, for iterable, set value, call expression, filter chain
  ExprPtr cond;                      // for's `if`
  std::vector<std::string> targets;  // for/set names; set `ns.attr` as {ns, attr} with attr_target
  bool attr_target = false;
  bool recursive = false;
  std::vector<ExprPtr> conditions;
  std::vector<Body> bodies;
  Body body, else_body;
  std::vector<Param> params;
  std::vector<std::pair<std::string, ExprPtr>> assignments;  // with
  // Macros: whether the body reads varargs / kwargs / caller, which decides (as in Jinja2) whether extra
  // arguments are accepted.
  bool uses_varargs = false, uses_kwargs = false, uses_caller = false;
};

struct Template {
  Body body;
};

}  // namespace ct::text::jinja
