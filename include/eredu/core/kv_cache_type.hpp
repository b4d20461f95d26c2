#pragma once
// The element type a backend stores a session's KV cache in. Load options of every backend name
// it the same way (`--kv-type f16` means one thing whichever backend runs).

#include <cstdint>
#include <optional>
#include <string_view>

namespace eredu {

enum class KvCacheType : std::uint8_t { kF32, kF16 };

inline constexpr std::string_view kKvCacheTypeNames = "f16 or f32";

[[nodiscard]] constexpr std::string_view to_string(KvCacheType type) noexcept {
  return type == KvCacheType::kF16 ? "f16" : "f32";
}

// "f16" / "f32" (as --kv-type and the plan's JSON spell them); nullopt for anything else.
[[nodiscard]] constexpr std::optional<KvCacheType> parse_kv_cache_type(std::string_view name) {
  if (name == "f16") return KvCacheType::kF16;
  if (name == "f32") return KvCacheType::kF32;
  return std::nullopt;
}

// Bytes one cached element takes.
[[nodiscard]] constexpr std::uint32_t kv_cache_element_bytes(KvCacheType type) noexcept {
  return type == KvCacheType::kF16 ? 2 : 4;
}

}  // namespace eredu
