// Methods of str, dict and list values (`text.strip()`, `d.items()`, ...), and the global
// functions a template can call. Under the immutable sandbox the mutating list/dict methods are
// refused when looked up, with jinja2's message.

#include <algorithm>
#include <array>
#include <ctime>

#include "evaluator.hpp"
#include "lexer.hpp"
#include "pytext.hpp"
#include "strings.hpp"

namespace eredu::jinja::detail {
namespace {

using Fn = std::function<Result<Value>(const CallArgs&)>;

Value method(std::string name, Fn fn) {
  return Value::function(std::move(name), std::move(fn));
}

Result<std::optional<std::string>> optional_string(const Value* v, std::string_view what) {
  if (v == nullptr || v->is_none()) return std::optional<std::string>();
  if (!v->is_string()) {
    return type_error(std::string(what) + " must be str or None, not " + v->type_name());
  }
  return std::optional<std::string>(v->as_string());
}

Result<std::string> required_string(const Value* v, std::string_view what) {
  if (v == nullptr) return type_error(std::string(what) + ": missing argument");
  if (!v->is_string()) {
    return type_error(std::string(what) + " must be str, not " + v->type_name());
  }
  return v->as_string();
}

Result<std::int64_t> integer_or(const Value* v, std::int64_t fallback, std::string_view what) {
  if (v == nullptr || v->is_none()) return fallback;
  if (v->is_int()) return v->as_int();
  if (v->is_bool()) return std::int64_t{v->as_bool() ? 1 : 0};
  return type_error(std::string(what) + " must be an integer, not " + v->type_name());
}

Value string_list(const std::vector<std::string>& parts) {
  std::vector<Value> items;
  items.reserve(parts.size());
  for (const auto& p : parts)
    items.emplace_back(p);
  return Value::list(std::move(items));
}

// str.format with {} / {0} / {name} fields (no format specs beyond them).
Result<std::string> str_format(const std::string& fmt, const CallArgs& args) {
  std::string out;
  std::size_t auto_index = 0;
  for (std::size_t i = 0; i < fmt.size(); ++i) {
    const char c = fmt[i];
    if (c == '{') {
      if (i + 1 < fmt.size() && fmt[i + 1] == '{') {
        out += '{';
        ++i;
        continue;
      }
      const std::size_t close = fmt.find('}', i);
      if (close == std::string::npos) return type_error("Single '{' encountered in format string");
      std::string field = fmt.substr(i + 1, close - i - 1);
      const std::size_t colon = field.find_first_of(":!");
      if (colon != std::string::npos) field.resize(colon);
      const Value* v = nullptr;
      if (field.empty()) {
        if (auto_index < args.positional.size()) v = &args.positional[auto_index];
        ++auto_index;
      } else if (field.find_first_not_of("0123456789") == std::string::npos) {
        const auto idx = static_cast<std::size_t>(std::stoull(field.substr(0, 9)));
        if (idx < args.positional.size()) v = &args.positional[idx];
      } else {
        for (const auto& [k, val] : args.keywords) {
          if (k == field) v = &val;
        }
      }
      if (v == nullptr) return type_error("format: no argument for field '{" + field + "}'");
      out += to_str(*v);
      i = close;
    } else if (c == '}') {
      if (i + 1 < fmt.size() && fmt[i + 1] == '}') ++i;
      out += '}';
    } else {
      out += c;
    }
  }
  return out;
}

Result<std::optional<Value>> string_method(const std::string& s, std::string_view name) {
  const std::string n(name);
  if (name == "strip" || name == "lstrip" || name == "rstrip") {
    const bool left = name != "rstrip";
    const bool right = name != "lstrip";
    return std::optional<Value>(method(n, [s, left, right](const CallArgs& a) -> Result<Value> {
      EREDU_TRY(auto chars, optional_string(Arguments(a, "strip").get(0, "chars"), "strip arg"));
      return Value(py_strip(s, chars, left, right));
    }));
  }
  if (name == "split" || name == "rsplit") {
    const bool right = name == "rsplit";
    return std::optional<Value>(method(n, [s, right](const CallArgs& a) -> Result<Value> {
      const Arguments args(a, "split");
      EREDU_TRY(auto sep, optional_string(args.get(0, "sep"), "sep"));
      if (sep && sep->empty()) return type_error("empty separator");
      EREDU_TRY(const std::int64_t max, integer_or(args.get(1, "maxsplit"), -1, "maxsplit"));
      return string_list(py_split(s, sep, max, right));
    }));
  }
  if (name == "splitlines") {
    return std::optional<Value>(method(n, [s](const CallArgs& a) -> Result<Value> {
      const Value keep = Arguments(a, "splitlines").get_or(0, "keepends", Value(false));
      return string_list(py_splitlines(s, keep.truthy()));
    }));
  }
  if (name == "startswith" || name == "endswith") {
    const bool starts = name == "startswith";
    return std::optional<Value>(method(n, [s, starts](const CallArgs& a) -> Result<Value> {
      const Value* arg = Arguments(a, "startswith").get(0, "prefix");
      if (arg == nullptr) return type_error("startswith/endswith takes at least 1 argument");
      std::vector<Value> candidates;
      if (arg->is_list() && arg->list_ptr()->tuple) {
        candidates = arg->items();
      } else {
        candidates.push_back(*arg);
      }
      for (const Value& c : candidates) {
        if (!c.is_string()) return type_error("startswith/endswith first arg must be str or tuple");
        const std::string& p = c.as_string();
        if (p.size() <= s.size() && s.compare(starts ? 0 : s.size() - p.size(), p.size(), p) == 0) {
          return Value(true);
        }
      }
      return Value(false);
    }));
  }
  if (name == "replace") {
    return std::optional<Value>(method(n, [s](const CallArgs& a) -> Result<Value> {
      const Arguments args(a, "replace");
      EREDU_TRY(const std::string old, required_string(args.get(0, "old"), "replace() old"));
      EREDU_TRY(const std::string with, required_string(args.get(1, "new"), "replace() new"));
      EREDU_TRY(const std::int64_t count, integer_or(args.get(2, "count"), -1, "count"));
      return Value(py_replace(s, old, with, count));
    }));
  }
  if (name == "upper") {
    return std::optional<Value>(
        method(n, [s](const CallArgs&) -> Result<Value> { return Value(py_upper(s)); }));
  }
  if (name == "lower") {
    return std::optional<Value>(
        method(n, [s](const CallArgs&) -> Result<Value> { return Value(py_lower(s)); }));
  }
  if (name == "title") {
    return std::optional<Value>(
        method(n, [s](const CallArgs&) -> Result<Value> { return Value(py_title(s)); }));
  }
  if (name == "capitalize") {
    return std::optional<Value>(
        method(n, [s](const CallArgs&) -> Result<Value> { return Value(py_capitalize(s)); }));
  }
  if (name == "find" || name == "rfind" || name == "index" || name == "rindex") {
    const bool right = name[0] == 'r';
    const bool raise = name.find("index") != std::string_view::npos;
    return std::optional<Value>(method(n, [s, right, raise](const CallArgs& a) -> Result<Value> {
      EREDU_TRY(const std::string sub, required_string(Arguments(a, "find").get(0, "sub"), "find"));
      const std::size_t hit = right ? s.rfind(sub) : s.find(sub);
      if (hit == std::string::npos) {
        if (raise) return type_error("substring not found");
        return Value(-1);
      }
      return Value(static_cast<std::int64_t>(code_point_count(std::string_view(s).substr(0, hit))));
    }));
  }
  if (name == "count") {
    return std::optional<Value>(method(n, [s](const CallArgs& a) -> Result<Value> {
      EREDU_TRY(const std::string sub,
                required_string(Arguments(a, "count").get(0, "sub"), "count"));
      return Value(py_count(s, sub));
    }));
  }
  if (name == "format") {
    return std::optional<Value>(method(n, [s](const CallArgs& a) -> Result<Value> {
      EREDU_TRY(std::string out, str_format(s, a));
      return Value(std::move(out));
    }));
  }
  if (name == "join") {
    return std::optional<Value>(method(n, [s](const CallArgs& a) -> Result<Value> {
      const Value* seq = Arguments(a, "join").get(0, "iterable");
      if (seq == nullptr || !(seq->is_list() || seq->is_string())) {
        return type_error("join() argument must be an iterable of str");
      }
      std::string out;
      std::vector<Value> items;
      if (seq->is_list())
        items = seq->items();
      else
        for (auto cp : decode_utf8(seq->as_string())) {
          std::string c;
          append_code_point(c, cp);
          items.emplace_back(c);
        }
      for (std::size_t i = 0; i < items.size(); ++i) {
        if (!items[i].is_string()) {
          return type_error("sequence item " + std::to_string(i) + ": expected str instance, " +
                            items[i].type_name() + " found");
        }
        if (i != 0) out += s;
        out += items[i].as_string();
      }
      return Value(std::move(out));
    }));
  }
  if (name == "isdigit" || name == "isspace" || name == "isalpha" || name == "isalnum" ||
      name == "isupper" || name == "islower") {
    return std::optional<Value>(method(n, [s, n](const CallArgs&) -> Result<Value> {
      if (s.empty()) return Value(false);
      if (n == "isupper") return Value(py_upper(s) == s && py_lower(s) != s);
      if (n == "islower") return Value(py_lower(s) == s && py_upper(s) != s);
      for (std::uint32_t cp : decode_utf8(s)) {
        const bool digit = cp >= '0' && cp <= '9';
        const bool alpha = (cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z') || cp >= 0xC0;
        bool good = false;
        if (n == "isdigit") good = digit;
        if (n == "isspace") good = is_py_space(cp);
        if (n == "isalpha") good = alpha;
        if (n == "isalnum") good = alpha || digit;
        if (!good) return Value(false);
      }
      return Value(true);
    }));
  }
  if (name == "removeprefix" || name == "removesuffix") {
    const bool prefix = name == "removeprefix";
    return std::optional<Value>(method(n, [s, prefix](const CallArgs& a) -> Result<Value> {
      EREDU_TRY(const std::string p,
                required_string(Arguments(a, "removeprefix").get(0, "x"), "arg"));
      if (p.size() <= s.size() && s.compare(prefix ? 0 : s.size() - p.size(), p.size(), p) == 0) {
        return Value(prefix ? s.substr(p.size()) : s.substr(0, s.size() - p.size()));
      }
      return Value(s);
    }));
  }
  return std::optional<Value>();
}

bool is_mutating_list_method(std::string_view name) {
  static constexpr std::array<std::string_view, 9> kNames = {
      "append", "extend", "insert", "pop", "remove", "reverse", "sort", "clear", "__setitem__"};
  for (auto n : kNames) {
    if (n == name) return true;
  }
  return false;
}
bool is_mutating_dict_method(std::string_view name) {
  static constexpr std::array<std::string_view, 6> kNames = {"pop",    "popitem", "setdefault",
                                                             "update", "clear",   "__setitem__"};
  for (auto n : kNames) {
    if (n == name) return true;
  }
  return false;
}

Result<std::optional<Value>> dict_method(Evaluator& ev, const Value& object,
                                         std::string_view name) {
  const std::shared_ptr<DictObject> d = object.dict_ptr();
  const std::string n(name);
  if (name == "items" || name == "keys" || name == "values") {
    return std::optional<Value>(method(n, [d, n](const CallArgs&) -> Result<Value> {
      std::vector<Value> out;
      for (const auto& [k, v] : d->entries) {
        if (n == "items")
          out.push_back(Value::list({k, v}, true));
        else
          out.push_back(n == "keys" ? k : v);
      }
      return Value::list(std::move(out));
    }));
  }
  if (name == "get") {
    return std::optional<Value>(method(n, [d](const CallArgs& a) -> Result<Value> {
      const Arguments args(a, "get");
      const Value* key = args.get(0, "key");
      if (key == nullptr) return type_error("get expected at least 1 argument, got 0");
      const Value* v = d->find(*key);
      if (v != nullptr) return *v;
      return args.get_or(1, "default", Value::none());
    }));
  }
  if (name == "copy") {
    return std::optional<Value>(method(n, [d](const CallArgs&) -> Result<Value> {
      auto copy = std::make_shared<DictObject>(*d);
      copy->is_namespace = false;
      return Value(std::move(copy));
    }));
  }
  if (!is_mutating_dict_method(name)) return std::optional<Value>();
  if (ev.options().immutable) {
    return type_error("access to attribute '" + n + "' of 'dict' object is unsafe.");
  }
  Evaluator* evp = &ev;
  return std::optional<Value>(method(n, [d, n, evp](const CallArgs& a) -> Result<Value> {
    evp->track(d);
    const Arguments args(a, n);
    if (n == "clear") {
      d->entries.clear();
      return Value::none();
    }
    if (n == "update") {
      if (const Value* other = args.get(0, "other"); other != nullptr && other->is_dict()) {
        for (const auto& [k, v] : other->dict_ptr()->entries)
          d->set(k, v);
      }
      for (const auto& [k, v] : a.keywords)
        d->set(Value(k), v);
      return Value::none();
    }
    if (n == "popitem") {
      if (d->entries.empty()) return type_error("popitem(): dictionary is empty");
      auto last = d->entries.back();
      d->entries.pop_back();
      return Value::list({last.first, last.second}, true);
    }
    const Value* key = args.get(0, "key");
    if (key == nullptr) return type_error(n + " expected at least 1 argument");
    for (auto it = d->entries.begin(); it != d->entries.end(); ++it) {
      if (equals(it->first, *key)) {
        Value v = it->second;
        if (n == "pop") d->entries.erase(it);
        return v;
      }
    }
    if (n == "setdefault") {
      Value v = args.get_or(1, "default", Value::none());
      d->set(*key, v);
      return v;
    }
    if (const Value* dflt = args.get(1, "default"); dflt != nullptr) return *dflt;
    return type_error("KeyError: " + to_repr(*key));
  }));
}

Result<std::optional<Value>> list_method(Evaluator& ev, const Value& object,
                                         std::string_view name) {
  const std::shared_ptr<ListObject> l = object.list_ptr();
  const std::string n(name);
  if (l->generator) return std::optional<Value>();
  if (name == "index" || name == "count") {
    return std::optional<Value>(method(n, [l, n](const CallArgs& a) -> Result<Value> {
      const Value* x = Arguments(a, n).get(0, "value");
      if (x == nullptr) return type_error(n + "() takes exactly one argument");
      std::int64_t count = 0;
      for (std::size_t i = 0; i < l->items.size(); ++i) {
        if (equals(l->items[i], *x)) {
          if (n == "index") return Value(static_cast<std::int64_t>(i));
          ++count;
        }
      }
      if (n == "index") return type_error(to_repr(*x) + " is not in list");
      return Value(count);
    }));
  }
  if (!is_mutating_list_method(name) || l->tuple) return std::optional<Value>();
  if (ev.options().immutable) {
    return type_error("access to attribute '" + n + "' of 'list' object is unsafe.");
  }
  Evaluator* evp = &ev;
  return std::optional<Value>(method(n, [l, n, evp](const CallArgs& a) -> Result<Value> {
    evp->track(l);
    const Arguments args(a, n);
    auto& items = l->items;
    if (n == "append") {
      const Value* x = args.get(0, "object");
      if (x == nullptr) return type_error("append() takes exactly one argument");
      EREDU_TRY_VOID(evp->count_iterations(1));
      items.push_back(*x);
      return Value::none();
    }
    if (n == "extend") {
      const Value* x = args.get(0, "iterable");
      if (x == nullptr) return type_error("extend() takes exactly one argument");
      EREDU_TRY(std::vector<Value> more, evp->iterate(*x));
      EREDU_TRY_VOID(evp->count_iterations(more.size()));
      items.insert(items.end(), more.begin(), more.end());
      return Value::none();
    }
    if (n == "insert") {
      const Value* at = args.get(0, "index");
      const Value* x = args.get(1, "object");
      if (at == nullptr || x == nullptr || !at->is_int()) {
        return type_error("insert() expects an index and an object");
      }
      auto i = at->as_int();
      const auto size = static_cast<std::int64_t>(items.size());
      if (i < 0) i = std::max<std::int64_t>(0, i + size);
      if (i > size) i = size;
      EREDU_TRY_VOID(evp->count_iterations(1));
      items.insert(items.begin() + i, *x);
      return Value::none();
    }
    if (n == "pop") {
      if (items.empty()) return type_error("pop from empty list");
      EREDU_TRY(std::int64_t i, integer_or(args.get(0, "index"), -1, "pop index"));
      const auto size = static_cast<std::int64_t>(items.size());
      if (i < 0) i += size;
      if (i < 0 || i >= size) return type_error("pop index out of range");
      Value v = items[static_cast<std::size_t>(i)];
      items.erase(items.begin() + i);
      return v;
    }
    if (n == "remove") {
      const Value* x = args.get(0, "value");
      for (auto it = items.begin(); x != nullptr && it != items.end(); ++it) {
        if (equals(*it, *x)) {
          items.erase(it);
          return Value::none();
        }
      }
      return type_error("list.remove(x): x not in list");
    }
    if (n == "reverse") {
      std::reverse(items.begin(), items.end());
      return Value::none();
    }
    if (n == "clear") {
      items.clear();
      return Value::none();
    }
    return type_error("list." + n + "() is not supported");
  }));
}

}  // namespace

Result<std::optional<Value>> bound_method(Evaluator& ev, const Value& object,
                                          std::string_view name) {
  if (object.is_string()) return string_method(object.as_string(), name);
  if (object.is_dict() && !object.is_namespace()) return dict_method(ev, object, name);
  if (object.is_list()) return list_method(ev, object, name);
  if (object.is_function() && name == "__call__") return std::optional<Value>(object);
  return std::optional<Value>();
}

void add_globals(Evaluator& ev, Frame& frame) {
  Evaluator* evp = &ev;
  frame.set("range", method("range", [evp](const CallArgs& a) -> Result<Value> {
              std::int64_t start = 0;
              std::int64_t stop = 0;
              std::int64_t step = 1;
              for (const Value& v : a.positional) {
                if (!v.is_int() && !v.is_bool()) {
                  return type_error(repr_quoted(v.type_name()) +
                                    " object cannot be interpreted as an integer");
                }
              }
              auto num = [](const Value& v) {
                return v.is_int() ? v.as_int() : (v.as_bool() ? 1 : 0);
              };
              if (a.positional.size() == 1) {
                stop = num(a.positional[0]);
              } else if (a.positional.size() == 2 || a.positional.size() == 3) {
                start = num(a.positional[0]);
                stop = num(a.positional[1]);
                if (a.positional.size() == 3) step = num(a.positional[2]);
              } else {
                return type_error("range expected 1 to 3 arguments, got " +
                                  std::to_string(a.positional.size()));
              }
              if (step == 0) return type_error("range() arg 3 must not be zero");
              std::vector<Value> items;
              for (std::int64_t i = start; step > 0 ? i < stop : i > stop;) {
                EREDU_TRY_VOID(evp->count_iterations(1));
                items.emplace_back(i);
                if (__builtin_add_overflow(i, step, &i)) break;
              }
              return Value::list(std::move(items));
            }));
  frame.set("dict", method("dict", [](const CallArgs& a) -> Result<Value> {
              auto d = std::make_shared<DictObject>();
              if (!a.positional.empty()) {
                if (!a.positional[0].is_dict()) return type_error("dict() expects a mapping");
                d->entries = a.positional[0].dict_ptr()->entries;
              }
              for (const auto& [k, v] : a.keywords)
                d->set(Value(k), v);
              return Value(std::move(d));
            }));
  frame.set("namespace", method("namespace", [](const CallArgs& a) -> Result<Value> {
              auto d = std::make_shared<DictObject>();
              d->is_namespace = true;
              for (const Value& p : a.positional) {
                if (!p.is_dict())
                  return type_error("namespace() expects a mapping or keyword arguments");
                for (const auto& [k, v] : p.dict_ptr()->entries)
                  d->set(k, v);
              }
              for (const auto& [k, v] : a.keywords)
                d->set(Value(k), v);
              return Value(std::move(d));
            }));
  frame.set("raise_exception", method("raise_exception", [](const CallArgs& a) -> Result<Value> {
              const std::string message = a.positional.empty() ? "" : to_str(a.positional[0]);
              return fail(ErrorCode::kInvalidArgument, "raise_exception: " + message);
            }));
  frame.set("strftime_now", method("strftime_now", [evp](const CallArgs& a) -> Result<Value> {
              if (a.positional.empty() || !a.positional[0].is_string()) {
                return type_error("strftime_now expects a format string");
              }
              const std::time_t t = std::chrono::system_clock::to_time_t(evp->now());
              std::tm tm{};
              gmtime_r(&t, &tm);
              const std::string& fmt = a.positional[0].as_string();
              if (fmt.size() > 1024)
                return type_error("strftime_now: format longer than 1024 bytes");
              std::string buf(fmt.size() * 16 + 64, '\0');
              const std::size_t n = std::strftime(buf.data(), buf.size(), fmt.c_str(), &tm);
              buf.resize(n);
              return Value(std::move(buf));
            }));
  frame.set("cycler", method("cycler", [](const CallArgs& a) -> Result<Value> {
              auto items = std::make_shared<std::vector<Value>>(a.positional);
              auto pos = std::make_shared<std::size_t>(0);
              auto obj = std::make_shared<DictObject>();
              obj->is_namespace = true;
              obj->set(Value("items"), Value::list(*items));
              obj->set(Value("next"),
                       method("next", [items, pos](const CallArgs&) -> Result<Value> {
                         if (items->empty()) return Value::none();
                         Value v = (*items)[*pos % items->size()];
                         *pos = (*pos + 1) % items->size();
                         return v;
                       }));
              obj->set(Value("reset"), method("reset", [pos](const CallArgs&) -> Result<Value> {
                         *pos = 0;
                         return Value::none();
                       }));
              return Value(std::move(obj));
            }));
  frame.set("joiner", method("joiner", [](const CallArgs& a) -> Result<Value> {
              const std::string sep = a.positional.empty() ? ", " : to_str(a.positional[0]);
              auto used = std::make_shared<bool>(false);
              return method("joiner", [sep, used](const CallArgs&) -> Result<Value> {
                if (!*used) {
                  *used = true;
                  return Value("");
                }
                return Value(sep);
              });
            }));
}

}  // namespace eredu::jinja::detail
