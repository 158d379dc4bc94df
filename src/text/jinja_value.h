// The one value type of the chat-template engine: what a Python object is to Jinja2 for the objects templates
// meet (None, bool, int, float, str, list, tuple, dict, Jinja's Undefined, namespace, callables), with
// Python's printing, truthiness, equality and ordering, because a template's output is Python's str() of
// them.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace ct::text::jinja {

class Value;
class Renderer;

using List = std::vector<Value>;
// Insertion-ordered like a Python dict; templates hold few keys, so lookups are linear.
using Dict = std::vector<std::pair<Value, Value>>;

struct CallArgs {
  std::vector<Value> args;
  std::vector<std::pair<std::string, Value>> kwargs;
  // The keyword `name`, else positional `pos` (when pos >= 0), else nullptr.
  const Value* get(const std::string& name, int pos) const;
};

// A builtin, a bound method or a macro. Renderer is passed so that macros can render and callables can
// reach the clock and the output-size limits.
struct Callable {
  std::string name;
  std::function<Value(Renderer&, const CallArgs&)> fn;
};

enum class Kind {
  kUndefined,
  kNone,
  kBool,
  kInt,
  kFloat,
  kString,
  kList,
  kTuple,
  kDict,
  kNamespace,
  kCallable
};

class Value {
 public:
  Value() = default;  // Undefined
  static Value undefined(std::string hint);
  static Value none();
  static Value boolean(bool b);
  static Value integer(int64_t i);
  static Value number(double f);
  static Value string(std::string s);
  static Value list(List items);
  static Value tuple(List items);
  // A namedtuple (Jinja's groupby results): a tuple whose items are also attributes.
  static Value named_tuple(List items, std::vector<std::string> names);
  static Value dict(Dict items);
  static Value namespace_(Dict items);
  static Value callable(std::string name, std::function<Value(Renderer&, const CallArgs&)> fn);

  Kind kind() const { return kind_; }
  bool is_undefined() const { return kind_ == Kind::kUndefined; }
  bool is_none() const { return kind_ == Kind::kNone; }
  bool is_bool() const { return kind_ == Kind::kBool; }
  bool is_int() const { return kind_ == Kind::kInt; }
  bool is_float() const { return kind_ == Kind::kFloat; }
  // Python's numbers.Number: bool counts, as isinstance(True, int) holds.
  bool is_number() const { return is_int() || is_float() || is_bool(); }
  bool is_string() const { return kind_ == Kind::kString; }
  bool is_list() const { return kind_ == Kind::kList; }
  bool is_tuple() const { return kind_ == Kind::kTuple; }
  bool is_sequence_of_values() const { return is_list() || is_tuple(); }
  bool is_dict() const { return kind_ == Kind::kDict; }
  bool is_namespace() const { return kind_ == Kind::kNamespace; }
  bool is_callable() const { return kind_ == Kind::kCallable; }

  bool as_bool() const { return b_; }
  int64_t as_int() const { return kind_ == Kind::kBool ? (b_ ? 1 : 0) : i_; }
  double as_double() const { return kind_ == Kind::kFloat ? f_ : static_cast<double>(as_int()); }
  const std::string& as_string() const { return *s_; }
  // Undefined's explanation, the message Jinja2's UndefinedError carries when it is used.
  const std::string& undefined_hint() const { return *s_; }
  const List& items() const { return *list_; }
  const Dict& entries() const { return *dict_; }
  Dict& mutable_entries() const { return *dict_; }  // namespaces only: `set ns.x = ...`
  const Callable& fn() const { return *fn_; }
  // The field of a named tuple, or nullptr.
  const Value* field(const std::string& name) const;

  // How Python prints the object a list stands for: a range, or a dict's items/keys/values view.
  enum class View { kNone, kRange, kDictItems, kDictKeys, kDictValues };
  static Value view(List items, View view, std::string range_repr = "");
  View view_kind() const { return view_; }
  const std::string& range_repr() const { return *s_; }

  // dict[key] for a str key; nullptr when absent.
  const Value* find(const std::string& key) const;
  const Value* find(const Value& key) const;

  bool truthy() const;
  // Python's type name, for error messages ("str", "NoneType", "dict").
  std::string type_name() const;

 private:
  Kind kind_ = Kind::kUndefined;
  bool b_ = false;
  int64_t i_ = 0;
  double f_ = 0;
  std::shared_ptr<const std::string> s_ = std::make_shared<const std::string>();
  std::shared_ptr<const List> list_;
  std::shared_ptr<Dict> dict_;
  std::shared_ptr<const Callable> fn_;
  std::shared_ptr<const std::vector<std::string>> field_names_;
  View view_ = View::kNone;
  uint32_t depth_ =
      0;  // nesting of lists/dicts inside; bounded so printing and freeing cannot exhaust the stack
};

constexpr uint32_t kMaxValueDepth = 512;

// Python str(v) (what `{{ v }}` prints) and repr(v) (how items print inside a list or dict).
std::string to_str(const Value& v);
std::string repr(const Value& v);

// Python ==, with 1 == 1.0 == True; Undefined equals only Undefined, as Jinja2's does.
bool equals(const Value& a, const Value& b);
// Python <: numbers with numbers, str with str, lists and tuples item by item; anything else raises
// TypeError as Python does.
bool less(const Value& a, const Value& b);

// Python's float repr: shortest round-trip digits, fixed for exponents -4..15, else 'e+XX'.
std::string float_repr(double d);

}  // namespace ct::text::jinja
