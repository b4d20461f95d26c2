// Value construction, truthiness, Python str()/repr()/== and json.dumps.

#include "eredu/jinja/value.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "pytext.hpp"

namespace eredu::jinja {

const Value* DictObject::find(const Value& key) const {
  for (const auto& [k, v] : entries) {
    if (equals(k, key)) return &v;
  }
  return nullptr;
}

const Value* DictObject::find(std::string_view key) const {
  for (const auto& [k, v] : entries) {
    if (k.is_string() && k.as_string() == key) return &v;
  }
  return nullptr;
}

void DictObject::set(Value key, Value value) {
  for (auto& [k, v] : entries) {
    if (equals(k, key)) {
      v = std::move(value);
      return;
    }
  }
  entries.emplace_back(std::move(key), std::move(value));
}

Value Value::list(std::vector<Value> items, bool tuple) {
  auto l = std::make_shared<ListObject>();
  l->items = std::move(items);
  l->tuple = tuple;
  return Value(std::move(l));
}

Value Value::generator(std::vector<Value> items) {
  auto l = std::make_shared<ListObject>();
  l->items = std::move(items);
  l->generator = true;
  return Value(std::move(l));
}

Value Value::dict() {
  return Value(std::make_shared<DictObject>());
}

Value Value::function(std::string name, std::function<Result<Value>(const CallArgs&)> call) {
  auto f = std::make_shared<Function>();
  f->name = std::move(name);
  f->call = std::move(call);
  return Value(std::move(f));
}

double Value::as_number() const {
  if (is_int()) return static_cast<double>(as_int());
  if (is_bool()) return as_bool() ? 1.0 : 0.0;
  if (is_float()) return as_float();
  return 0.0;
}

bool Value::truthy() const {
  switch (kind()) {
    case Kind::kUndefined:
    case Kind::kNone:
      return false;
    case Kind::kBool:
      return as_bool();
    case Kind::kInt:
      return as_int() != 0;
    case Kind::kFloat:
      return as_float() != 0.0;
    case Kind::kString:
      return !as_string().empty();
    case Kind::kList:
      return list_ptr()->generator || !items().empty();
    case Kind::kDict:
      return dict_ptr()->is_namespace || !dict_ptr()->entries.empty();
    case Kind::kFunction:
      return true;
  }
  return false;
}

std::string Value::type_name() const {
  switch (kind()) {
    case Kind::kUndefined:
      return "Undefined";
    case Kind::kNone:
      return "NoneType";
    case Kind::kBool:
      return "bool";
    case Kind::kInt:
      return "int";
    case Kind::kFloat:
      return "float";
    case Kind::kString:
      return "str";
    case Kind::kList:
      return list_ptr()->generator ? "generator" : (list_ptr()->tuple ? "tuple" : "list");
    case Kind::kDict:
      return is_namespace() ? "Namespace" : "dict";
    case Kind::kFunction:
      return "function";
  }
  return "object";
}

namespace {

// Containers can hold themselves (ns.self = ns); printing and comparing stop at this depth
// instead of exhausting the stack.
constexpr int kMaxNesting = 200;
thread_local int nesting = 0;
struct Nest {
  Nest() { ++nesting; }
  ~Nest() { --nesting; }
  Nest(const Nest&) = delete;
  Nest& operator=(const Nest&) = delete;
};

std::string string_repr(const std::string& s) {
  // Python prefers single quotes, switching to double quotes when the text has a ' and no ".
  const bool has_single = s.find('\'') != std::string::npos;
  const bool has_double = s.find('"') != std::string::npos;
  const char quote = has_single && !has_double ? '"' : '\'';
  std::string out(1, quote);
  for (const unsigned char c : s) {
    if (c == static_cast<unsigned char>(quote) || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7F) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  out += quote;
  return out;
}

}  // namespace

std::string to_repr(const Value& value) {
  if (value.is_string()) return string_repr(value.as_string());
  if (value.is_undefined()) return "Undefined";
  return to_str(value);
}

std::string to_str(const Value& value) {
  switch (value.kind()) {
    case Value::Kind::kUndefined:
      return "";
    case Value::Kind::kNone:
      return "None";
    case Value::Kind::kBool:
      return value.as_bool() ? "True" : "False";
    case Value::Kind::kInt:
      return std::to_string(value.as_int());
    case Value::Kind::kFloat:
      return detail::float_repr(value.as_float());
    case Value::Kind::kString:
      return value.as_string();
    case Value::Kind::kList: {
      const auto& l = *value.list_ptr();
      const Nest nest;
      if (nesting > kMaxNesting) return "[...]";
      if (l.generator) return "<generator object>";
      std::string out = l.tuple ? "(" : "[";
      for (std::size_t i = 0; i < l.items.size(); ++i) {
        if (i != 0) out += ", ";
        out += to_repr(l.items[i]);
      }
      if (l.tuple && l.items.size() == 1) out += ",";
      out += l.tuple ? ")" : "]";
      return out;
    }
    case Value::Kind::kDict: {
      const auto& d = *value.dict_ptr();
      const Nest nest;
      if (nesting > kMaxNesting) return "{...}";
      std::string out = d.is_namespace ? "<Namespace {" : "{";
      for (std::size_t i = 0; i < d.entries.size(); ++i) {
        if (i != 0) out += ", ";
        out += to_repr(d.entries[i].first);
        out += ": ";
        out += to_repr(d.entries[i].second);
      }
      out += d.is_namespace ? "}>" : "}";
      return out;
    }
    case Value::Kind::kFunction:
      return "<function " + value.function_ptr()->name + ">";
  }
  return "";
}

bool equals(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (!a.is_float() && !b.is_float()) {
      const std::int64_t x = a.is_int() ? a.as_int() : (a.as_bool() ? 1 : 0);
      const std::int64_t y = b.is_int() ? b.as_int() : (b.as_bool() ? 1 : 0);
      return x == y;
    }
    return a.as_number() == b.as_number();
  }
  if (a.kind() != b.kind()) return false;
  const Nest nest;
  if (nesting > kMaxNesting) return false;
  switch (a.kind()) {
    case Value::Kind::kUndefined:
    case Value::Kind::kNone:
      return true;
    case Value::Kind::kString:
      return a.as_string() == b.as_string();
    case Value::Kind::kList: {
      const auto& x = a.items();
      const auto& y = b.items();
      if (a.list_ptr() == b.list_ptr()) return true;
      if (a.list_ptr()->generator || b.list_ptr()->generator) return false;
      if (a.list_ptr()->tuple != b.list_ptr()->tuple || x.size() != y.size()) return false;
      for (std::size_t i = 0; i < x.size(); ++i) {
        if (!equals(x[i], y[i])) return false;
      }
      return true;
    }
    case Value::Kind::kDict: {
      if (a.dict_ptr() == b.dict_ptr()) return true;
      const auto& x = *a.dict_ptr();
      const auto& y = *b.dict_ptr();
      if (x.is_namespace || y.is_namespace || x.entries.size() != y.entries.size()) return false;
      for (const auto& [k, v] : x.entries) {
        const Value* other = y.find(k);
        if (other == nullptr || !equals(v, *other)) return false;
      }
      return true;
    }
    case Value::Kind::kFunction:
      return a.function_ptr() == b.function_ptr();
    default:
      return false;
  }
}

namespace detail {

std::vector<std::uint32_t> decode_utf8(std::string_view s) {
  std::vector<std::uint32_t> out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    std::size_t n = 0;
    std::uint32_t cp = c;
    if (c >= 0xF0 && c < 0xF8) {
      n = 3;
      cp = c & 0x07;
    } else if (c >= 0xE0) {
      n = c < 0xF0 ? 2 : 0;
      cp = c & 0x0F;
    } else if (c >= 0xC0) {
      n = 1;
      cp = c & 0x1F;
    }
    bool good = n > 0;
    for (std::size_t k = 1; good && k <= n; ++k) {
      if (i + k >= s.size() || (static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) {
        good = false;
      } else {
        cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
      }
    }
    if (n > 0 && good) {
      out.push_back(cp);
      i += n + 1;
    } else {
      out.push_back(c);  // ASCII, or a stray byte kept as itself
      ++i;
    }
  }
  return out;
}

void append_code_point(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | ((cp >> 18) & 0x07));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

std::string encode_utf8(const std::vector<std::uint32_t>& cps, std::size_t begin, std::size_t end) {
  std::string out;
  for (std::size_t i = begin; i < end && i < cps.size(); ++i)
    append_code_point(out, cps[i]);
  return out;
}

bool is_ascii(std::string_view text) {
  return std::all_of(text.begin(), text.end(),
                     [](char c) { return static_cast<unsigned char>(c) < 0x80; });
}

std::size_t code_point_count(std::string_view text) {
  if (is_ascii(text)) return text.size();
  return decode_utf8(text).size();
}

std::string float_repr(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  if (value == 0.0) return std::signbit(value) ? "-0.0" : "0.0";
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof buf, value, std::chars_format::scientific);
  std::string sci(buf, res.ptr);
  // sci: [-]d[.ddd]e[+-]XX
  const std::size_t e = sci.find('e');
  std::string mantissa = sci.substr(0, e);
  const int exponent = std::atoi(sci.c_str() + e + 1);
  const bool negative = mantissa[0] == '-';
  if (negative) mantissa.erase(0, 1);
  std::string digits;
  for (char c : mantissa) {
    if (c != '.') digits += c;
  }
  std::string out = negative ? "-" : "";
  if (exponent < -4 || exponent >= 16) {
    out += digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    char ex[16];
    std::snprintf(ex, sizeof ex, "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
    out += ex;
    return out;
  }
  if (exponent < 0) {
    out += "0." + std::string(static_cast<std::size_t>(-exponent - 1), '0') + digits;
    return out;
  }
  const auto int_digits = static_cast<std::size_t>(exponent) + 1;
  if (digits.size() <= int_digits) {
    out += digits + std::string(int_digits - digits.size(), '0') + ".0";
  } else {
    out += digits.substr(0, int_digits) + "." + digits.substr(int_digits);
  }
  return out;
}

namespace {

void json_string(std::string& out, const std::string& s, bool ensure_ascii) {
  out += '"';
  const auto cps = decode_utf8(s);
  for (const std::uint32_t cp : cps) {
    char buf[16];
    switch (cp) {
      case '"':
        out += "\\\"";
        continue;
      case '\\':
        out += "\\\\";
        continue;
      case '\n':
        out += "\\n";
        continue;
      case '\r':
        out += "\\r";
        continue;
      case '\t':
        out += "\\t";
        continue;
      case '\b':
        out += "\\b";
        continue;
      case '\f':
        out += "\\f";
        continue;
      default:
        break;
    }
    if (cp < 0x20 || (ensure_ascii && cp >= 0x7F)) {
      if (cp >= 0x10000) {
        const std::uint32_t v = cp - 0x10000;
        std::snprintf(buf, sizeof buf, "\\u%04x\\u%04x", 0xD800 + (v >> 10), 0xDC00 + (v & 0x3FF));
      } else {
        std::snprintf(buf, sizeof buf, "\\u%04x", cp);
      }
      out += buf;
    } else {
      append_code_point(out, cp);
    }
  }
  out += '"';
}

Result<void> dump(std::string& out, const Value& v, const JsonOptions& o, std::size_t level) {
  if (level > 512) return fail(ErrorCode::kLimitExceeded, "tojson: nesting deeper than 512");
  auto newline = [&](std::size_t lvl) {
    if (!o.indent) return;
    out += '\n';
    for (std::size_t i = 0; i < lvl; ++i)
      out += *o.indent;
  };
  switch (v.kind()) {
    case Value::Kind::kNone:
      out += "null";
      return ok();
    case Value::Kind::kBool:
      out += v.as_bool() ? "true" : "false";
      return ok();
    case Value::Kind::kInt:
      out += std::to_string(v.as_int());
      return ok();
    case Value::Kind::kFloat: {
      const double d = v.as_float();
      if (std::isnan(d)) {
        out += "NaN";
      } else if (std::isinf(d)) {
        out += d > 0 ? "Infinity" : "-Infinity";
      } else {
        out += float_repr(d);
      }
      return ok();
    }
    case Value::Kind::kString:
      json_string(out, v.as_string(), o.ensure_ascii);
      return ok();
    case Value::Kind::kList: {
      if (v.list_ptr()->generator) {
        return fail(ErrorCode::kInvalidArgument,
                    "Object of type generator is not JSON serializable");
      }
      const auto& items = v.items();
      if (items.empty()) {
        out += "[]";
        return ok();
      }
      out += '[';
      for (std::size_t i = 0; i < items.size(); ++i) {
        if (i != 0) out += o.item_separator;
        newline(level + 1);
        EREDU_TRY_VOID(dump(out, items[i], o, level + 1));
      }
      newline(level);
      out += ']';
      return ok();
    }
    case Value::Kind::kDict: {
      if (v.is_namespace()) {
        return fail(ErrorCode::kInvalidArgument,
                    "Object of type Namespace is not JSON serializable");
      }
      std::vector<std::pair<std::string, const Value*>> entries;
      for (const auto& [k, val] : v.dict_ptr()->entries) {
        std::string key;
        if (k.is_string()) {
          key = k.as_string();
        } else if (k.is_bool()) {
          key = k.as_bool() ? "true" : "false";
        } else if (k.is_none()) {
          key = "null";
        } else if (k.is_int() || k.is_float()) {
          key = to_str(k);
        } else {
          return fail(ErrorCode::kInvalidArgument,
                      "keys must be str, int, float, bool or None, not " + k.type_name());
        }
        entries.emplace_back(std::move(key), &val);
      }
      if (o.sort_keys) {
        std::stable_sort(entries.begin(), entries.end(),
                         [](const auto& a, const auto& b) { return a.first < b.first; });
      }
      if (entries.empty()) {
        out += "{}";
        return ok();
      }
      out += '{';
      for (std::size_t i = 0; i < entries.size(); ++i) {
        if (i != 0) out += o.item_separator;
        newline(level + 1);
        json_string(out, entries[i].first, o.ensure_ascii);
        out += o.key_separator;
        EREDU_TRY_VOID(dump(out, *entries[i].second, o, level + 1));
      }
      newline(level);
      out += '}';
      return ok();
    }
    case Value::Kind::kUndefined:
      return fail(ErrorCode::kInvalidArgument, "Object of type Undefined is not JSON serializable");
    case Value::Kind::kFunction:
      return fail(ErrorCode::kInvalidArgument, "Object of type function is not JSON serializable");
  }
  return ok();
}

}  // namespace

Result<std::string> json_dumps(const Value& value, const JsonOptions& options) {
  std::string out;
  EREDU_TRY_VOID(dump(out, value, options, 0));
  return out;
}

}  // namespace detail
}  // namespace eredu::jinja
