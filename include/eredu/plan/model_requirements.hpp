#pragma once
// What a model needs to run, read from its headers alone (no weight byte is read): the bytes of
// its weights per encoding and per layer, the KV-cache bytes per position at each precision, and
// an estimate of the activation scratch a forward pass takes. The planner sizes plans with it and
// request admission checks a request against it.
//
// The weight bytes are the checkpoint's tensor bytes: every backend keeps the packed blocks as
// they are stored (the CPU maps them in place; a device backend uploads them unchanged), so the
// file's sizes are what residency costs. The activation estimate counts the per-token tensors a
// decoder layer keeps alive at its peak (hidden state, residual, normed input, q/k/v, attention
// output, gate/up/act/down), the per-thread attention-score rows and the last token's logits; it
// is an upper bound on what the CPU backend allocates, not a measurement.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "eredu/core/dtype.hpp"
#include "eredu/core/kv_cache_type.hpp"
#include "eredu/core/model_loading.hpp"
#include "eredu/core/result.hpp"
#include "eredu/model/geometry.hpp"

namespace eredu::plan {

// The weights of one encoding: how many tensors and bytes.
struct EncodingBytes {
  DType dtype = DType::kF32;
  std::uint64_t tensors = 0;
  std::uint64_t bytes = 0;
};

struct ModelRequirements {
  std::string architecture;
  model::ModelGeometry geometry;
  std::uint64_t weight_bytes = 0;          // every tensor
  std::vector<EncodingBytes> by_encoding;  // in order of first appearance
  std::vector<std::uint64_t> layer_bytes;  // blk.<i>.* tensors, per layer i
  std::uint64_t non_layer_bytes = 0;       // embeddings, output, final norm, rope factors

  // K and V of one position in every layer.
  [[nodiscard]] std::uint64_t kv_bytes_per_position(KvCacheType type) const noexcept {
    return 2ull * geometry.n_layer * geometry.n_head_kv * geometry.head_dim *
           kv_cache_element_bytes(type);
  }
  [[nodiscard]] std::uint64_t kv_bytes(KvCacheType type, std::uint32_t positions) const noexcept {
    return kv_bytes_per_position(type) * positions;
  }
  // The activation scratch of one forward pass of `batch` tokens over a cache of `context`
  // positions on `threads` threads (see the header comment).
  [[nodiscard]] std::uint64_t activation_bytes(std::uint32_t batch, std::uint32_t context,
                                               std::uint32_t threads) const noexcept;
};

// The prompt batch plans are sized for: a longer prompt runs as one forward pass too, and request
// admission checks its real size.
inline constexpr std::uint32_t kPlanningBatch = 512;

// Reads the requirements of an inspected model: kUnsupported for an architecture that is not a
// registered family, the family's config errors otherwise (naming the GGUF key).
[[nodiscard]] Result<ModelRequirements> inspect_model_requirements(
    const ArtifactInspection& inspection);

// "1.50 GiB", "12.0 MiB", "512 B": for messages and reports.
[[nodiscard]] std::string format_bytes(std::uint64_t bytes);

}  // namespace eredu::plan
