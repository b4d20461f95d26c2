// jinja2's builtin filters, plus `tojson` as Hugging Face defines it (json.dumps with
// ensure_ascii=False). Filters that return generators in jinja2 (map, select, reject,
// selectattr, rejectattr, unique, items, batch, reverse on lists) return generator values here,
// so that `tojson`, `length` and truthiness behave as they do there.

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "evaluator.hpp"
#include "pytext.hpp"
#include "strings.hpp"

namespace eredu::jinja::detail {
namespace {

CallArgs shift(const CallArgs& args, std::size_t n) {
  CallArgs out;
  for (std::size_t i = n; i < args.positional.size(); ++i)
    out.positional.push_back(args.positional[i]);
  out.keywords = args.keywords;
  return out;
}

// Resolves "a.b.0" the way jinja2's make_attrgetter does.
Result<Value> attribute_path(Evaluator& ev, const Value& item, const std::string& path) {
  Value cur = item;
  std::size_t start = 0;
  while (start <= path.size()) {
    const std::size_t dot = path.find('.', start);
    const std::string part =
        path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    const bool numeric = !part.empty() && part.find_first_not_of("0123456789") == std::string::npos;
    if (numeric) {
      EREDU_TRY(
          cur, ev.get_item(
                   cur, Value(static_cast<std::int64_t>(std::strtoll(part.c_str(), nullptr, 10)))));
    } else {
      EREDU_TRY(cur, ev.get_item(cur, Value(part)));
    }
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return cur;
}

Value lower_if_string(const Value& v, bool case_sensitive) {
  if (!case_sensitive && v.is_string()) return Value(py_lower(v.as_string()));
  return v;
}

Result<std::vector<Value>> sorted(Evaluator& ev, std::vector<Value> items, bool reverse,
                                  bool case_sensitive, const Value* attribute) {
  std::vector<std::pair<Value, Value>> keyed;
  for (Value& item : items) {
    Value key = item;
    if (attribute != nullptr && !attribute->is_none()) {
      EREDU_TRY(key, attribute_path(ev, item, to_str(*attribute)));
    }
    keyed.emplace_back(lower_if_string(key, case_sensitive), std::move(item));
  }
  std::optional<Error> failure;
  std::stable_sort(keyed.begin(), keyed.end(), [&](const auto& a, const auto& b) {
    auto c = reverse ? py_compare(b.first, a.first) : py_compare(a.first, b.first);
    if (!c) {
      if (!failure) failure = c.error();
      return false;
    }
    return *c < 0;
  });
  if (failure) return Unexpected(*failure);
  std::vector<Value> out;
  for (auto& [k, v] : keyed)
    out.push_back(std::move(v));
  return out;
}

}  // namespace

std::string html_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&#34;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

namespace {

// jinja2's do_title: capitalise each word, words split at whitespace and -([{<.
std::string jinja_title(const std::string& s) {
  std::string out;
  bool word_start = true;
  for (std::uint32_t cp : decode_utf8(s)) {
    const bool sep =
        is_py_space(cp) || cp == '-' || cp == '(' || cp == '{' || cp == '[' || cp == '<';
    std::string ch;
    append_code_point(ch, cp);
    if (sep) {
      out += ch;
      word_start = true;
    } else {
      out += word_start ? py_upper(ch) : py_lower(ch);
      word_start = false;
    }
  }
  return out;
}

Result<Value> python_int(const Value& v, const Value& fallback, std::int64_t base) {
  if (v.is_int()) return v;
  if (v.is_bool()) return Value(std::int64_t{v.as_bool() ? 1 : 0});
  if (v.is_float()) {
    const double d = v.as_float();
    if (!std::isfinite(d) || std::fabs(d) > 9.2e18) return fallback;
    return Value(static_cast<std::int64_t>(d));
  }
  if (v.is_string()) {
    std::string t = py_strip(v.as_string(), std::nullopt, true, true);
    std::erase(t, '_');
    std::int64_t out = 0;
    const char* b = t.data();
    if (!t.empty() && t[0] == '+') ++b;
    const auto [end, ec] = std::from_chars(b, t.data() + t.size(), out, static_cast<int>(base));
    if (ec == std::errc() && end == t.data() + t.size() && !t.empty()) return Value(out);
    char* fend = nullptr;
    const double d = std::strtod(t.c_str(), &fend);
    if (!t.empty() && fend == t.c_str() + t.size() && std::isfinite(d) && std::fabs(d) < 9.2e18) {
      return Value(static_cast<std::int64_t>(d));
    }
  }
  return fallback;
}

}  // namespace

Result<Value> builtin_filter(Evaluator& ev, std::string_view name, const Value& v,
                             const CallArgs& args) {
  const Arguments a(args, name);
  auto str_arg = [&](std::size_t pos, std::string_view key, std::string fallback) {
    const Value* x = a.get(pos, key);
    return x == nullptr ? fallback : to_str(*x);
  };
  auto bool_arg = [&](std::size_t pos, std::string_view key, bool fallback) {
    const Value* x = a.get(pos, key);
    return x == nullptr ? fallback : x->truthy();
  };

  if (name == "tojson") {
    JsonOptions o;
    o.ensure_ascii = bool_arg(0, "ensure_ascii", false);
    if (const Value* indent = a.get(1, "indent"); indent != nullptr && !indent->is_none()) {
      if (indent->is_int()) {
        o.indent = std::string(
            static_cast<std::size_t>(std::clamp<std::int64_t>(indent->as_int(), 0, 64)), ' ');
      } else if (indent->is_string()) {
        o.indent = indent->as_string();
      } else {
        return type_error("tojson: indent must be an integer or a string");
      }
      o.item_separator = ",";
    }
    if (const Value* sep = a.get(2, "separators"); sep != nullptr && !sep->is_none()) {
      if (!sep->is_list() || sep->items().size() != 2 || !sep->items()[0].is_string() ||
          !sep->items()[1].is_string()) {
        return type_error("tojson: separators must be a pair of strings");
      }
      o.item_separator = sep->items()[0].as_string();
      o.key_separator = sep->items()[1].as_string();
    }
    o.sort_keys = bool_arg(3, "sort_keys", false);
    EREDU_TRY(std::string out, json_dumps(v, o));
    return Value(std::move(out));
  }
  if (name == "length" || name == "count") {
    EREDU_TRY(const std::int64_t n, py_len(v));
    return Value(n);
  }
  if (name == "string") return Value(to_str(v));
  if (name == "safe") return v.is_markup() ? v : Value::markup(to_str(v));
  if (name == "e" || name == "escape" || name == "forceescape") {
    if (v.is_markup() && name != "forceescape") return v;
    return Value::markup(html_escape(to_str(v)));
  }
  if (name == "trim") {
    const Value* chars = a.get(0, "chars");
    std::optional<std::string> c;
    if (chars != nullptr && !chars->is_none()) c = to_str(*chars);
    return Value(py_strip(to_str(v), c, true, true));
  }
  if (name == "upper") return Value(py_upper(to_str(v)));
  if (name == "lower") return Value(py_lower(to_str(v)));
  if (name == "capitalize") return Value(py_capitalize(to_str(v)));
  if (name == "title") return Value(jinja_title(to_str(v)));
  if (name == "default" || name == "d") {
    const Value fallback = a.get_or(0, "default_value", Value(""));
    const bool boolean = bool_arg(1, "boolean", false);
    if (v.is_undefined() || (boolean && !v.truthy())) return fallback;
    return v;
  }
  if (name == "replace") {
    if (a.get(0, "old") == nullptr || a.get(1, "new") == nullptr) {
      return type_error("replace needs old and new");
    }
    std::int64_t count = -1;
    if (const Value* c = a.get(2, "count"); c != nullptr && c->is_int()) count = c->as_int();
    std::string out =
        py_replace(to_str(v), to_str(*a.get(0, "old")), to_str(*a.get(1, "new")), count);
    EREDU_TRY_VOID(ev.check_size(out.size()));
    return Value(std::move(out));
  }
  if (name == "join") {
    const std::string sep = str_arg(0, "d", "");
    const Value* attribute = a.get(1, "attribute");
    EREDU_TRY(const std::vector<Value> items, ev.iterate(v));
    std::string out;
    for (std::size_t i = 0; i < items.size(); ++i) {
      if (i != 0) out += sep;
      if (attribute != nullptr && !attribute->is_none()) {
        EREDU_TRY(const Value x, attribute_path(ev, items[i], to_str(*attribute)));
        out += to_str(x);
      } else {
        out += to_str(items[i]);
      }
      EREDU_TRY_VOID(ev.check_size(out.size()));
    }
    return Value(std::move(out));
  }
  if (name == "list") {
    EREDU_TRY(std::vector<Value> items, ev.iterate(v));
    return Value::list(std::move(items));
  }
  if (name == "first") {
    EREDU_TRY(const std::vector<Value> items, ev.iterate(v));
    if (items.empty()) return Value::undefined("No first item, sequence was empty.");
    return items.front();
  }
  if (name == "last") {
    if (v.is_list() && v.list_ptr()->generator) {
      return type_error("'generator' object is not reversible");
    }
    EREDU_TRY(const std::vector<Value> items, ev.iterate(v));
    if (items.empty()) return Value::undefined("No last item, sequence was empty.");
    return items.back();
  }
  if (name == "items") {
    if (v.is_undefined()) return Value::generator({});
    if (!v.is_dict() || v.is_namespace())
      return type_error("Can only get item pairs from a mapping.");
    std::vector<Value> out;
    for (const auto& [k, x] : v.dict_ptr()->entries)
      out.push_back(Value::list({k, x}, true));
    return Value::generator(std::move(out));
  }
  if (name == "dictsort") {
    if (!v.is_dict() || v.is_namespace()) return type_error("dictsort expects a mapping");
    const bool case_sensitive = bool_arg(0, "case_sensitive", false);
    const std::string by = str_arg(1, "by", "key");
    const bool reverse = bool_arg(2, "reverse", false);
    if (by != "key" && by != "value")
      return type_error("You can only sort by either 'key' or 'value'");
    const std::size_t pos = by == "key" ? 0 : 1;
    std::vector<Value> pairs;
    for (const auto& [k, x] : v.dict_ptr()->entries)
      pairs.push_back(Value::list({k, x}, true));
    std::optional<Error> failure;
    std::stable_sort(pairs.begin(), pairs.end(), [&](const Value& x, const Value& y) {
      const Value kx = lower_if_string(x.items()[pos], case_sensitive);
      const Value ky = lower_if_string(y.items()[pos], case_sensitive);
      auto c = reverse ? py_compare(ky, kx) : py_compare(kx, ky);
      if (!c) {
        if (!failure) failure = c.error();
        return false;
      }
      return *c < 0;
    });
    if (failure) return Unexpected(*failure);
    return Value::list(std::move(pairs));
  }
  if (name == "map") {
    // jinja2's do_map and select_or_reject start with `if value:`: None maps to nothing.
    if (!v.truthy()) return Value::generator({});
    EREDU_TRY(const std::vector<Value> items, ev.iterate(v));
    std::vector<Value> out;
    const Value* attribute = nullptr;
    for (const auto& [k, x] : args.keywords) {
      if (k == "attribute") attribute = &x;
    }
    if (attribute != nullptr) {
      const Value* dflt = nullptr;
      for (const auto& [k, x] : args.keywords) {
        if (k == "default") dflt = &x;
      }
      for (const Value& item : items) {
        EREDU_TRY(Value x, attribute_path(ev, item, to_str(*attribute)));
        if (x.is_undefined() && dflt != nullptr) x = *dflt;
        out.push_back(std::move(x));
      }
      return Value::generator(std::move(out));
    }
    if (args.positional.empty()) return Value::generator(items);
    const std::string filter = to_str(args.positional[0]);
    const CallArgs rest = shift(args, 1);
    for (const Value& item : items) {
      EREDU_TRY(Value x, ev.apply_filter(filter, item, rest));
      out.push_back(std::move(x));
    }
    return Value::generator(std::move(out));
  }
  if (name == "select" || name == "reject" || name == "selectattr" || name == "rejectattr") {
    const bool keep_when = name == "select" || name == "selectattr";
    const bool by_attr = name == "selectattr" || name == "rejectattr";
    if (!v.truthy()) return Value::generator({});
    EREDU_TRY(const std::vector<Value> items, ev.iterate(v));
    std::size_t next = 0;
    std::string attribute;
    if (by_attr) {
      if (args.positional.empty())
        return type_error(std::string(name) + " needs an attribute name");
      attribute = to_str(args.positional[next++]);
    }
    std::optional<std::string> test;
    if (next < args.positional.size()) test = to_str(args.positional[next++]);
    const CallArgs rest = shift(args, next);
    std::vector<Value> out;
    for (const Value& item : items) {
      Value subject = item;
      if (by_attr) {
        EREDU_TRY(subject, attribute_path(ev, item, attribute));
      }
      bool passed = false;
      if (test) {
        EREDU_TRY(passed, ev.apply_test(*test, subject, rest));
      } else {
        passed = subject.truthy();
      }
      if (passed == keep_when) out.push_back(item);
    }
    return Value::generator(std::move(out));
  }
  if (name == "unique") {
    const bool case_sensitive = bool_arg(0, "case_sensitive", false);
    const Value* attribute = a.get(1, "attribute");
    EREDU_TRY(const std::vector<Value> items, ev.iterate(v));
    std::vector<Value> seen;
    std::vector<Value> out;
    for (const Value& item : items) {
      Value key = item;
      if (attribute != nullptr && !attribute->is_none()) {
        EREDU_TRY(key, attribute_path(ev, item, to_str(*attribute)));
      }
      key = lower_if_string(key, case_sensitive);
      if (std::none_of(seen.begin(), seen.end(), [&](const Value& s) { return equals(s, key); })) {
        seen.push_back(key);
        out.push_back(item);
      }
    }
    return Value::generator(std::move(out));
  }
  if (name == "sort") {
    EREDU_TRY(std::vector<Value> items, ev.iterate(v));
    EREDU_TRY(std::vector<Value> out,
              sorted(ev, std::move(items), bool_arg(0, "reverse", false),
                     bool_arg(1, "case_sensitive", false), a.get(2, "attribute")));
    return Value::list(std::move(out));
  }
  if (name == "min" || name == "max") {
    EREDU_TRY(std::vector<Value> items, ev.iterate(v));
    if (items.empty()) return Value::undefined("No aggregated item, sequence was empty.");
    EREDU_TRY(std::vector<Value> out,
              sorted(ev, std::move(items), false, bool_arg(0, "case_sensitive", false),
                     a.get(1, "attribute")));
    return name == "min" ? out.front() : out.back();
  }
  if (name == "reverse") {
    if (v.is_string()) {
      const auto cps = decode_utf8(v.as_string());
      std::string out;
      for (auto it = cps.rbegin(); it != cps.rend(); ++it)
        append_code_point(out, *it);
      return Value(std::move(out));
    }
    if (v.is_list() && v.list_ptr()->generator) {
      return type_error("argument to reverse() must be a sequence");
    }
    EREDU_TRY(std::vector<Value> items, ev.iterate(v));
    std::reverse(items.begin(), items.end());
    return Value::generator(std::move(items));
  }
  if (name == "batch") {
    const Value* count = a.get(0, "linecount");
    if (count == nullptr || !count->is_int() || count->as_int() <= 0) {
      return type_error("batch needs a positive line count");
    }
    const Value* fill = a.get(1, "fill_with");
    EREDU_TRY(const std::vector<Value> items, ev.iterate(v));
    const auto n = static_cast<std::size_t>(count->as_int());
    std::vector<Value> out;
    for (std::size_t i = 0; i < items.size(); i += n) {
      std::vector<Value> row(
          items.begin() + static_cast<std::ptrdiff_t>(i),
          items.begin() + static_cast<std::ptrdiff_t>(std::min(i + n, items.size())));
      while (fill != nullptr && !fill->is_none() && row.size() < n)
        row.push_back(*fill);
      out.push_back(Value::list(std::move(row)));
    }
    return Value::generator(std::move(out));
  }
  if (name == "indent") {
    std::string indentation;
    const Value* width = a.get(0, "width");
    if (width == nullptr) {
      indentation = "    ";
    } else if (width->is_string()) {
      indentation = width->as_string();
    } else if (width->is_int()) {
      indentation = std::string(
          static_cast<std::size_t>(std::clamp<std::int64_t>(width->as_int(), 0, 1024)), ' ');
    } else {
      return type_error("indent width must be an integer or a string");
    }
    const bool first = bool_arg(1, "first", false);
    const bool blank = bool_arg(2, "blank", false);
    const std::string s = to_str(v) + "\n";
    const std::vector<std::string> lines = py_splitlines(s, false);
    std::string out;
    if (blank) {
      for (std::size_t i = 0; i < lines.size(); ++i) {
        if (i != 0) out += "\n" + indentation;
        out += lines[i];
      }
    } else if (!lines.empty()) {
      out = lines[0];
      if (lines.size() > 1) {
        out += "\n";
        for (std::size_t i = 1; i < lines.size(); ++i) {
          if (i != 1) out += "\n";
          out += lines[i].empty() ? lines[i] : indentation + lines[i];
        }
      }
    }
    if (first) out = indentation + out;
    EREDU_TRY_VOID(ev.check_size(out.size()));
    return Value(std::move(out));
  }
  if (name == "wordcount") {
    std::int64_t words = 0;
    bool in_word = false;
    for (std::uint32_t cp : decode_utf8(to_str(v))) {
      const bool w = (cp >= '0' && cp <= '9') || (cp >= 'a' && cp <= 'z') ||
                     (cp >= 'A' && cp <= 'Z') || cp == '_' || cp >= 0xC0;
      if (w && !in_word) ++words;
      in_word = w;
    }
    return Value(words);
  }
  if (name == "center") {
    const Value* w = a.get(0, "width");
    const std::int64_t width = w != nullptr && w->is_int() ? w->as_int() : 80;
    const std::string s = to_str(v);
    const auto len = static_cast<std::int64_t>(code_point_count(s));
    if (width <= len) return Value(s);
    if (width > static_cast<std::int64_t>(ev.options().limits.max_output_bytes)) {
      return Unexpected(ev.check_size(static_cast<std::size_t>(width)).error());
    }
    // Python's str.center puts the extra space on the right unless the padding and the width
    // are both odd.
    const std::int64_t pad = width - len;
    const std::int64_t left = pad / 2 + (pad & width & 1);
    return Value(std::string(static_cast<std::size_t>(left), ' ') + s +
                 std::string(static_cast<std::size_t>(pad - left), ' '));
  }
  if (name == "int") {
    const Value fallback = a.get_or(0, "default", Value(0));
    const Value* base = a.get(1, "base");
    return python_int(
        v, fallback,
        base != nullptr && base->is_int() ? std::clamp<std::int64_t>(base->as_int(), 2, 36) : 10);
  }
  if (name == "float") {
    const Value fallback = a.get_or(0, "default", Value(0.0));
    if (v.is_float()) return v;
    if (v.is_int() || v.is_bool()) return Value(v.as_number());
    if (v.is_string()) {
      const std::string t = py_strip(v.as_string(), std::nullopt, true, true);
      char* end = nullptr;
      const double d = std::strtod(t.c_str(), &end);
      if (!t.empty() && end == t.c_str() + t.size()) return Value(d);
    }
    return fallback;
  }
  if (name == "abs") {
    if (v.is_float()) return Value(std::fabs(v.as_float()));
    if (v.is_int()) {
      if (v.as_int() == std::numeric_limits<std::int64_t>::min())
        return type_error("integer overflow");
      return Value(v.as_int() < 0 ? -v.as_int() : v.as_int());
    }
    if (v.is_bool()) return Value(std::int64_t{v.as_bool() ? 1 : 0});
    return type_error("bad operand type for abs(): '" + v.type_name() + "'");
  }
  if (name == "round") {
    const Value* p = a.get(0, "precision");
    const std::int64_t precision = p != nullptr && p->is_int() ? p->as_int() : 0;
    const std::string method = str_arg(1, "method", "common");
    if (!v.is_number()) return type_error("round needs a number");
    const double x = v.as_number();
    const double scale =
        std::pow(10.0, static_cast<double>(std::clamp<std::int64_t>(precision, -300, 300)));
    double r = 0;
    if (method == "common") {
      r = std::nearbyint(x * scale) / scale;
    } else if (method == "floor") {
      r = std::floor(x * scale) / scale;
    } else if (method == "ceil") {
      r = std::ceil(x * scale) / scale;
    } else {
      return type_error("method must be common, ceil or floor");
    }
    if (method == "common" && !v.is_float()) return Value(static_cast<std::int64_t>(r));
    return Value(r);
  }
  if (name == "sum") {
    const Value* attribute = a.get(0, "attribute");
    Value total = a.get_or(1, "start", Value(0));
    EREDU_TRY(const std::vector<Value> items, ev.iterate(v));
    for (const Value& item : items) {
      Value x = item;
      if (attribute != nullptr && !attribute->is_none()) {
        EREDU_TRY(x, attribute_path(ev, item, to_str(*attribute)));
      }
      if (!x.is_number() || !total.is_number()) return type_error("sum needs numbers");
      if (x.is_float() || total.is_float()) {
        total = Value(total.as_number() + x.as_number());
      } else {
        std::int64_t r = 0;
        const std::int64_t xi = x.is_int() ? x.as_int() : (x.as_bool() ? 1 : 0);
        const std::int64_t ti = total.is_int() ? total.as_int() : (total.as_bool() ? 1 : 0);
        if (__builtin_add_overflow(xi, ti, &r)) return type_error("integer overflow");
        total = Value(r);
      }
    }
    return total;
  }
  if (name == "attr") {
    const Value* attribute = a.get(0, "name");
    if (attribute == nullptr) return type_error("attr needs a name");
    return ev.get_attribute(v, to_str(*attribute));
  }
  if (name == "format") {
    if (!args.keywords.empty()) return type_error("format with keyword arguments is not supported");
    EREDU_TRY(std::string out,
              py_percent_format(to_str(v), args.positional.size() == 1
                                               ? args.positional[0]
                                               : Value::list(args.positional, true)));
    return Value(std::move(out));
  }
  return type_error("no filter named '" + std::string(name) + "'");
}

}  // namespace eredu::jinja::detail
