// The evaluator; see jinja_render.h for the semantics it keeps from Jinja2's compiled templates.
#include "text/jinja_render.h"

#include <chrono>

#include "text/jinja_builtins.h"
#include "text/jinja_error.h"
#include "text/py_format.h"
#include "text/py_text.h"

namespace ct::text::jinja {

const Value* Frame::lookup(const std::string& name) const {
  for (const Frame* f = this; f; f = f->parent.get()) {
    for (auto it = f->vars.rbegin(); it != f->vars.rend(); ++it) {
      if (it->first == name) return &it->second;
    }
  }
  return nullptr;
}

void Frame::set(const std::string& name, Value v) {
  for (auto& [k, x] : vars) {
    if (k == name) {
      x = std::move(v);
      return;
    }
  }
  vars.emplace_back(name, std::move(v));
}

Renderer::Renderer(const RenderOptions& options) : options_(options) {}

Renderer::~Renderer() {
  for (auto& ns : namespaces_) ns.mutable_entries().clear();
}

std::tm Renderer::now() const {
  if (options_.now) return options_.now();
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  localtime_r(&t, &tm);
  return tm;
}

void Renderer::check_size(size_t bytes) const {
  if (bytes > options_.limits.max_output_bytes) {
    raise("output over the limit of " + std::to_string(options_.limits.max_output_bytes) + " bytes");
  }
}

void Renderer::write(const std::string& s) {
  written_ += s.size();
  check_size(written_);
  out_->append(s);
}

size_t Renderer::top_chars() {
  counted_chars_ += py::length(std::string_view(top_).substr(counted_bytes_));
  counted_bytes_ = top_.size();
  return counted_chars_;
}

RenderResult Renderer::render(const Template& t, const std::vector<std::pair<std::string, Value>>& context) {
  auto builtins = std::make_shared<Frame>();
  builtins->vars = globals();
  auto root = std::make_shared<Frame>();
  root->parent = builtins;
  for (const auto& [k, v] : context) root->set(k, v);
  exec(t.body, root);
  result_.text = std::move(top_);
  return std::move(result_);
}

std::string Renderer::capture(const Body& body, const std::shared_ptr<Frame>& f) {
  std::string buf;
  std::string* saved = out_;
  out_ = &buf;
  try {
    exec(body, f);
  } catch (...) {
    out_ = saved;
    throw;
  }
  out_ = saved;
  return buf;
}

Renderer::Flow Renderer::exec(const Body& body, const std::shared_ptr<Frame>& f) {
  for (const auto& s : body) {
    const Flow fl = exec(*s, f);
    if (fl != Flow::kNormal) return fl;
  }
  return Flow::kNormal;
}

// Bounds the C++ recursion that nested statements, expressions and macro calls add up to.
struct Renderer::DepthGuard {
  DepthGuard(Renderer& r) : r_(r) {
    if (++r_.eval_depth_ > r_.options_.limits.max_eval_depth) {
      --r_.eval_depth_;
      raise("template evaluation nested deeper than " + std::to_string(r_.options_.limits.max_eval_depth));
    }
  }
  ~DepthGuard() { --r_.eval_depth_; }
  Renderer& r_;
};

Renderer::Flow Renderer::exec(const Stmt& s, const std::shared_ptr<Frame>& f) {
  try {
    DepthGuard guard(*this);
    switch (s.kind) {
      case StmtKind::kText:
        write(s.text);
        return Flow::kNormal;
      case StmtKind::kOutput:
        write(to_str(eval(*s.expr, f)));
        return Flow::kNormal;
      case StmtKind::kIf:
        for (size_t i = 0; i < s.conditions.size(); ++i) {
          if (eval(*s.conditions[i], f).truthy()) return exec(s.bodies[i], f);
        }
        return exec(s.else_body, f);
      case StmtKind::kFor:
        exec_for(s, f);
        return Flow::kNormal;
      case StmtKind::kSet: {
        Value v = eval(*s.expr, f);
        if (s.attr_target) {
          const Value* ns = f->lookup(s.targets[0]);
          if (!ns || !ns->is_namespace()) raise("cannot assign attribute on non-namespace object");
          Dict& d = ns->mutable_entries();
          for (auto& [k, x] : d) {
            if (k.is_string() && k.as_string() == s.targets[1]) {
              x = std::move(v);
              return Flow::kNormal;
            }
          }
          d.emplace_back(Value::string(s.targets[1]), std::move(v));
          return Flow::kNormal;
        }
        if (s.targets.size() == 1) {
          f->set(s.targets[0], std::move(v));
          return Flow::kNormal;
        }
        const List items = iterate(v);
        if (items.size() != s.targets.size()) {
          raise("ValueError: expected " + std::to_string(s.targets.size()) + " values to unpack, got " +
                std::to_string(items.size()));
        }
        for (size_t i = 0; i < items.size(); ++i) f->set(s.targets[i], items[i]);
        return Flow::kNormal;
      }
      case StmtKind::kSetBlock: {
        auto inner = std::make_shared<Frame>();
        inner->parent = f;
        Value v = Value::string(capture(s.body, inner));
        if (s.expr) {
          // The filter chain's innermost input is the block's text.
          std::vector<const Expr*> chain;
          for (const Expr* e = s.expr.get(); e; e = e->a.get()) chain.push_back(e);
          for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
            v = apply_filter(*this, (*it)->name, v, eval_args(**it, f));
          }
        }
        f->set(s.targets[0], std::move(v));
        return Flow::kNormal;
      }
      case StmtKind::kMacro:
        f->set(s.text, make_macro(s, f));
        return Flow::kNormal;
      case StmtKind::kCallBlock: {
        Value caller = make_macro(s, f);
        const Expr& call = *s.expr;
        Value fn = eval(*call.a, f);
        CallArgs args = eval_args(call, f);
        args.kwargs.emplace_back("caller", caller);
        write(to_str(this->call(fn, args)));
        return Flow::kNormal;
      }
      case StmtKind::kFilterBlock: {
        auto inner = std::make_shared<Frame>();
        inner->parent = f;
        Value v = Value::string(capture(s.body, inner));
        std::vector<const Expr*> chain;
        for (const Expr* e = s.expr.get(); e; e = e->a.get()) chain.push_back(e);
        for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
          v = apply_filter(*this, (*it)->name, v, eval_args(**it, f));
        }
        write(to_str(v));
        return Flow::kNormal;
      }
      case StmtKind::kWith: {
        auto inner = std::make_shared<Frame>();
        inner->parent = f;
        for (const auto& [k, e] : s.assignments) inner->set(k, eval(*e, f));
        return exec(s.body, inner);
      }
      case StmtKind::kBreak:
        return Flow::kBreak;
      case StmtKind::kContinue:
        return Flow::kContinue;
      case StmtKind::kGeneration: {
        // AssistantTracker: the body is rendered as a call block, then its span is taken at the length the
        // top-level output has when the block's result is produced.
        auto inner = std::make_shared<Frame>();
        inner->parent = f;
        const std::string rv = capture(s.body, inner);
        const size_t begin_char = top_chars();
        const size_t begin_byte = top_.size();
        result_.generation_chars.push_back(Span{begin_char, begin_char + py::length(rv)});
        result_.generation_bytes.push_back(Span{begin_byte, begin_byte + rv.size()});
        write(rv);
        return Flow::kNormal;
      }
    }
  } catch (const JinjaError& e) {
    if (e.has_position()) throw;
    throw JinjaError(e.message(), s.pos.line, s.pos.column);
  }
  return Flow::kNormal;
}

