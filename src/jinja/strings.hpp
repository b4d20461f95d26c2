#pragma once
// Python str operations on UTF-8 text, shared by the string methods and the filters.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace eredu::jinja::detail {

bool is_py_space(std::uint32_t cp);
// str.strip/lstrip/rstrip: `chars` nullopt strips whitespace.
std::string py_strip(const std::string& s, const std::optional<std::string>& chars, bool left,
                     bool right);
// str.split / str.rsplit (sep nullopt: runs of whitespace); maxsplit < 0: no limit.
std::vector<std::string> py_split(const std::string& s, const std::optional<std::string>& sep,
                                  std::int64_t maxsplit, bool from_right);
std::vector<std::string> py_splitlines(const std::string& s, bool keepends);
std::string py_replace(const std::string& s, const std::string& old, const std::string& with,
                       std::int64_t count);
std::string py_upper(const std::string& s);
std::string py_lower(const std::string& s);
std::string py_capitalize(const std::string& s);
std::string py_title(const std::string& s);  // str.title()
std::int64_t py_count(const std::string& s, const std::string& sub);

}  // namespace eredu::jinja::detail
