// Jinja2's recursive-descent parser (jinja2/parser.py) function for function, over our tokens. After parsing,
// one pass checks filter and test names as Jinja2's compiler does: an unknown one is a template error,
// except inside an `if` or a conditional expression, where Jinja2 defers it to the moment it runs.
#include "text/jinja_parser.h"

#include <set>

#include "text/jinja_builtins.h"
#include "text/jinja_error.h"
#include "text/jinja_lexer.h"
#include "text/py_text.h"

namespace ct::text::jinja {

Expr::~Expr() {
  std::vector<ExprPtr> pending;
  auto take = [&pending](Expr& e) {
    for (ExprPtr* x : {&e.a, &e.b, &e.c, &e.d}) {
      if (*x) pending.push_back(std::move(*x));
    }
    for (auto& x : e.items) pending.push_back(std::move(x));
    for (auto& [k, x] : e.kwargs) pending.push_back(std::move(x));
    e.items.clear();
    e.kwargs.clear();
  };
  take(*this);
  while (!pending.empty()) {
    ExprPtr e = std::move(pending.back());
    pending.pop_back();
    if (e) take(*e);
  }
}

namespace {

constexpr int kMaxDepth = 200;
// Operator chains and postfix chains build deep trees without recursing in the parser; past this height a
// template is refused, so evaluating it cannot exhaust the stack.
constexpr int kMaxExprHeight = 1000;

class Parser {
 public:
  explicit Parser(std::vector<Token> tokens) : toks_(std::move(tokens)) {}

  std::shared_ptr<const Template> run() {
    auto t = std::make_shared<Template>();
    t->body = subparse({});
    if (cur().type != Tok::kEnd) fail_at(cur(), "unexpected '" + describe(cur()) + "'");
    for (auto& s : t->body) check(*s, false);
    return t;
  }

 private:
  // ---- token stream -------------------------------------------------------------------------------------
  const Token& cur() const { return toks_[i_]; }
  const Token& look() const { return toks_[std::min(i_ + 1, toks_.size() - 1)]; }
  const Token& next() {
    const Token& t = toks_[i_];
    if (i_ + 1 < toks_.size()) ++i_;
    return t;
  }
  bool is_op(const char* op) const { return cur().type == Tok::kOperator && cur().text == op; }
  bool is_name(const char* n) const { return cur().type == Tok::kName && cur().text == n; }
  bool skip_op(const char* op) {
    if (!is_op(op)) return false;
    next();
    return true;
  }
  bool skip_name(const char* n) {
    if (!is_name(n)) return false;
    next();
    return true;
  }
  static std::string describe(const Token& t) {
    switch (t.type) {
      case Tok::kText:
        return "template data";
      case Tok::kVarBegin:
        return "{{";
      case Tok::kVarEnd:
        return "end of print statement";
      case Tok::kBlockBegin:
        return "{%";
      case Tok::kBlockEnd:
        return "end of statement block";
      case Tok::kEnd:
        return "end of template";
      case Tok::kString:
        return py::repr(t.text);
      default:
        return t.text;
    }
  }
  [[noreturn]] static void fail_at(const Token& t, const std::string& msg) {
    throw JinjaError(msg, t.line, t.column);
  }
  const Token& expect_op(const char* op) {
    if (!is_op(op)) fail_at(cur(), std::string("expected token '") + op + "', got '" + describe(cur()) + "'");
    return next();
  }
  const Token& expect_name() {
    if (cur().type != Tok::kName) fail_at(cur(), "expected token 'name', got '" + describe(cur()) + "'");
    return next();
  }
  void expect_block_end() {
    if (cur().type != Tok::kBlockEnd)
      fail_at(cur(), "expected token 'end of statement block', got '" + describe(cur()) + "'");
    next();
  }
  static Pos pos_of(const Token& t) { return Pos{t.line, t.column}; }

  struct DepthGuard {
    explicit DepthGuard(Parser& p) : p_(p) {
      if (++p_.depth_ > kMaxDepth)
        fail_at(p_.cur(), "template nesting deeper than " + std::to_string(kMaxDepth));
    }
    ~DepthGuard() { --p_.depth_; }
    Parser& p_;
  };