void Renderer::exec_for(const Stmt& s, const std::shared_ptr<Frame>& f) {
  run_loop(s, f, eval(*s.expr, f), 0);
}

void Renderer::run_loop(const Stmt& s, const std::shared_ptr<Frame>& f, const Value& iterable, int depth) {
  if (depth > options_.limits.max_call_depth)
    raise("recursive loop deeper than " + std::to_string(options_.limits.max_call_depth));
  List items = iterate(iterable);
  auto bind = [&](const std::shared_ptr<Frame>& fr, const Value& item) {
    if (s.targets.size() == 1) {
      fr->set(s.targets[0], item);
      return;
    }
    const List parts = iterate(item);
    if (parts.size() != s.targets.size()) {
      raise("ValueError: " + std::string(parts.size() > s.targets.size() ? "too many" : "not enough") +
            " values to unpack (expected " + std::to_string(s.targets.size()) + ", got " +
            std::to_string(parts.size()) + ")");
    }
    for (size_t i = 0; i < parts.size(); ++i) fr->set(s.targets[i], parts[i]);
  };
  if (s.cond) {
    // Jinja filters before looping, so loop.length and loop.last count only the kept items.
    List kept;
    for (const auto& item : items) {
      auto fr = std::make_shared<Frame>();
      fr->parent = f;
      bind(fr, item);
      if (eval(*s.cond, fr).truthy()) kept.push_back(item);
    }
    items = std::move(kept);
  }
  // Jinja2 marks the loop as iterated at the end of a body, so `else` also runs when every iteration left
  // through break or continue.
  bool completed_a_body = false;
  const int64_t n = static_cast<int64_t>(items.size());
  auto last_changed = std::make_shared<Value>();
  for (int64_t i = 0; i < n; ++i) {
    if (++iterations_ > options_.limits.max_loop_iterations) {
      raise("more than " + std::to_string(options_.limits.max_loop_iterations) + " loop iterations");
    }
    auto fr = std::make_shared<Frame>();
    fr->parent = f;
    Dict loop;
    auto put = [&](const char* k, Value v) { loop.emplace_back(Value::string(k), std::move(v)); };
    put("index", Value::integer(i + 1));
    put("index0", Value::integer(i));
    put("revindex", Value::integer(n - i));
    put("revindex0", Value::integer(n - i - 1));
    put("first", Value::boolean(i == 0));
    put("last", Value::boolean(i == n - 1));
    put("length", Value::integer(n));
    put("depth", Value::integer(depth + 1));
    put("depth0", Value::integer(depth));
    put("previtem", i > 0 ? items[i - 1] : Value::undefined("there is no previous item"));
    put("nextitem", i + 1 < n ? items[i + 1] : Value::undefined("there is no next item"));
    const int64_t index0 = i;
    put("cycle", Value::callable("loop.cycle", [index0](Renderer&, const CallArgs& a) {
          if (a.args.empty()) raise("TypeError: no items for cycling given");
          return a.args[static_cast<size_t>(index0) % a.args.size()];
        }));
    put("changed", Value::callable("loop.changed", [last_changed](Renderer&, const CallArgs& a) {
          Value cur = Value::tuple(a.args);
          if (!last_changed->is_undefined() && equals(*last_changed, cur)) return Value::boolean(false);
          *last_changed = cur;
          return Value::boolean(true);
        }));
    if (s.recursive) {
      const Stmt* stmt = &s;
      std::weak_ptr<Frame> weak = f;  // weakly, as macros hold their frame
      put("__call__", Value::callable("loop", [this, stmt, weak, depth](Renderer&, const CallArgs& a) {
            const std::shared_ptr<Frame> f = weak.lock();
            if (!f) raise("loop() called after its loop ended");
            if (a.args.size() != 1) raise("TypeError: loop() takes exactly one argument");
            std::string buf;
            std::string* saved = out_;
            out_ = &buf;
            try {
              run_loop(*stmt, f, a.args[0], depth + 1);
            } catch (...) {
              out_ = saved;
              throw;
            }
            out_ = saved;
            return Value::string(buf);
          }));
    }
    fr->set("loop", Value::dict(std::move(loop)));
    bind(fr, items[i]);
    const Flow fl = exec(s.body, fr);
    if (fl == Flow::kBreak) break;
    if (fl == Flow::kNormal) completed_a_body = true;
  }
  if (!completed_a_body) exec(s.else_body, f);
}

