#pragma once
// Optional bridge for applications that already use spdlog: route eredu's messages into an
// spdlog sink of theirs. Including this header requires linking spdlog yourself.

#include <spdlog/sinks/sink.h>

#include <memory>
#include <string>

#include "eredu/core/log.hpp"

namespace eredu::log {

inline void set_spdlog_sink(std::shared_ptr<spdlog::sinks::sink> sink) {
  if (!sink) {
    set_sink({});
    return;
  }
  set_sink([sink = std::move(sink)](Level level, std::string_view message) {
    static constexpr spdlog::level::level_enum kMap[] = {spdlog::level::trace, spdlog::level::debug,
                                                         spdlog::level::info,  spdlog::level::warn,
                                                         spdlog::level::err,   spdlog::level::off};
    spdlog::details::log_msg msg("eredu", kMap[static_cast<int>(level)],
                                 spdlog::string_view_t(message.data(), message.size()));
    sink->log(msg);
  });
}

}  // namespace eredu::log