  static ExprPtr make(ExprKind k, Pos p) {
    auto e = std::make_unique<Expr>();
    e->kind = k;
    e->pos = p;
    return e;
  }
  static StmtPtr make_stmt(StmtKind k, Pos p) {
    auto s = std::make_unique<Stmt>();
    s->kind = k;
    s->pos = p;
    return s;
  }

  // ---- statements ---------------------------------------------------------------------------------------
  // Parses until a block tag whose name is in `end`, leaving the stream on that name.
  Body subparse(const std::set<std::string>& end) {
    DepthGuard g(*this);
    Body body;
    while (cur().type != Tok::kEnd) {
      const Token& t = cur();
      if (t.type == Tok::kText) {
        auto s = make_stmt(StmtKind::kText, pos_of(t));
        s->text = t.text;
        body.push_back(std::move(s));
        next();
      } else if (t.type == Tok::kVarBegin) {
        next();
        auto s = make_stmt(StmtKind::kOutput, pos_of(cur()));
        s->expr = parse_tuple(false, true, {});
        if (cur().type != Tok::kVarEnd)
          fail_at(cur(), "expected token 'end of print statement', got '" + describe(cur()) + "'");
        next();
        body.push_back(std::move(s));
      } else if (t.type == Tok::kBlockBegin) {
        next();
        if (cur().type == Tok::kName && end.count(cur().text)) return body;
        body.push_back(parse_statement());
        expect_block_end();
      } else {
        fail_at(t, "unexpected '" + describe(t) + "'");
      }
    }
    if (!end.empty()) {
      std::string want;
      for (const auto& e : end) want += (want.empty() ? "'" : " or '") + e + "'";
      fail_at(cur(), "Unexpected end of template. Jinja was looking for the following tags: " + want + ".");
    }
    return body;
  }

  // After the tag's own tokens: `%}`, then the body up to one of `end`, leaving the stream on its name (or
  // past it with drop_needle).
  Body parse_statements(const std::set<std::string>& end, bool drop_needle) {
    skip_op(":");
    expect_block_end();
    Body b = subparse(end);
    if (cur().type == Tok::kEnd) fail_at(cur(), "unexpected end of template");
    if (drop_needle) next();
    return b;
  }

  StmtPtr parse_statement() {
    DepthGuard g(*this);
    const Token& t = cur();
    if (t.type != Tok::kName) fail_at(t, "tag name expected");
    const std::string& n = t.text;
    if (n == "for") return parse_for();
    if (n == "if") return parse_if();
    if (n == "set") return parse_set();
    if (n == "macro") return parse_macro();
    if (n == "call") return parse_call_block();
    if (n == "filter") return parse_filter_block();
    if (n == "with") return parse_with();
    if (n == "generation") {
      auto s = make_stmt(StmtKind::kGeneration, pos_of(next()));
      s->body = parse_statements({"endgeneration"}, true);
      return s;
    }
    if (n == "break" || n == "continue") {
      if (loop_depth_ == 0) fail_at(t, "'" + n + "' outside of a loop");
      auto s = make_stmt(n == "break" ? StmtKind::kBreak : StmtKind::kContinue, pos_of(next()));
      return s;
    }
    if (n == "autoescape") {
      // Autoescape stays off in transformers' environment; the block only scopes its body.
      auto s = make_stmt(StmtKind::kWith, pos_of(next()));
      parse_expression(true);
      s->body = parse_statements({"endautoescape"}, true);
      return s;
    }
    fail_at(t, "Encountered unknown tag '" + n + "'.");
  }

  // Names, or a tuple of names (for targets and `set a, b = ...`), optionally parenthesized.
  std::vector<std::string> parse_assign_names(const char* stop_name) {
    std::vector<std::string> names;
    while (true) {
      if (skip_op("(")) {
        auto inner = parse_assign_names(nullptr);
        expect_op(")");
        names.insert(names.end(), inner.begin(), inner.end());
      } else {
        const Token& t = expect_name();
        if (t.text == "true" || t.text == "false" || t.text == "none" || t.text == "True" ||
            t.text == "False" || t.text == "None") {
          fail_at(t, "can't assign to '" + t.text + "'");
        }
        names.push_back(t.text);
      }
      if (!skip_op(",")) break;
      if ((stop_name && is_name(stop_name)) || is_op("=") || is_op(")")) break;
    }
    return names;
  }