Value Renderer::make_macro(const Stmt& s, const std::shared_ptr<Frame>& defining) {
  const Stmt* stmt = &s;
  const std::string name = s.kind == StmtKind::kMacro ? s.text : "caller";
  // The defining frame usually holds the macro itself, so the macro refers to it weakly (a strong reference
  // would be a cycle that outlives the render); the renderer keeps the frame alive until the render ends.
  scopes_.push_back(defining);
  std::weak_ptr<Frame> weak = defining;
  return Value::callable(name, [this, stmt, weak, name](Renderer&, const CallArgs& a) {
    const std::shared_ptr<Frame> defining = weak.lock();
    if (!defining) raise("macro '" + name + "' called after its render ended");
    if (++call_depth_ > options_.limits.max_call_depth) {
      --call_depth_;
      raise("macro calls nested deeper than " + std::to_string(options_.limits.max_call_depth));
    }
    struct Guard {
      int& d;
      ~Guard() { --d; }
    } guard{call_depth_};
    auto fr = std::make_shared<Frame>();
    fr->parent = defining;
    // Jinja2's Macro.__call__: extra positional arguments only when the body reads varargs, unknown keywords
    // only when it reads kwargs, a caller only when it reads caller.
    if (a.args.size() > stmt->params.size() && !stmt->uses_varargs) {
      raise("TypeError: macro '" + name + "' takes not more than " + std::to_string(stmt->params.size()) +
            " argument(s)");
    }
    List varargs;
    Dict kwargs;
    std::vector<bool> bound(stmt->params.size(), false);
    for (size_t i = 0; i < a.args.size(); ++i) {
      if (i < stmt->params.size()) {
        fr->set(stmt->params[i].name, a.args[i]);
        bound[i] = true;
      } else {
        varargs.push_back(a.args[i]);
      }
    }
    for (const auto& [k, v] : a.kwargs) {
      bool found = false;
      for (size_t i = 0; i < stmt->params.size(); ++i) {
        if (stmt->params[i].name != k) continue;
        if (bound[i]) raise("TypeError: macro '" + name + "' got multiple values for argument '" + k + "'");
        fr->set(k, v);
        bound[i] = true;
        found = true;
      }
      if (found) continue;
      if (k == "caller" && stmt->uses_caller) {
        fr->set("caller", v);
      } else if (stmt->uses_kwargs) {
        kwargs.emplace_back(Value::string(k), v);
      } else if (k == "caller") {
        raise("TypeError: macro '" + name +
              "' was invoked with two values for the special caller argument. This is most likely a bug.");
      } else {
        raise("TypeError: macro '" + name + "' takes no keyword argument '" + k + "'");
      }
    }
    if (stmt->uses_caller && !fr->lookup("caller")) fr->set("caller", Value::undefined("No caller defined"));
    for (size_t i = 0; i < stmt->params.size(); ++i) {
      if (bound[i]) continue;
      const auto& p = stmt->params[i];
      fr->set(p.name, p.default_value ? eval(*p.default_value, fr)
                                      : Value::undefined("parameter '" + p.name + "' was not provided"));
    }
    fr->set("varargs", Value::tuple(std::move(varargs)));
    fr->set("kwargs", Value::dict(std::move(kwargs)));
    return Value::string(capture(stmt->body, fr));
  });
}

