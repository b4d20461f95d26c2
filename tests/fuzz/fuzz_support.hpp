#pragma once
// Shared by the libFuzzer harnesses and the seed generator: quiet logging (a fuzzer runs millions
// of inputs; the library's warnings would drown the report) and byte-view helpers.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "eredu/core/log.hpp"

namespace eredu::fuzz {

inline void silence_library_logging() noexcept {
  eredu::log::set_level(eredu::log::Level::kOff);
}

inline std::span<const std::byte> as_bytes(const std::uint8_t* data, std::size_t size) noexcept {
  return {reinterpret_cast<const std::byte*>(data), size};
}

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) noexcept {
  return {reinterpret_cast<const char*>(data), size};
}

}  // namespace eredu::fuzz
