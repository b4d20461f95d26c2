#pragma once
// eredu's logging facade. The library logs through spdlog behind this small interface: it never
// writes to stdout, logs to stderr by default, and lets the caller set the level or install its
// own sink (a callback, or an spdlog sink through eredu/core/log_spdlog.hpp).

#include <fmt/format.h>

#include <functional>
#include <string_view>
#include <utility>

namespace eredu::log {

enum class Level { kTrace, kDebug, kInfo, kWarn, kError, kOff };

// Messages below `level` are dropped before they are formatted. Default: kWarn, or the value of
// the environment variable EREDU_LOG_LEVEL (trace, debug, info, warn, error, off) when set.
void set_level(Level level) noexcept;
[[nodiscard]] Level level() noexcept;
[[nodiscard]] bool enabled(Level level) noexcept;

// Receives every message that passes the level. Installing an empty function restores the
// default stderr sink. A sink that throws has its exception swallowed.
using Sink = std::function<void(Level, std::string_view)>;
void set_sink(Sink sink);

// Writes one already formatted message.
void write(Level level, std::string_view message) noexcept;

template <typename... Args>
void emit(Level lvl, fmt::format_string<Args...> format, Args&&... args) noexcept {
  if (!enabled(lvl)) return;
  try {
    write(lvl, fmt::format(format, std::forward<Args>(args)...));
  } catch (...) {  // formatting may allocate; logging never fails the caller
  }
}

template <typename... Args>
void trace(fmt::format_string<Args...> f, Args&&... a) noexcept {
  emit(Level::kTrace, f, std::forward<Args>(a)...);
}
template <typename... Args>
void debug(fmt::format_string<Args...> f, Args&&... a) noexcept {
  emit(Level::kDebug, f, std::forward<Args>(a)...);
}
template <typename... Args>
void info(fmt::format_string<Args...> f, Args&&... a) noexcept {
  emit(Level::kInfo, f, std::forward<Args>(a)...);
}
template <typename... Args>
void warn(fmt::format_string<Args...> f, Args&&... a) noexcept {
  emit(Level::kWarn, f, std::forward<Args>(a)...);
}
template <typename... Args>
void error(fmt::format_string<Args...> f, Args&&... a) noexcept {
  emit(Level::kError, f, std::forward<Args>(a)...);
}

}  // namespace eredu::log
