// Python's str methods over UTF-8. Case mapping covers ASCII and Latin-1/Greek/Cyrillic basics;
// whitespace is Python's str.isspace set.

#include "strings.hpp"

#include <algorithm>

#include "pytext.hpp"

namespace eredu::jinja::detail {

bool is_py_space(std::uint32_t cp) {
  return (cp >= 0x09 && cp <= 0x0D) || (cp >= 0x1C && cp <= 0x20) || cp == 0x85 || cp == 0xA0 ||
         cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 ||
         cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

namespace {

std::uint32_t to_upper_cp(std::uint32_t c) {
  if (c >= 'a' && c <= 'z') return c - 32;
  if ((c >= 0xE0 && c <= 0xFE && c != 0xF7)) return c - 32;
  if (c >= 0x3B1 && c <= 0x3C9 && c != 0x3C2) return c - 32;
  if (c >= 0x430 && c <= 0x44F) return c - 32;
  if (c >= 0x450 && c <= 0x45F) return c - 80;
  return c;
}
std::uint32_t to_lower_cp(std::uint32_t c) {
  if (c >= 'A' && c <= 'Z') return c + 32;
  if ((c >= 0xC0 && c <= 0xDE && c != 0xD7)) return c + 32;
  if (c >= 0x391 && c <= 0x3A9 && c != 0x3A2) return c + 32;
  if (c >= 0x410 && c <= 0x42F) return c + 32;
  if (c >= 0x400 && c <= 0x40F) return c + 80;
  return c;
}
bool is_cased(std::uint32_t c) {
  return to_upper_cp(c) != c || to_lower_cp(c) != c;
}

template <typename F>
std::string map_cps(const std::string& s, F f) {
  if (is_ascii(s)) {
    std::string out = s;
    for (char& c : out)
      c = static_cast<char>(f(static_cast<unsigned char>(c)));
    return out;
  }
  std::string out;
  for (std::uint32_t cp : decode_utf8(s))
    append_code_point(out, f(cp));
  return out;
}

}  // namespace

std::string py_strip(const std::string& s, const std::optional<std::string>& chars, bool left,
                     bool right) {
  const auto cps = decode_utf8(s);
  std::vector<std::uint32_t> set;
  if (chars) set = decode_utf8(*chars);
  auto strip_it = [&](std::uint32_t cp) {
    return chars ? std::find(set.begin(), set.end(), cp) != set.end() : is_py_space(cp);
  };
  std::size_t b = 0;
  std::size_t e = cps.size();
  if (left) {
    while (b < e && strip_it(cps[b]))
      ++b;
  }
  if (right) {
    while (e > b && strip_it(cps[e - 1]))
      --e;
  }
  return encode_utf8(cps, b, e);
}

std::vector<std::string> py_split(const std::string& s, const std::optional<std::string>& sep,
                                  std::int64_t maxsplit, bool from_right) {
  std::vector<std::string> parts;
  if (sep) {
    if (!from_right) {
      std::size_t pos = 0;
      while (maxsplit < 0 || static_cast<std::int64_t>(parts.size()) < maxsplit) {
        const std::size_t hit = s.find(*sep, pos);
        if (hit == std::string::npos) break;
        parts.push_back(s.substr(pos, hit - pos));
        pos = hit + sep->size();
      }
      parts.push_back(s.substr(pos));
      return parts;
    }
    std::size_t end = s.size();
    std::vector<std::string> rev;
    while (maxsplit < 0 || static_cast<std::int64_t>(rev.size()) < maxsplit) {
      if (end < sep->size()) break;
      const std::size_t hit = s.rfind(*sep, end - sep->size());
      if (hit == std::string::npos) break;
      rev.push_back(s.substr(hit + sep->size(), end - hit - sep->size()));
      end = hit;
    }
    rev.push_back(s.substr(0, end));
    return {rev.rbegin(), rev.rend()};
  }
  const auto cps = decode_utf8(s);
  const std::size_t n = cps.size();
  if (!from_right) {
    std::size_t i = 0;
    while (true) {
      while (i < n && is_py_space(cps[i]))
        ++i;
      if (i >= n) break;
      if (maxsplit >= 0 && static_cast<std::int64_t>(parts.size()) >= maxsplit) {
        std::size_t e = n;
        while (e > i && is_py_space(cps[e - 1]))
          --e;
        parts.push_back(encode_utf8(cps, i, e));
        break;
      }
      std::size_t j = i;
      while (j < n && !is_py_space(cps[j]))
        ++j;
      parts.push_back(encode_utf8(cps, i, j));
      i = j;
    }
    return parts;
  }
  std::size_t e = n;
  std::vector<std::string> rev;
  while (true) {
    while (e > 0 && is_py_space(cps[e - 1]))
      --e;
    if (e == 0) break;
    if (maxsplit >= 0 && static_cast<std::int64_t>(rev.size()) >= maxsplit) {
      std::size_t b = 0;
      while (b < e && is_py_space(cps[b]))
        ++b;
      rev.push_back(encode_utf8(cps, b, e));
      break;
    }
    std::size_t j = e;
    while (j > 0 && !is_py_space(cps[j - 1]))
      --j;
    rev.push_back(encode_utf8(cps, j, e));
    e = j;
  }
  return {rev.rbegin(), rev.rend()};
}

std::vector<std::string> py_splitlines(const std::string& s, bool keepends) {
  std::vector<std::string> lines;
  const auto cps = decode_utf8(s);
  std::size_t start = 0;
  for (std::size_t i = 0; i < cps.size(); ++i) {
    const std::uint32_t c = cps[i];
    const bool brk = c == '\n' || c == '\r' || c == 0x0B || c == 0x0C || c == 0x1C || c == 0x1D ||
                     c == 0x1E || c == 0x85 || c == 0x2028 || c == 0x2029;
    if (!brk) continue;
    std::size_t end = i + 1;
    if (c == '\r' && i + 1 < cps.size() && cps[i + 1] == '\n') end = i + 2;
    lines.push_back(encode_utf8(cps, start, keepends ? end : i));
    i = end - 1;
    start = end;
  }
  if (start < cps.size()) lines.push_back(encode_utf8(cps, start, cps.size()));
  return lines;
}

std::string py_replace(const std::string& s, const std::string& old, const std::string& with,
                       std::int64_t count) {
  std::string out;
  if (old.empty()) {
    // Python inserts `with` between every code point (and at both ends).
    const auto cps = decode_utf8(s);
    std::int64_t done = 0;
    for (std::size_t i = 0; i <= cps.size(); ++i) {
      if (count < 0 || done < count) {
        out += with;
        ++done;
      }
      if (i < cps.size()) append_code_point(out, cps[i]);
    }
    return out;
  }
  std::size_t pos = 0;
  std::int64_t done = 0;
  while (count < 0 || done < count) {
    const std::size_t hit = s.find(old, pos);
    if (hit == std::string::npos) break;
    out.append(s, pos, hit - pos);
    out += with;
    pos = hit + old.size();
    ++done;
  }
  out.append(s, pos, std::string::npos);
  return out;
}

std::string py_upper(const std::string& s) {
  return map_cps(s, to_upper_cp);
}
std::string py_lower(const std::string& s) {
  return map_cps(s, to_lower_cp);
}

std::string py_capitalize(const std::string& s) {
  const auto cps = decode_utf8(s);
  std::string out;
  for (std::size_t i = 0; i < cps.size(); ++i) {
    append_code_point(out, i == 0 ? to_upper_cp(cps[i]) : to_lower_cp(cps[i]));
  }
  return out;
}

std::string py_title(const std::string& s) {
  std::string out;
  bool previous_cased = false;
  for (std::uint32_t cp : decode_utf8(s)) {
    append_code_point(out, previous_cased ? to_lower_cp(cp) : to_upper_cp(cp));
    previous_cased = is_cased(cp);
  }
  return out;
}

std::int64_t py_count(const std::string& s, const std::string& sub) {
  if (sub.empty()) return static_cast<std::int64_t>(code_point_count(s)) + 1;
  std::int64_t n = 0;
  for (std::size_t pos = s.find(sub); pos != std::string::npos;
       pos = s.find(sub, pos + sub.size())) {
    ++n;
  }
  return n;
}

}  // namespace eredu::jinja::detail