  StmtPtr parse_for() {
    auto s = make_stmt(StmtKind::kFor, pos_of(next()));
    s->targets = parse_assign_names("in");
    if (!skip_name("in")) fail_at(cur(), "expected token 'in', got '" + describe(cur()) + "'");
    s->expr = parse_tuple(false, false, {"recursive"});
    if (skip_name("if")) s->cond = parse_expression(true);
    s->recursive = skip_name("recursive");
    ++loop_depth_;
    s->body = parse_statements({"endfor", "else"}, false);
    --loop_depth_;
    if (next().text != "endfor") s->else_body = parse_statements({"endfor"}, true);
    return s;
  }

  StmtPtr parse_if() {
    auto s = make_stmt(StmtKind::kIf, pos_of(next()));
    while (true) {
      s->conditions.push_back(parse_tuple(false, false, {}));
      s->bodies.push_back(parse_statements({"elif", "else", "endif"}, false));
      const std::string tag = next().text;
      if (tag == "elif") continue;
      if (tag == "else") s->else_body = parse_statements({"endif"}, true);
      break;
    }
    return s;
  }

  StmtPtr parse_set() {
    const Token& kw = next();
    if (cur().type == Tok::kName && look().type == Tok::kOperator && look().text == ".") {
      auto s = make_stmt(StmtKind::kSet, pos_of(kw));
      s->targets.push_back(next().text);
      next();
      s->targets.push_back(expect_name().text);
      s->attr_target = true;
      if (!is_op("=")) fail_at(cur(), "expected token '=', got '" + describe(cur()) + "'");
      next();
      s->expr = parse_tuple(false, true, {});
      return s;
    }
    auto names = parse_assign_names(nullptr);
    if (skip_op("=")) {
      auto s = make_stmt(StmtKind::kSet, pos_of(kw));
      s->targets = std::move(names);
      s->expr = parse_tuple(false, true, {});
      return s;
    }
    if (names.size() != 1) fail_at(cur(), "expected token '=', got '" + describe(cur()) + "'");
    auto s = make_stmt(StmtKind::kSetBlock, pos_of(kw));
    s->targets = std::move(names);
    if (is_op("|")) s->expr = parse_filter(nullptr, false);
    s->body = parse_statements({"endset"}, true);
    return s;
  }

  void parse_signature(std::vector<Param>& params) {
    expect_op("(");
    while (!is_op(")")) {
      if (!params.empty()) expect_op(",");
      if (is_op(")")) break;
      Param p;
      p.name = expect_name().text;
      if (skip_op("=")) {
        p.default_value = parse_expression(true);
      } else if (!params.empty() && params.back().default_value) {
        fail_at(cur(), "non-default argument follows default argument");
      }
      params.push_back(std::move(p));
    }
    next();
  }

  StmtPtr parse_macro() {
    auto s = make_stmt(StmtKind::kMacro, pos_of(next()));
    s->text = expect_name().text;
    parse_signature(s->params);
    const int saved = loop_depth_;
    loop_depth_ = 0;
    s->body = parse_statements({"endmacro"}, true);
    loop_depth_ = saved;
    note_special_names(*s);
    return s;
  }

  static void names_in(const Expr& e, std::set<std::string>& out, int height = 0) {
    if (height > kMaxExprHeight) too_deep(e);
    if (e.kind == ExprKind::kName) out.insert(e.name);
    for (const Expr* x : {e.a.get(), e.b.get(), e.c.get(), e.d.get()}) {
      if (x) names_in(*x, out, height + 1);
    }
    for (const auto& x : e.items) names_in(*x, out, height + 1);
    for (const auto& [k, x] : e.kwargs) names_in(*x, out, height + 1);
  }
  [[noreturn]] static void too_deep(const Expr& e) {
    throw JinjaError("expression nested deeper than " + std::to_string(kMaxExprHeight), e.pos.line,
                     e.pos.column);
  }
  static void names_in(const Stmt& s, std::set<std::string>& out) {
    for (const Expr* x : {s.expr.get(), s.cond.get()}) {
      if (x) names_in(*x, out);
    }
    for (const auto& x : s.conditions) names_in(*x, out);
    for (const auto& b : s.bodies) {
      for (const auto& x : b) names_in(*x, out);
    }
    for (const auto& x : s.body) names_in(*x, out);
    for (const auto& x : s.else_body) names_in(*x, out);
    for (const auto& p : s.params) {
      if (p.default_value) names_in(*p.default_value, out);
    }
    for (const auto& [k, x] : s.assignments) names_in(*x, out);
  }
  static void note_special_names(Stmt& s) {
    std::set<std::string> names;
    for (const auto& x : s.body) names_in(*x, names);
    s.uses_varargs = names.count("varargs") > 0;
    s.uses_kwargs = names.count("kwargs") > 0;
    s.uses_caller = names.count("caller") > 0;
  }

