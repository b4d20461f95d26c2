// Python's operators and built-in semantics for the evaluator and the builtins: the binary
// operators (arithmetic, concatenation, membership, comparison chains), ordering, containment,
// len, slicing and str % args. Statement execution and expression evaluation are in evaluator.cpp.
#include <algorithm>
#include <cmath>
#include <limits>

#include "evaluator.hpp"
#include "lexer.hpp"
#include "pytext.hpp"

namespace eredu::jinja::detail {

Result<Value> Evaluator::binary(const std::string& op, const Value& a, const Value& b) {
  if (op == "~") {
    std::string s = to_str(a);
    const std::string t = to_str(b);
    EREDU_TRY_VOID(check_size(s.size() + t.size()));
    return Value(s + t);
  }
  if (a.is_undefined()) return undefined_error(a);
  if (b.is_undefined()) return undefined_error(b);
  auto unsupported = [&]() {
    return type_error("unsupported operand type(s) for " + op + ": '" + a.type_name() + "' and '" +
                      b.type_name() + "'");
  };
  if (a.is_number() && b.is_number()) {
    const bool ints = !a.is_float() && !b.is_float();
    if (ints) {
      const std::int64_t x = to_int(a);
      const std::int64_t y = to_int(b);
      std::int64_t r = 0;
      if (op == "+") {
        if (__builtin_add_overflow(x, y, &r)) return type_error("integer overflow");
        return Value(r);
      }
      if (op == "-") {
        if (__builtin_sub_overflow(x, y, &r)) return type_error("integer overflow");
        return Value(r);
      }
      if (op == "*") {
        if (__builtin_mul_overflow(x, y, &r)) return type_error("integer overflow");
        return Value(r);
      }
      if (op == "/") {
        if (y == 0) return type_error("division by zero");
        return Value(static_cast<double>(x) / static_cast<double>(y));
      }
      if (op == "//" || op == "%") {
        if (y == 0) return type_error("integer division or modulo by zero");
        if (x == std::numeric_limits<std::int64_t>::min() && y == -1) {
          return type_error("integer overflow");
        }
        std::int64_t q = x / y;
        std::int64_t m = x % y;
        if (m != 0 && ((m < 0) != (y < 0))) {
          --q;
          m += y;
        }
        return Value(op == "//" ? q : m);
      }
      if (op == "**") {
        if (y < 0) return Value(std::pow(static_cast<double>(x), static_cast<double>(y)));
        std::int64_t result = 1;
        std::int64_t base = x;
        std::int64_t exp = y;
        while (exp > 0) {
          if ((exp & 1) != 0 && __builtin_mul_overflow(result, base, &result)) {
            return type_error("integer overflow");
          }
          exp >>= 1;
          if (exp > 0 && __builtin_mul_overflow(base, base, &base)) {
            return type_error("integer overflow");
          }
        }
        return Value(result);
      }
    } else {
      const double x = a.as_number();
      const double y = b.as_number();
      if (op == "+") return Value(x + y);
      if (op == "-") return Value(x - y);
      if (op == "*") return Value(x * y);
      if (op == "/") {
        if (y == 0) return type_error("float division by zero");
        return Value(x / y);
      }
      if (op == "//" || op == "%") {
        if (y == 0) return type_error("float modulo");
        double m = std::fmod(x, y);
        if (m != 0 && ((m < 0) != (y < 0))) m += y;
        if (op == "%") return Value(m);
        return Value(std::floor(x / y));
      }
      if (op == "**") return Value(std::pow(x, y));
    }
    return unsupported();
  }
  if (op == "+") {
    if (a.is_string() && b.is_string() && (a.is_markup() || b.is_markup())) {
      std::string out = a.is_markup() ? a.as_string() : html_escape(a.as_string());
      out += b.is_markup() ? b.as_string() : html_escape(b.as_string());
      EREDU_TRY_VOID(check_size(out.size()));
      return Value::markup(std::move(out));
    }
    if (a.is_string() && b.is_string()) {
      EREDU_TRY_VOID(check_size(a.as_string().size() + b.as_string().size()));
      return Value(a.as_string() + b.as_string());
    }
    if (a.is_string()) {
      return type_error("can only concatenate str (not \"" + b.type_name() + "\") to str");
    }
    if (a.is_list() && b.is_list() && !a.list_ptr()->generator && !b.list_ptr()->generator &&
        a.list_ptr()->tuple == b.list_ptr()->tuple) {
      std::vector<Value> items = a.items();
      items.insert(items.end(), b.items().begin(), b.items().end());
      return Value::list(std::move(items), a.list_ptr()->tuple);
    }
    return unsupported();
  }
  if (op == "*") {
    const Value* seq = is_integral(b) ? &a : (is_integral(a) ? &b : nullptr);
    const Value* count = seq == &a ? &b : &a;
    if (seq != nullptr && (seq->is_string() || (seq->is_list() && !seq->list_ptr()->generator))) {
      const std::int64_t n = std::max<std::int64_t>(0, to_int(*count));
      const std::size_t unit = seq->is_string() ? seq->as_string().size() : seq->items().size();
      if (unit != 0 && static_cast<std::uint64_t>(n) > options_.limits.max_output_bytes / unit) {
        return Unexpected(check_size(options_.limits.max_output_bytes + 1).error());
      }
      if (seq->is_string()) {
        std::string out;
        for (std::int64_t i = 0; i < n; ++i)
          out += seq->as_string();
        return Value(std::move(out));
      }
      std::vector<Value> items;
      for (std::int64_t i = 0; i < n; ++i) {
        items.insert(items.end(), seq->items().begin(), seq->items().end());
      }
      return Value::list(std::move(items), seq->list_ptr()->tuple);
    }
    return unsupported();
  }
  if (op == "%" && a.is_string()) {
    EREDU_TRY(std::string s, py_percent_format(a.as_string(), b));
    return Value(std::move(s));
  }
  return unsupported();
}

Result<bool> Evaluator::compare(const std::string& op, const Value& a, const Value& b) {
  if (op == "==") return equals(a, b);
  if (op == "!=") return !equals(a, b);
  if (op == "in") return py_contains(b, a);
  if (op == "not in") {
    EREDU_TRY(const bool r, py_contains(b, a));
    return !r;
  }
  if (a.is_undefined()) return undefined_error(a);
  if (b.is_undefined()) return undefined_error(b);
  auto c = py_compare(a, b);
  if (!c) {
    return type_error(repr_quoted(op) + " not supported between instances of '" + a.type_name() +
                      "' and '" + b.type_name() + "'");
  }
  const int r = *c;
  if (op == "<") return r < 0;
  if (op == "<=") return r <= 0;
  if (op == ">") return r > 0;
  return r >= 0;
}

Result<int> py_compare(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (!a.is_float() && !b.is_float()) {
      const std::int64_t x = to_int(a);
      const std::int64_t y = to_int(b);
      return x < y ? -1 : (x > y ? 1 : 0);
    }
    const double x = a.as_number();
    const double y = b.as_number();
    return x < y ? -1 : (x > y ? 1 : 0);
  }
  if (a.is_string() && b.is_string()) {
    const int c = a.as_string().compare(b.as_string());
    return c < 0 ? -1 : (c > 0 ? 1 : 0);
  }
  if (a.is_list() && b.is_list() && !a.list_ptr()->generator && !b.list_ptr()->generator) {
    const auto& x = a.items();
    const auto& y = b.items();
    for (std::size_t i = 0; i < x.size() && i < y.size(); ++i) {
      if (equals(x[i], y[i])) continue;
      return py_compare(x[i], y[i]);
    }
    return x.size() < y.size() ? -1 : (x.size() > y.size() ? 1 : 0);
  }
  return type_error("'<' not supported between instances of '" + a.type_name() + "' and '" +
                    b.type_name() + "'");
}

