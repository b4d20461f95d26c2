#pragma once
// Internal, ISA translation units only (avx2/*.cpp, avx512/*.cpp): how a prompt kernel runs one
// work item, shared by the Q4_0 / Q8_0 and K-quant prompt tiles of both tables. The kernel repacks
// the item's rows in groups of kLanes (one row per 32-bit lane), once for all its tokens, then
// runs every group against token tiles of kTokens, tokens outer so that a token tile's activations
// stay in cache while the groups stream past. Internal linkage (anonymous namespace), see
// vec_ops.hpp.
#include <cstddef>
#include <vector>

namespace eredu::cpu::detail {
namespace {

// Per-thread storage for a work item's repacked groups, grown to the largest item seen and then
// reused (one buffer per Group type, so per kernel).
template <typename Group>
Group* group_scratch(std::size_t n) {
  thread_local std::vector<Group> buffer;
  if (buffer.size() < n) buffer.resize(n);
  return buffer.data();
}

// repack(g, rows) for the groups of an m-row item, then tile(g, rows, t0, rn, token) per token
// tile of rn <= kTokens tokens from t0, where token(t) is the index of the tile's token t: a short
// last tile repeats its last token, so that the kernel computes full tiles and stores rn.
template <std::size_t kLanes, std::size_t kTokens, typename Repack, typename Tile>
void run_prompt_item(std::size_t m, std::size_t n, Repack&& repack, Tile&& tile) {
  const std::size_t n_groups = (m + kLanes - 1) / kLanes;
  const auto rows_of = [&](std::size_t g) {
    return m - g * kLanes < kLanes ? m - g * kLanes : kLanes;
  };
  for (std::size_t g = 0; g < n_groups; ++g)
    repack(g, rows_of(g));
  for (std::size_t t0 = 0; t0 < n; t0 += kTokens) {
    const std::size_t rn = n - t0 < kTokens ? n - t0 : kTokens;
    const auto token = [&](std::size_t t) { return t0 + (t < rn ? t : rn - 1); };
    for (std::size_t g = 0; g < n_groups; ++g)
      tile(g, rows_of(g), t0, rn, token);
  }
}

}  // namespace
}  // namespace eredu::cpu::detail