  StmtPtr parse_call_block() {
    auto s = make_stmt(StmtKind::kCallBlock, pos_of(next()));
    if (is_op("(")) parse_signature(s->params);
    s->expr = parse_expression(true);
    if (s->expr->kind != ExprKind::kCall) fail_at(cur(), "expected call");
    s->body = parse_statements({"endcall"}, true);
    note_special_names(*s);
    return s;
  }

  StmtPtr parse_filter_block() {
    auto s = make_stmt(StmtKind::kFilterBlock, pos_of(next()));
    s->expr = parse_filter(nullptr, true);
    s->body = parse_statements({"endfilter"}, true);
    return s;
  }

  StmtPtr parse_with() {
    auto s = make_stmt(StmtKind::kWith, pos_of(next()));
    while (cur().type != Tok::kBlockEnd) {
      if (!s->assignments.empty()) expect_op(",");
      const std::string name = expect_name().text;
      expect_op("=");
      s->assignments.emplace_back(name, parse_expression(true));
    }
    s->body = parse_statements({"endwith"}, true);
    return s;
  }

  // ---- expressions --------------------------------------------------------------------------------------
  bool is_tuple_end(const std::set<std::string>& extra) const {
    const Token& t = cur();
    if (t.type == Tok::kVarEnd || t.type == Tok::kBlockEnd || t.type == Tok::kEnd) return true;
    if (t.type == Tok::kOperator && t.text == ")") return true;
    return t.type == Tok::kName && extra.count(t.text);
  }

  ExprPtr parse_tuple(bool explicit_parens, bool with_condexpr, const std::set<std::string>& extra_end) {
    const Pos p = pos_of(cur());
    std::vector<ExprPtr> args;
    bool is_tuple = false;
    while (true) {
      if (!args.empty()) expect_op(",");
      if (is_tuple_end(extra_end)) break;
      args.push_back(parse_expression(with_condexpr));
      if (is_op(",")) {
        is_tuple = true;
      } else {
        break;
      }
    }
    if (!is_tuple) {
      if (!args.empty()) return std::move(args[0]);
      if (!explicit_parens) fail_at(cur(), "Expected an expression, got '" + describe(cur()) + "'");
    }
    auto e = make(ExprKind::kTuple, p);
    e->items = std::move(args);
    return e;
  }

  ExprPtr parse_expression(bool with_condexpr) {
    DepthGuard g(*this);
    return with_condexpr ? parse_condexpr() : parse_or();
  }

  ExprPtr parse_condexpr() {
    ExprPtr e = parse_or();
    while (is_name("if")) {
      const Pos p = pos_of(next());
      auto c = make(ExprKind::kCondition, p);
      c->a = parse_or();
      c->b = std::move(e);
      if (skip_name("else")) c->c = parse_condexpr();
      e = std::move(c);
    }
    return e;
  }

  ExprPtr binary(const std::string& op, ExprPtr l, ExprPtr r, Pos p) {
    auto e = make(ExprKind::kBinary, p);
    e->name = op;
    e->a = std::move(l);
    e->b = std::move(r);
    return e;
  }