Result<bool> py_contains(const Value& container, const Value& item) {
  switch (container.kind()) {
    case Value::Kind::kUndefined:
      return false;
    case Value::Kind::kString:
      if (!item.is_string()) {
        return type_error("'in <string>' requires string as left operand, not " + item.type_name());
      }
      return container.as_string().find(item.as_string()) != std::string::npos;
    case Value::Kind::kList:
      return std::any_of(container.items().begin(), container.items().end(),
                         [&](const Value& v) { return equals(v, item); });
    case Value::Kind::kDict:
      if (container.is_namespace()) break;
      return container.dict_ptr()->find(item) != nullptr;
    default:
      break;
  }
  return type_error("argument of type '" + container.type_name() + "' is not iterable");
}

Result<std::int64_t> py_len(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kUndefined:
      return std::int64_t{0};
    case Value::Kind::kString:
      return static_cast<std::int64_t>(code_point_count(v.as_string()));
    case Value::Kind::kList:
      if (v.list_ptr()->generator) return type_error("object of type 'generator' has no len()");
      return static_cast<std::int64_t>(v.items().size());
    case Value::Kind::kDict:
      if (v.is_namespace()) break;
      return static_cast<std::int64_t>(v.dict_ptr()->entries.size());
    default:
      break;
  }
  return type_error("object of type '" + v.type_name() + "' has no len()");
}

