// The logging facade's implementation: one spdlog logger writing to stderr, replaceable by a
// caller-provided sink. Kept out of the headers so users of eredu need not see spdlog.

#include "eredu/core/log.hpp"

#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>

namespace eredu::log {
namespace {

Level level_from_environment() noexcept {
  const char* value = std::getenv("EREDU_LOG_LEVEL");
  if (value == nullptr) return Level::kWarn;
  const std::string_view v(value);
  if (v == "trace") return Level::kTrace;
  if (v == "debug") return Level::kDebug;
  if (v == "info") return Level::kInfo;
  if (v == "error") return Level::kError;
  if (v == "off") return Level::kOff;
  return Level::kWarn;
}

std::atomic<Level>& current_level() noexcept {
  static std::atomic<Level> level{level_from_environment()};
  return level;
}

struct State {
  std::mutex mutex;
  Sink user_sink;
  std::shared_ptr<spdlog::logger> logger;
};

State& state() {
  static State s;
  return s;
}

spdlog::level::level_enum to_spdlog(Level level) noexcept {
  switch (level) {
    case Level::kTrace:
      return spdlog::level::trace;
    case Level::kDebug:
      return spdlog::level::debug;
    case Level::kInfo:
      return spdlog::level::info;
    case Level::kWarn:
      return spdlog::level::warn;
    case Level::kError:
      return spdlog::level::err;
    case Level::kOff:
      return spdlog::level::off;
  }
  return spdlog::level::warn;
}

}  // namespace

void set_level(Level level) noexcept {
  current_level().store(level, std::memory_order_relaxed);
}
Level level() noexcept {
  return current_level().load(std::memory_order_relaxed);
}
bool enabled(Level lvl) noexcept {
  return lvl != Level::kOff && lvl >= level();
}

void set_sink(Sink sink) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  s.user_sink = std::move(sink);
}

void write(Level lvl, std::string_view message) noexcept {
  try {
    State& s = state();
    std::lock_guard lock(s.mutex);
    if (s.user_sink) {
      try {
        s.user_sink(lvl, message);
      } catch (...) {
      }
      return;
    }
    if (!s.logger) {
      // A private logger (not registered globally) so eredu never disturbs the application's
      // spdlog registry or default logger.
      s.logger = std::make_shared<spdlog::logger>(
          "eredu", std::make_shared<spdlog::sinks::stderr_sink_mt>());
      s.logger->set_pattern("[eredu] [%l] %v");
      s.logger->set_level(spdlog::level::trace);
    }
    s.logger->log(to_spdlog(lvl), spdlog::string_view_t(message.data(), message.size()));
  } catch (...) {
  }
}

}  // namespace eredu::log
