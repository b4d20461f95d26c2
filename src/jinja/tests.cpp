// jinja2's tests (`x is defined`, `n is divisibleby 3`, ...).

#include <cmath>

#include "evaluator.hpp"
#include "strings.hpp"

namespace eredu::jinja::detail {

Result<bool> builtin_test(Evaluator& ev, std::string_view name, const Value& v,
                          const CallArgs& args) {
  (void)ev;
  const Arguments a(args, name);
  auto arg = [&]() -> Result<Value> {
    const Value* x = a.get(0, "other");
    if (x == nullptr) return type_error("test '" + std::string(name) + "' needs an argument");
    return *x;
  };
  if (name == "defined") return !v.is_undefined();
  if (name == "undefined") return v.is_undefined();
  if (name == "none") return v.is_none();
  if (name == "string") return v.is_string();
  if (name == "number") return v.is_number();
  if (name == "integer") return v.is_int();
  if (name == "float") return v.is_float();
  if (name == "boolean") return v.is_bool();
  if (name == "true") return v.is_bool() && v.as_bool();
  if (name == "false") return v.is_bool() && !v.as_bool();
  if (name == "mapping") return v.is_dict() && !v.is_namespace();
  if (name == "iterable") {
    return v.is_undefined() || v.is_string() || v.is_list() || (v.is_dict() && !v.is_namespace());
  }
  if (name == "sequence") {
    return v.is_undefined() || v.is_string() || (v.is_list() && !v.list_ptr()->generator) ||
           (v.is_dict() && !v.is_namespace());
  }
  if (name == "callable") return v.is_function();
  if (name == "lower") {
    return v.is_string() && py_lower(v.as_string()) == v.as_string() &&
           py_upper(v.as_string()) != v.as_string();
  }
  if (name == "upper") {
    return v.is_string() && py_upper(v.as_string()) == v.as_string() &&
           py_lower(v.as_string()) != v.as_string();
  }
  if (name == "escaped") return false;
  if (name == "odd" || name == "even") {
    if (!v.is_int() && !v.is_bool()) {
      return type_error("test '" + std::string(name) + "' needs an integer, not " + v.type_name());
    }
    const std::int64_t i = v.is_int() ? v.as_int() : (v.as_bool() ? 1 : 0);
    return (i % 2 != 0) == (name == "odd");
  }
  if (name == "divisibleby") {
    EREDU_TRY(const Value d, arg());
    if (!(v.is_int() || v.is_bool()) || !(d.is_int() || d.is_bool())) {
      if (v.is_number() && d.is_number() && d.as_number() != 0) {
        return std::fmod(v.as_number(), d.as_number()) == 0;
      }
      return type_error("divisibleby needs numbers");
    }
    const std::int64_t n = d.is_int() ? d.as_int() : (d.as_bool() ? 1 : 0);
    if (n == 0) return type_error("integer division or modulo by zero");
    const std::int64_t i = v.is_int() ? v.as_int() : (v.as_bool() ? 1 : 0);
    if (n == -1) return true;
    return i % n == 0;
  }
  if (name == "eq" || name == "equalto" || name == "==") {
    EREDU_TRY(const Value o, arg());
    return equals(v, o);
  }
  if (name == "ne" || name == "!=") {
    EREDU_TRY(const Value o, arg());
    return !equals(v, o);
  }
  if (name == "sameas") {
    EREDU_TRY(const Value o, arg());
    if (v.kind() != o.kind()) return false;
    if (v.is_list()) return v.list_ptr() == o.list_ptr();
    if (v.is_dict()) return v.dict_ptr() == o.dict_ptr();
    if (v.is_function()) return v.function_ptr() == o.function_ptr();
    return equals(v, o);
  }
  if (name == "lt" || name == "lessthan" || name == "<" || name == "le" || name == "<=" ||
      name == "gt" || name == "greaterthan" || name == ">" || name == "ge" || name == ">=") {
    EREDU_TRY(const Value o, arg());
    if (v.is_undefined() || o.is_undefined())
      return type_error("comparison with an undefined value");
    EREDU_TRY(const int c, py_compare(v, o));
    if (name == "lt" || name == "lessthan" || name == "<") return c < 0;
    if (name == "le" || name == "<=") return c <= 0;
    if (name == "gt" || name == "greaterthan" || name == ">") return c > 0;
    return c >= 0;
  }
  if (name == "in") {
    EREDU_TRY(const Value o, arg());
    return py_contains(o, v);
  }
  if (name == "filter" || name == "test") {
    if (!v.is_string()) return false;
    static constexpr std::string_view kFilters[] = {
        "abs",     "attr",     "batch",  "capitalize", "center",     "count",      "d",
        "default", "dictsort", "e",      "escape",     "first",      "float",      "format",
        "indent",  "int",      "items",  "join",       "last",       "length",     "list",
        "lower",   "map",      "max",    "min",        "reject",     "rejectattr", "replace",
        "reverse", "round",    "safe",   "select",     "selectattr", "sort",       "string",
        "sum",     "title",    "tojson", "trim",       "unique",     "upper",      "wordcount"};
    static constexpr std::string_view kTests[] = {
        "defined", "undefined", "none",   "string",  "number",      "integer",  "float",
        "boolean", "true",      "false",  "mapping", "iterable",    "sequence", "callable",
        "lower",   "upper",     "odd",    "even",    "divisibleby", "eq",       "equalto",
        "ne",      "sameas",    "lt",     "le",      "gt",          "ge",       "in",
        "filter",  "test",      "escaped"};
    if (name == "filter") {
      for (auto f : kFilters) {
        if (f == v.as_string()) return true;
      }
      return false;
    }
    for (auto t : kTests) {
      if (t == v.as_string()) return true;
    }
    return false;
  }
  return type_error("no test named '" + std::string(name) + "'");
}

}  // namespace eredu::jinja::detail