Result<Value> py_slice(const Value& value, const Value& start_v, const Value& stop_v,
                       const Value& step_v) {
  std::vector<std::uint32_t> cps;
  std::int64_t n = 0;
  if (value.is_string()) {
    cps = decode_utf8(value.as_string());
    n = static_cast<std::int64_t>(cps.size());
  } else if (value.is_list() && !value.list_ptr()->generator) {
    n = static_cast<std::int64_t>(value.items().size());
  } else {
    return type_error(repr_quoted(value.type_name()) + " object is not subscriptable");
  }
  auto as_index = [](const Value& v, const char* what) -> Result<std::optional<std::int64_t>> {
    if (v.is_none() || v.is_undefined()) return std::optional<std::int64_t>();
    if (!is_integral(v)) {
      return type_error(std::string("slice ") + what + " must be an integer or None");
    }
    return std::optional<std::int64_t>(to_int(v));
  };
  EREDU_TRY(const auto step_o, as_index(step_v, "step"));
  const std::int64_t step = step_o.value_or(1);
  if (step == 0) return type_error("slice step cannot be zero");
  EREDU_TRY(const auto start_o, as_index(start_v, "start"));
  EREDU_TRY(const auto stop_o, as_index(stop_v, "stop"));
  auto clamp = [&](std::optional<std::int64_t> i, std::int64_t dflt) {
    if (!i) return dflt;
    std::int64_t x = *i;
    if (x < 0) x = std::max<std::int64_t>(x + n, step < 0 ? -1 : 0);
    if (x >= n) x = step < 0 ? n - 1 : n;
    return x;
  };
  const std::int64_t start = clamp(start_o, step < 0 ? n - 1 : 0);
  const std::int64_t stop = clamp(stop_o, step < 0 ? -1 : n);
  std::vector<std::size_t> picks;
  if (step > 0) {
    for (std::int64_t i = start; i < stop; i += step)
      picks.push_back(static_cast<std::size_t>(i));
  } else {
    for (std::int64_t i = start; i > stop; i += step)
      picks.push_back(static_cast<std::size_t>(i));
  }
  if (value.is_string()) {
    std::string out;
    for (std::size_t i : picks)
      append_code_point(out, cps[i]);
    return Value(std::move(out));
  }
  std::vector<Value> items;
  for (std::size_t i : picks)
    items.push_back(value.items()[i]);
  return Value::list(std::move(items), value.list_ptr()->tuple);
}

Result<std::string> py_percent_format(const std::string& format, const Value& args) {
  std::vector<Value> values;
  if (args.is_list() && args.list_ptr()->tuple) {
    values = args.items();
  } else {
    values.push_back(args);
  }
  std::string out;
  std::size_t next = 0;
  for (std::size_t i = 0; i < format.size(); ++i) {
    if (format[i] != '%') {
      out += format[i];
      continue;
    }
    if (i + 1 >= format.size()) return type_error("incomplete format");
    const char spec = format[++i];
    if (spec == '%') {
      out += '%';
      continue;
    }
    if (next >= values.size()) return type_error("not enough arguments for format string");
    const Value& v = values[next++];
    if (spec == 's') {
      out += to_str(v);
    } else if (spec == 'r') {
      out += to_repr(v);
    } else if (spec == 'd' || spec == 'i') {
      if (!v.is_number()) return type_error("%d format: a real number is required");
      out += std::to_string(v.is_float() ? static_cast<std::int64_t>(v.as_float()) : to_int(v));
    } else if (spec == 'f') {
      if (!v.is_number()) return type_error("%f format: a real number is required");
      char buf[64];
      std::snprintf(buf, sizeof buf, "%f", v.as_number());
      out += buf;
    } else {
      return type_error(std::string("unsupported format character '") + spec + "'");
    }
  }
  if (next < values.size()) {
    return type_error("not all arguments converted during string formatting");
  }
  return out;
}

}  // namespace eredu::jinja::detail