Value Renderer::call(const Value& fn, const CallArgs& args) {
  if (fn.is_undefined()) raise(fn.undefined_hint());
  if (fn.is_dict()) {
    // A recursive loop's `loop(children)`.
    if (const Value* c = fn.find("__call__")) return call(*c, args);
  }
  if (!fn.is_callable()) raise("TypeError: '" + fn.type_name() + "' object is not callable");
  return fn.fn().fn(*this, args);
}

CallArgs Renderer::eval_args(const Expr& e, const std::shared_ptr<Frame>& f) {
  CallArgs a;
  for (const auto& x : e.items) a.args.push_back(eval(*x, f));
  if (e.c) {
    for (auto& x : iterate(eval(*e.c, f))) a.args.push_back(x);
  }
  for (const auto& [k, x] : e.kwargs) a.kwargs.emplace_back(k, eval(*x, f));
  if (e.d) {
    const Value d = eval(*e.d, f);
    if (!d.is_dict()) raise("TypeError: argument after ** must be a mapping, not " + d.type_name());
    for (const auto& [k, v] : d.entries()) a.kwargs.emplace_back(to_str(k), v);
  }
  return a;
}

Value Renderer::eval(const Expr& e, const std::shared_ptr<Frame>& f) {
  try {
    DepthGuard guard(*this);
    return eval_inner(e, f);
  } catch (const JinjaError& err) {
    if (err.has_position()) throw;
    throw JinjaError(err.message(), e.pos.line, e.pos.column);
  }
}

