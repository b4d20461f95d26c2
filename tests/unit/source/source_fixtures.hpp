#pragma once
// Helpers for the source tests: tensors whose bytes follow a pattern the tests can recompute.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "eredu/checkpoint/memory_source.hpp"

namespace eredu::checkpoint::testing {

// Byte i of tensor `seed` (distinct per tensor so a wrong span shows up as wrong bytes).
inline std::byte pattern_byte(std::uint32_t seed, std::size_t i) {
  return static_cast<std::byte>((seed * 37U + i * 11U + 5U) & 0xFFU);
}

inline std::vector<std::byte> pattern(std::uint32_t seed, std::size_t n) {
  std::vector<std::byte> out(n);
  for (std::size_t i = 0; i < n; ++i)
    out[i] = pattern_byte(seed, i);
  return out;
}

inline MemoryTensor f32_tensor(std::string name, std::vector<std::uint64_t> shape,
                               std::uint32_t seed, std::uint32_t shard = 0) {
  std::uint64_t n = 4;
  for (std::uint64_t d : shape)
    n *= d;
  return MemoryTensor{std::move(name), std::move(shape), DType::kF32,
                      pattern(seed, static_cast<std::size_t>(n)), shard};
}

// `count` shards holding one [2, 4] F32 tensor each, named "t<i>".
inline std::vector<MemoryTensor> one_tensor_per_shard(std::uint32_t count) {
  std::vector<MemoryTensor> out;
  for (std::uint32_t i = 0; i < count; ++i) {
    out.push_back(f32_tensor("t" + std::to_string(i), {2, 4}, i, i));
  }
  return out;
}

inline std::string shard_name(std::uint32_t i) {
  return "memory:shard-" + std::to_string(i);
}

}  // namespace eredu::checkpoint::testing