  ExprPtr parse_or() {
    ExprPtr l = parse_and();
    while (is_name("or")) {
      const Pos p = pos_of(next());
      l = binary("or", std::move(l), parse_and(), p);
    }
    return l;
  }
  ExprPtr parse_and() {
    ExprPtr l = parse_not();
    while (is_name("and")) {
      const Pos p = pos_of(next());
      l = binary("and", std::move(l), parse_not(), p);
    }
    return l;
  }
  ExprPtr parse_not() {
    if (is_name("not")) {
      DepthGuard g(*this);
      auto e = make(ExprKind::kNot, pos_of(next()));
      e->a = parse_not();
      return e;
    }
    return parse_compare();
  }
  ExprPtr parse_compare() {
    const Pos p = pos_of(cur());
    ExprPtr first = parse_math1();
    std::vector<std::string> ops;
    std::vector<ExprPtr> rest;
    while (true) {
      const Token& t = cur();
      if (t.type == Tok::kOperator && (t.text == "==" || t.text == "!=" || t.text == "<" || t.text == "<=" ||
                                       t.text == ">" || t.text == ">=")) {
        ops.push_back(next().text);
      } else if (is_name("in")) {
        next();
        ops.push_back("in");
      } else if (is_name("not") && look().type == Tok::kName && look().text == "in") {
        next();
        next();
        ops.push_back("notin");
      } else {
        break;
      }
      rest.push_back(parse_math1());
    }
    if (ops.empty()) return first;
    auto e = make(ExprKind::kCompare, p);
    e->a = std::move(first);
    e->items = std::move(rest);
    e->ops = std::move(ops);
    return e;
  }
  ExprPtr parse_math1() {
    ExprPtr l = parse_concat();
    while (is_op("+") || is_op("-")) {
      const Token& t = next();
      l = binary(t.text, std::move(l), parse_concat(), pos_of(t));
    }
    return l;
  }
  ExprPtr parse_concat() {
    ExprPtr l = parse_math2();
    while (is_op("~")) {
      const Token& t = next();
      l = binary("~", std::move(l), parse_math2(), pos_of(t));
    }
    return l;
  }
  ExprPtr parse_math2() {
    ExprPtr l = parse_pow();
    while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
      const Token& t = next();
      l = binary(t.text, std::move(l), parse_pow(), pos_of(t));
    }
    return l;
  }
  ExprPtr parse_pow() {
    ExprPtr l = parse_unary(true);
    while (is_op("**")) {
      const Token& t = next();
      l = binary("**", std::move(l), parse_unary(true), pos_of(t));
    }
    return l;
  }
  ExprPtr parse_unary(bool with_filter) {
    DepthGuard g(*this);
    ExprPtr node;
    if (is_op("-") || is_op("+")) {
      const Token& t = next();
      node = make(t.text == "-" ? ExprKind::kNeg : ExprKind::kPos, pos_of(t));
      node->a = parse_unary(false);
    } else {
      node = parse_primary();
    }
    node = parse_postfix(std::move(node));
    if (with_filter) node = parse_filter_expr(std::move(node));
    return node;
  }

  ExprPtr parse_primary() {
    const Token& t = cur();
    const Pos p = pos_of(t);
    switch (t.type) {
      case Tok::kName: {
        next();
        auto e = make(ExprKind::kLiteral, p);
        if (t.text == "true" || t.text == "True") {
          e->value = Value::boolean(true);
        } else if (t.text == "false" || t.text == "False") {
          e->value = Value::boolean(false);
        } else if (t.text == "none" || t.text == "None") {
          e->value = Value::none();
        } else {
          e->kind = ExprKind::kName;
          e->name = t.text;
        }
        return e;
      }
      case Tok::kString: {
        std::string s;
        while (cur().type == Tok::kString) s += next().text;
        auto e = make(ExprKind::kLiteral, p);
        e->value = Value::string(std::move(s));
        return e;
      }
      case Tok::kInteger: {
        next();
        auto e = make(ExprKind::kLiteral, p);
        std::string digits = t.text;
        int base = 10;
        if (digits.size() > 2 && digits[0] == '0' && std::isalpha(static_cast<unsigned char>(digits[1]))) {
          const char b = static_cast<char>(std::tolower(static_cast<unsigned char>(digits[1])));
          base = b == 'x' ? 16 : b == 'o' ? 8 : 2;
          digits = digits.substr(2);
        }
        const auto v = py::parse_int(digits, base);
        if (!v) fail_at(t, "integer literal " + t.text + " is out of range");
        e->value = Value::integer(*v);
        return e;
      }
      case Tok::kFloat: {
        next();
        auto e = make(ExprKind::kLiteral, p);
        e->value = Value::number(std::strtod(t.text.c_str(), nullptr));
        return e;
      }
      case Tok::kOperator:
        if (t.text == "(") {
          next();
          ExprPtr e = parse_tuple(true, true, {});
          expect_op(")");
          return e;
        }
        if (t.text == "[") {
          next();
          auto e = make(ExprKind::kList, p);
          while (!is_op("]")) {
            if (!e->items.empty()) expect_op(",");
            if (is_op("]")) break;
            e->items.push_back(parse_expression(true));
          }
          expect_op("]");
          return e;
        }
        if (t.text == "{") {
          next();
          auto e = make(ExprKind::kDict, p);
          while (!is_op("}")) {
            if (!e->items.empty()) expect_op(",");
            if (is_op("}")) break;
            e->items.push_back(parse_expression(true));
            expect_op(":");
            e->items.push_back(parse_expression(true));
          }
          expect_op("}");
          return e;
        }
        break;
      default:
        break;
    }
    fail_at(t, "unexpected '" + describe(t) + "'");
  }