Value Renderer::eval_inner(const Expr& e, const std::shared_ptr<Frame>& f) {
  switch (e.kind) {
    case ExprKind::kLiteral:
      return e.value;
    case ExprKind::kName: {
      const Value* v = f->lookup(e.name);
      return v ? *v : Value::undefined("'" + e.name + "' is undefined");
    }
    case ExprKind::kList:
    case ExprKind::kTuple: {
      List items;
      for (const auto& x : e.items) items.push_back(eval(*x, f));
      return e.kind == ExprKind::kList ? Value::list(std::move(items)) : Value::tuple(std::move(items));
    }
    case ExprKind::kDict: {
      Dict d;
      for (size_t i = 0; i + 1 < e.items.size(); i += 2) {
        Value k = eval(*e.items[i], f);
        Value v = eval(*e.items[i + 1], f);
        bool replaced = false;
        for (auto& [dk, dv] : d) {
          if (equals(dk, k)) {
            dv = v;
            replaced = true;
          }
        }
        if (!replaced) d.emplace_back(std::move(k), std::move(v));
      }
      return Value::dict(std::move(d));
    }
    case ExprKind::kGetAttr: {
      const Value obj = eval(*e.a, f);
      if (obj.is_undefined()) raise(obj.undefined_hint());
      return get_attr(obj, e.name);
    }
    case ExprKind::kGetItem: {
      const Value obj = eval(*e.a, f);
      if (obj.is_undefined()) raise(obj.undefined_hint());
      return get_item(obj, eval(*e.b, f));
    }
    case ExprKind::kSlice: {
      const Value obj = eval(*e.a, f);
      if (obj.is_undefined()) raise(obj.undefined_hint());
      return slice(obj, e.b ? eval(*e.b, f) : Value(), e.c ? eval(*e.c, f) : Value(),
                   e.d ? eval(*e.d, f) : Value());
    }
    case ExprKind::kCall: {
      const Value fn = eval(*e.a, f);
      return call(fn, eval_args(e, f));
    }
    case ExprKind::kFilter: {
      const Value in = eval(*e.a, f);
      if (!has_filter(e.name)) raise("No filter named '" + e.name + "' found.");
      return apply_filter(*this, e.name, in, eval_args(e, f));
    }
    case ExprKind::kTest: {
      const Value in = eval(*e.a, f);
      if (!has_test(e.name)) raise("No test named '" + e.name + "' found.");
      const bool r = apply_test(*this, e.name, in, eval_args(e, f));
      return Value::boolean(e.negated ? !r : r);
    }
    case ExprKind::kNot:
      return Value::boolean(!eval(*e.a, f).truthy());
    case ExprKind::kNeg:
    case ExprKind::kPos: {
      const Value v = eval(*e.a, f);
      if (v.is_undefined()) raise(v.undefined_hint());
      if (!v.is_number()) {
        raise(std::string("TypeError: bad operand type for unary ") + (e.kind == ExprKind::kNeg ? "-" : "+") +
              ": '" + v.type_name() + "'");
      }
      if (e.kind == ExprKind::kPos) return v.is_bool() ? Value::integer(v.as_int()) : v;
      if (v.is_float()) return Value::number(-v.as_double());
      if (v.as_int() == INT64_MIN) raise("OverflowError: integer negation overflows 64 bits");
      return Value::integer(-v.as_int());
    }
    case ExprKind::kBinary:
      return eval_binary(e, f);
    case ExprKind::kCompare:
      return eval_compare(e, f);
    case ExprKind::kCondition: {
      if (eval(*e.a, f).truthy()) return eval(*e.b, f);
      if (e.c) return eval(*e.c, f);
      return Value::undefined("the inline if-expression on line " + std::to_string(e.pos.line) +
                              " evaluated to false and no else section was defined.");
    }
  }
  raise("unknown expression");
}

Value Renderer::eval_binary(const Expr& e, const std::shared_ptr<Frame>& f) {
  const std::string& op = e.name;
  if (op == "and") {
    Value l = eval(*e.a, f);
    return l.truthy() ? eval(*e.b, f) : l;
  }
  if (op == "or") {
    Value l = eval(*e.a, f);
    return l.truthy() ? l : eval(*e.b, f);
  }
  const Value l = eval(*e.a, f);
  const Value r = eval(*e.b, f);
  if (op == "~") {
    std::string s = to_str(l) + to_str(r);
    check_size(s.size());
    return Value::string(std::move(s));
  }
  return py::binary_op(op, l, r, options_.limits.max_output_bytes);
}

Value Renderer::eval_compare(const Expr& e, const std::shared_ptr<Frame>& f) {
  Value left = eval(*e.a, f);
  for (size_t i = 0; i < e.ops.size(); ++i) {
    Value right = eval(*e.items[i], f);
    const std::string& op = e.ops[i];
    bool ok;
    if (op == "==" || op == "!=") {
      ok = equals(left, right) == (op == "==");
    } else if (op == "in" || op == "notin") {
      ok = py::contains(right, left) == (op == "in");
    } else {
      if (left.is_undefined()) raise(left.undefined_hint());
      if (right.is_undefined()) raise(right.undefined_hint());
      if (op == "<") {
        ok = less(left, right);
      } else if (op == ">") {
        ok = less(right, left);
      } else if (op == "<=") {
        ok = less(left, right) || equals(left, right);
      } else {
        ok = less(right, left) || equals(left, right);
      }
    }
    if (!ok) return Value::boolean(false);
    left = std::move(right);
  }
  return Value::boolean(true);
}

}  // namespace ct::text::jinja
