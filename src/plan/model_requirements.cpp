// Header-only model requirements (see model_requirements.hpp).
#include "eredu/plan/model_requirements.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>

#include "eredu/checkpoint/source.hpp"
#include "eredu/checkpoint/tensor_catalog.hpp"
#include "eredu/model/admission.hpp"

namespace eredu::plan {
namespace {

// The layer index of a "blk.<i>." tensor name, or -1.
std::int64_t layer_of(std::string_view name) {
  constexpr std::string_view kPrefix = "blk.";
  if (!name.starts_with(kPrefix)) return -1;
  name.remove_prefix(kPrefix.size());
  std::uint32_t index = 0;
  const auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), index);
  if (ec != std::errc() || end == name.data() || end == name.data() + name.size() || *end != '.') {
    return -1;
  }
  return index;
}

}  // namespace

std::uint64_t ModelRequirements::activation_bytes(std::uint32_t batch, std::uint32_t context,
                                                  std::uint32_t threads) const noexcept {
  const model::ModelGeometry& g = geometry;
  const std::uint64_t q = std::uint64_t{g.n_head} * g.head_dim;
  const std::uint64_t kv = std::uint64_t{g.n_head_kv} * g.head_dim;
  const std::uint64_t per_token = 8ull * g.n_embd + 2 * q + 2 * kv + 3ull * g.n_ff;
  const std::uint64_t scores = std::uint64_t{std::max(threads, 1u)} * context;
  return 4 * (std::uint64_t{batch} * per_token + scores + g.n_vocab);
}

Result<ModelRequirements> inspect_model_requirements(const ArtifactInspection& inspection) {
  // The family reads its own config (context 1: the geometry does not depend on it).
  EREDU_TRY(const model::ModelAdmission admitted,
            model::read_model_admission("planner", inspection, 1));
  ModelRequirements r;
  r.architecture = inspection.architecture;
  r.geometry = admitted.geometry;
  r.layer_bytes.assign(admitted.geometry.n_layer, 0);
  const checkpoint::TensorCatalog& catalog = inspection.source->catalog();
  for (const checkpoint::TensorMetadata& t : catalog.entries()) {
    r.weight_bytes += t.byte_length;
    auto it = std::find_if(r.by_encoding.begin(), r.by_encoding.end(),
                           [&](const EncodingBytes& e) { return e.dtype == t.dtype; });
    if (it == r.by_encoding.end()) {
      r.by_encoding.push_back(EncodingBytes{t.dtype, 0, 0});
      it = r.by_encoding.end() - 1;
    }
    ++it->tensors;
    it->bytes += t.byte_length;
    const std::int64_t layer = layer_of(t.name);
    if (layer >= 0 && static_cast<std::uint64_t>(layer) < r.layer_bytes.size()) {
      r.layer_bytes[static_cast<std::size_t>(layer)] += t.byte_length;
    } else {
      r.non_layer_bytes += t.byte_length;
    }
  }
  return r;
}

std::string format_bytes(std::uint64_t bytes) {
  constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB"};
  if (bytes < 1024) return std::to_string(bytes) + " B";
  double value = static_cast<double>(bytes) / 1024.0;
  std::size_t unit = 0;
  while (value >= 1024.0 && unit + 1 < std::size(kUnits)) {
    value /= 1024.0;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof text, value < 10.0 ? "%.2f %s" : "%.1f %s", value, kUnits[unit]);
  return text;
}

}  // namespace eredu::plan