  ExprPtr parse_postfix(ExprPtr node) {
    while (true) {
      if (is_op(".") || is_op("[")) {
        node = parse_subscript(std::move(node));
      } else if (is_op("(")) {
        node = parse_call(std::move(node));
      } else {
        return node;
      }
    }
  }

  ExprPtr parse_filter_expr(ExprPtr node) {
    while (true) {
      if (is_op("|")) {
        node = parse_filter(std::move(node), false);
      } else if (is_name("is")) {
        node = parse_test(std::move(node));
      } else if (is_op("(")) {
        node = parse_call(std::move(node));
      } else {
        return node;
      }
    }
  }

  ExprPtr parse_subscript(ExprPtr node) {
    DepthGuard g(*this);
    const Token& t = next();
    if (t.text == ".") {
      const Token& a = cur();
      if (a.type == Tok::kName) {
        next();
        auto e = make(ExprKind::kGetAttr, node->pos);
        e->a = std::move(node);
        e->name = a.text;
        return e;
      }
      if (a.type == Tok::kInteger) {
        next();
        auto e = make(ExprKind::kGetItem, node->pos);
        e->a = std::move(node);
        e->b = make(ExprKind::kLiteral, pos_of(a));
        e->b->value = Value::integer(py::parse_int(a.text, 10).value_or(0));
        return e;
      }
      fail_at(a, "expected name or number");
    }
    std::vector<ExprPtr> args;
    while (!is_op("]")) {
      if (!args.empty()) expect_op(",");
      args.push_back(parse_subscribed());
    }
    expect_op("]");
    // Errors in `a.b[c]` point at the start of the whole expression.
    auto e = make(ExprKind::kGetItem, node->pos);
    e->a = std::move(node);
    if (args.size() == 1) {
      if (args[0]->kind == ExprKind::kSlice) {
        args[0]->pos = e->pos;
        args[0]->a = std::move(e->a);
        return std::move(args[0]);
      }
      e->b = std::move(args[0]);
    } else {
      auto tup = make(ExprKind::kTuple, pos_of(t));
      tup->items = std::move(args);
      e->b = std::move(tup);
    }
    return e;
  }

  // One subscript: an expression or a slice (returned as a kSlice with its object still unset).
  ExprPtr parse_subscribed() {
    const Pos p = pos_of(cur());
    ExprPtr start;
    if (!is_op(":")) {
      start = parse_expression(true);
      if (!is_op(":")) return start;
    }
    next();
    auto s = make(ExprKind::kSlice, p);
    s->b = std::move(start);
    if (!is_op(":") && !is_op("]") && !is_op(",")) s->c = parse_expression(true);
    if (skip_op(":")) {
      if (!is_op("]") && !is_op(",")) s->d = parse_expression(true);
    }
    return s;
  }

