#pragma once
// The values a Jinja template computes with, modelled on the Python objects jinja2 hands around:
// undefined, None, bool, int (int64 here), float, str, list/tuple, dict (insertion-ordered, as
// Python's), namespace objects and callables (builtins and macros).
//
// Lists, dicts and namespaces are shared by reference like Python's objects: `ns.x = 1` through
// one name is seen through every other. Strings are UTF-8; operations that Python defines on code
// points (length, indexing, slicing) decode them.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "eredu/core/result.hpp"

namespace eredu::jinja {

class Value;

// jinja2's default Undefined: renders empty, is falsy and iterates as empty; most other uses fail
// with `hint` ("'x' is undefined", "'dict object' has no attribute 'y'").
struct Undefined {
  std::string hint;
};
struct None {};

struct ListObject {
  std::vector<Value> items;
  bool tuple = false;      // prints as (a, b)
  bool generator = false;  // what map/select/... return in jinja2: truthy, no len, not JSON
};

struct DictObject {
  std::vector<std::pair<Value, Value>> entries;  // insertion order
  bool is_namespace = false;                     // namespace(): attribute assignment allowed

  [[nodiscard]] const Value* find(const Value& key) const;
  [[nodiscard]] const Value* find(std::string_view key) const;
  void set(Value key, Value value);
};

// Arguments of a call: positional then keyword, as written.
struct CallArgs {
  std::vector<Value> positional;
  std::vector<std::pair<std::string, Value>> keywords;
};

struct Function {
  std::string name;
  std::function<Result<Value>(const CallArgs&)> call;
  bool is_macro = false;  // its errors already carry a template location
};

class Value {
 public:
  enum class Kind : std::uint8_t {
    kUndefined,
    kNone,
    kBool,
    kInt,
    kFloat,
    kString,
    kList,
    kDict,
    kFunction,
  };

  Value() : data_(Undefined{}) {}
  Value(Undefined u) : data_(std::move(u)) {}           // NOLINT: implicit like Python's objects
  Value(None) : data_(None{}) {}                        // NOLINT
  Value(bool b) : data_(b) {}                           // NOLINT
  Value(std::int64_t i) : data_(i) {}                   // NOLINT
  Value(int i) : data_(std::int64_t{i}) {}              // NOLINT
  Value(double d) : data_(d) {}                         // NOLINT
  Value(std::string s) : data_(std::move(s)) {}         // NOLINT
  Value(std::string_view s) : data_(std::string(s)) {}  // NOLINT
  Value(const char* s) : data_(std::string(s)) {}       // NOLINT
  Value(std::shared_ptr<ListObject> l) : data_(std::move(l)) {}  // NOLINT
  Value(std::shared_ptr<DictObject> d) : data_(std::move(d)) {}  // NOLINT
  Value(std::shared_ptr<Function> f) : data_(std::move(f)) {}    // NOLINT

  static Value undefined(std::string hint) { return Value(Undefined{std::move(hint)}); }
  static Value none() { return Value(None{}); }
  static Value list(std::vector<Value> items = {}, bool tuple = false);
  static Value generator(std::vector<Value> items);
  static Value dict();
  static Value function(std::string name, std::function<Result<Value>(const CallArgs&)> call);

  [[nodiscard]] Kind kind() const noexcept { return static_cast<Kind>(data_.index()); }
  [[nodiscard]] bool is_undefined() const noexcept { return kind() == Kind::kUndefined; }
  [[nodiscard]] bool is_none() const noexcept { return kind() == Kind::kNone; }
  [[nodiscard]] bool is_bool() const noexcept { return kind() == Kind::kBool; }
  [[nodiscard]] bool is_int() const noexcept { return kind() == Kind::kInt; }
  [[nodiscard]] bool is_float() const noexcept { return kind() == Kind::kFloat; }
  [[nodiscard]] bool is_number() const noexcept { return is_int() || is_float() || is_bool(); }
  [[nodiscard]] bool is_string() const noexcept { return kind() == Kind::kString; }
  [[nodiscard]] bool is_list() const noexcept { return kind() == Kind::kList; }
  [[nodiscard]] bool is_dict() const noexcept { return kind() == Kind::kDict; }
  [[nodiscard]] bool is_function() const noexcept { return kind() == Kind::kFunction; }
  [[nodiscard]] bool is_namespace() const noexcept { return is_dict() && dict_ptr()->is_namespace; }

  [[nodiscard]] const std::string& undefined_hint() const {
    return std::get<Undefined>(data_).hint;
  }
  [[nodiscard]] bool as_bool() const { return std::get<bool>(data_); }
  [[nodiscard]] std::int64_t as_int() const { return std::get<std::int64_t>(data_); }
  [[nodiscard]] double as_float() const { return std::get<double>(data_); }
  // int, float or bool as a double.
  [[nodiscard]] double as_number() const;
  [[nodiscard]] const std::string& as_string() const { return std::get<std::string>(data_); }
  [[nodiscard]] const std::shared_ptr<ListObject>& list_ptr() const {
    return std::get<std::shared_ptr<ListObject>>(data_);
  }
  [[nodiscard]] const std::shared_ptr<DictObject>& dict_ptr() const {
    return std::get<std::shared_ptr<DictObject>>(data_);
  }
  [[nodiscard]] const std::shared_ptr<Function>& function_ptr() const {
    return std::get<std::shared_ptr<Function>>(data_);
  }
  [[nodiscard]] const std::vector<Value>& items() const { return list_ptr()->items; }

  // markupsafe.Markup: what `|safe` and `|e` return. Without autoescape it prints as a plain
  // string, but `Markup + str` escapes the str, as jinja2 does.
  [[nodiscard]] bool is_markup() const noexcept { return markup_ && is_string(); }
  [[nodiscard]] static Value markup(std::string text) {
    Value v(std::move(text));
    v.markup_ = true;
    return v;
  }

  // Python truthiness (a generator is always true, as in Python).
  [[nodiscard]] bool truthy() const;
  // Python's type name, for messages ("str", "int", "dict", "NoneType", ...).
  [[nodiscard]] std::string type_name() const;

 private:
  std::variant<Undefined, None, bool, std::int64_t, double, std::string,
               std::shared_ptr<ListObject>, std::shared_ptr<DictObject>, std::shared_ptr<Function>>
      data_;
  bool markup_ = false;
};

// str(value) as Python prints it: '' for undefined, None/True/False, floats as repr, containers
// with their items' repr.
[[nodiscard]] std::string to_str(const Value& value);
// repr(value) (strings quoted the way Python chooses).
[[nodiscard]] std::string to_repr(const Value& value);
// Python ==.
[[nodiscard]] bool equals(const Value& a, const Value& b);

}  // namespace eredu::jinja
