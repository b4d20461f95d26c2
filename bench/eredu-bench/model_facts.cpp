#include "model_facts.hpp"

#include <filesystem>
#include <map>
#include <string_view>

#include "eredu/core/dtype.hpp"

namespace eredu::bench {
namespace {

constexpr std::string_view kEmbedding = "token_embd.weight";
constexpr std::string_view kOutput = "output.weight";

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}
bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

}  // namespace

double ModelFacts::prefill_flops(std::uint64_t tokens) const noexcept {
  const double t = static_cast<double>(tokens);
  const double layer_params = static_cast<double>(matrix_params - output_params);
  return 2.0 * layer_params * t + 2.0 * static_cast<double>(output_params) +
         4.0 * static_cast<double>(q_dim) * n_layers * t * (t + 1.0) / 2.0;
}

Result<ModelFacts> model_facts(const std::string& file, const std::string& architecture,
                               const checkpoint::TensorCatalog& catalog) {
  ModelFacts facts;
  facts.file = file;
  std::string stem = std::filesystem::path(file).filename().string();
  if (ends_with(stem, ".gguf")) stem.resize(stem.size() - 5);
  facts.name = stem;
  facts.size_bytes = catalog.total_bytes();

  const checkpoint::TensorMetadata* embedding = catalog.find(kEmbedding);
  if (embedding == nullptr || embedding->shape.size() != 2) {
    return fail(Error(ErrorCode::kInvalidModel, "no 2-D token embedding table")
                    .with_path(file)
                    .with_subject(std::string(kEmbedding)));
  }
  facts.n_vocab = static_cast<std::uint32_t>(embedding->shape[0]);
  const bool tied = catalog.find(kOutput) == nullptr;

  std::map<DType, std::uint64_t> bytes_by_dtype;
  for (const checkpoint::TensorMetadata& t : catalog.entries()) {
    facts.params += t.element_count();
    if (t.shape.size() != 2) continue;
    const bool is_embedding = t.name == kEmbedding;
    if (is_embedding && !tied) continue;
    facts.matrix_bytes += t.byte_length;
    facts.matrix_params += t.element_count();
    bytes_by_dtype[t.dtype] += t.byte_length;
    if (t.name == kOutput || (tied && is_embedding)) facts.output_params = t.element_count();
    if (starts_with(t.name, "blk.") && ends_with(t.name, ".attn_q.weight")) {
      ++facts.n_layers;
      facts.q_dim = t.shape[0];
    }
  }
  DType dominant = embedding->dtype;
  std::uint64_t most = 0;
  for (const auto& [dtype, bytes] : bytes_by_dtype) {
    if (bytes > most) {
      most = bytes;
      dominant = dtype;
    }
  }
  facts.type = architecture + " " + std::string(dtype_info(dominant).name);
  return facts;
}

}  // namespace eredu::bench