  // `(args)` into `e` (positional in items, keywords in kwargs, *x in c, **y in d).
  void parse_call_args(Expr& e) {
    expect_op("(");
    bool first = true;
    while (!is_op(")")) {
      if (!first) {
        expect_op(",");
        if (is_op(")")) break;
      }
      first = false;
      if (is_op("*") || is_op("**")) {
        const bool dstar = next().text == "**";
        (dstar ? e.d : e.c) = parse_expression(true);
      } else if (cur().type == Tok::kName && look().type == Tok::kOperator && look().text == "=") {
        const std::string key = next().text;
        next();
        e.kwargs.emplace_back(key, parse_expression(true));
      } else {
        if (!e.kwargs.empty() || e.d) fail_at(cur(), "invalid syntax for function call expression");
        e.items.push_back(parse_expression(true));
      }
    }
    next();
  }

  ExprPtr parse_call(ExprPtr node) {
    DepthGuard g(*this);
    auto e = make(ExprKind::kCall, node->pos);
    e->a = std::move(node);
    parse_call_args(*e);
    return e;
  }

  std::string dotted_name() {
    std::string n = expect_name().text;
    while (is_op(".")) {
      next();
      n += "." + expect_name().text;
    }
    return n;
  }

  ExprPtr parse_filter(ExprPtr node, bool start_inline) {
    while (is_op("|") || start_inline) {
      DepthGuard g(*this);
      if (!start_inline) next();
      start_inline = false;
      auto e = make(ExprKind::kFilter, pos_of(cur()));
      e->name = dotted_name();
      if (is_op("(")) parse_call_args(*e);
      e->a = std::move(node);
      node = std::move(e);
    }
    return node;
  }

  ExprPtr parse_test(ExprPtr node) {
    DepthGuard g(*this);
    next();  // is
    auto e = make(ExprKind::kTest, pos_of(cur()));
    e->negated = skip_name("not");
    e->name = dotted_name();
    const Token& t = cur();
    if (is_op("(")) {
      parse_call_args(*e);
    } else if ((t.type == Tok::kName || t.type == Tok::kString || t.type == Tok::kInteger ||
                t.type == Tok::kFloat || (t.type == Tok::kOperator && (t.text == "[" || t.text == "{"))) &&
               !(t.type == Tok::kName && (t.text == "else" || t.text == "or" || t.text == "and"))) {
      if (t.type == Tok::kName && t.text == "is") fail_at(t, "You cannot chain multiple tests with is");
      e->items.push_back(parse_postfix(parse_primary()));
    }
    e->a = std::move(node);
    return e;
  }

  // ---- filter and test names, as Jinja2's compiler checks them ------------------------------------------
  void check(const Expr& e, bool soft, int height = 0) {
    if (height > kMaxExprHeight) too_deep(e);
    if (e.kind == ExprKind::kCondition) soft = true;
    if (e.kind == ExprKind::kFilter && !soft && !has_filter(e.name)) {
      throw JinjaError("No filter named '" + e.name + "'.", e.pos.line, e.pos.column);
    }
    if (e.kind == ExprKind::kTest && !soft && !has_test(e.name)) {
      throw JinjaError("No test named '" + e.name + "'.", e.pos.line, e.pos.column);
    }
    for (const Expr* x : {e.a.get(), e.b.get(), e.c.get(), e.d.get()}) {
      if (x) check(*x, soft, height + 1);
    }
    for (const auto& x : e.items) check(*x, soft, height + 1);
    for (const auto& [k, x] : e.kwargs) check(*x, soft, height + 1);
  }
  void check(const Stmt& s, bool soft) {
    if (s.kind == StmtKind::kIf) soft = true;
    for (const Expr* x : {s.expr.get(), s.cond.get()}) {
      if (x) check(*x, soft);
    }
    for (const auto& x : s.conditions) check(*x, soft);
    for (const auto& b : s.bodies) {
      for (const auto& x : b) check(*x, soft);
    }
    for (const auto& x : s.body) check(*x, soft);
    for (const auto& x : s.else_body) check(*x, soft);
    for (const auto& p : s.params) {
      if (p.default_value) check(*p.default_value, soft);
    }
    for (const auto& [k, x] : s.assignments) check(*x, soft);
  }

  std::vector<Token> toks_;
  size_t i_ = 0;
  int depth_ = 0;
  int loop_depth_ = 0;
};

}  // namespace

std::shared_ptr<const Template> parse(const std::string& source) {
  return Parser(lex(source)).run();
}

}  // namespace ct::text::jinja
