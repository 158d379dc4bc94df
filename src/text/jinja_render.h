// Template + context -> text, with Jinja2's runtime semantics: a fresh scope per loop iteration (so `set`
// inside a loop does not leak; namespaces exist for that), macros that read the defining scope when called,
// Undefined that prints empty but fails when used, and transformers' `{% generation %}` tag, whose output
// ranges are recorded as AssistantTracker records them (offsets into the top-level output at the time).
#pragma once

#include <cstdint>
#include <ctime>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "text/jinja_ast.h"
#include "text/jinja_value.h"

namespace ct::text::jinja {

struct RenderLimits {
  size_t max_output_bytes = size_t{64} << 20;  // all output, buffered (macros, set blocks) included
  int max_call_depth = 64;                     // nested macro calls; a recursive macro ends here
  int max_eval_depth = 500;                    // nested statements and expressions, macro bodies included
  int64_t max_loop_iterations = 10'000'000;    // summed over every loop of one render
};

struct RenderOptions {
  RenderLimits limits;
  // Local time for strftime_now; unset: the system clock, as transformers' datetime.now().
  std::function<std::tm()> now;
};

struct Span {
  size_t begin = 0;
  size_t end = 0;
};

struct RenderResult {
  std::string text;
  // `{% generation %}` output: in code points (what Python's str offsets and char_to_token use) and in bytes
  // of `text`.
  std::vector<Span> generation_chars;
  std::vector<Span> generation_bytes;
};

struct Frame {
  std::vector<std::pair<std::string, Value>> vars;
  std::shared_ptr<Frame> parent;
  const Value* lookup(const std::string& name) const;
  void set(const std::string& name, Value v);
};

class Renderer {
 public:
  Renderer(const RenderOptions& options);
  ~Renderer();
  Renderer(const Renderer&) = delete;
  Renderer& operator=(const Renderer&) = delete;

  RenderResult render(const Template& t, const std::vector<std::pair<std::string, Value>>& context);

  // Calls a callable value (builtin, bound method, macro) with Python's argument passing.
  Value call(const Value& fn, const CallArgs& args);
  std::tm now() const;
  // Refuses a result over the output limit (string repetition, joins, padding filters).
  void check_size(size_t bytes) const;
  // Namespaces are the one mutable value, so the one way to a reference cycle (`set ns.self = ns`); the
  // renderer empties them when it ends, which frees such cycles.
  void adopt_namespace(const Value& ns) { namespaces_.push_back(ns); }

 private:
  enum class Flow { kNormal, kBreak, kContinue };
  struct DepthGuard;
  Flow exec(const Body& body, const std::shared_ptr<Frame>& f);
  Flow exec(const Stmt& s, const std::shared_ptr<Frame>& f);
  Value eval(const Expr& e, const std::shared_ptr<Frame>& f);
  Value eval_inner(const Expr& e, const std::shared_ptr<Frame>& f);
  Value eval_binary(const Expr& e, const std::shared_ptr<Frame>& f);
  Value eval_compare(const Expr& e, const std::shared_ptr<Frame>& f);
  CallArgs eval_args(const Expr& e, const std::shared_ptr<Frame>& f);
  void exec_for(const Stmt& s, const std::shared_ptr<Frame>& f);
  void run_loop(const Stmt& s, const std::shared_ptr<Frame>& f, const Value& iterable, int depth);
  Value make_macro(const Stmt& s, const std::shared_ptr<Frame>& defining);
  // Renders `body` into a string of its own (macro bodies, set blocks, filter blocks, call blocks).
  std::string capture(const Body& body, const std::shared_ptr<Frame>& f);
  void write(const std::string& s);
  size_t top_chars();

  RenderOptions options_;
  std::string top_;
  std::string* out_ = &top_;
  size_t written_ = 0;
  size_t counted_bytes_ = 0, counted_chars_ = 0;
  int call_depth_ = 0;
  int eval_depth_ = 0;
  int64_t iterations_ = 0;
  RenderResult result_;
  std::vector<std::shared_ptr<Frame>> scopes_;
  std::vector<Value> namespaces_;  // frames macros were defined in, alive for the whole render
};

}  // namespace ct::text::jinja
