#pragma once
// The element type a backend stores a session's KV cache in. Load options of every backend name
// it the same way (`--kv-type f16` means one thing whichever backend runs).

#include <cstdint>

namespace eredu {

enum class KvCacheType : std::uint8_t { kF32, kF16 };

}  // namespace eredu
