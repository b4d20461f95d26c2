#pragma once
// Shared pieces of the eredu-bench tests: the model they run on and the quantities the output's
// derived columns must equal, computed here from the GGUF tensor shapes (not by eredu-bench).

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <string>

#include "bench_process.hpp"
#include "eredu/checkpoint/gguf_source.hpp"
#include "shared_data.hpp"

namespace eredu::testing {

inline std::filesystem::path stories_model() {
  return models_dir() / "stories260K.gguf";
}

// What a decoded token reads and what a prefill computes, from the tensor shapes.
struct ExpectedWork {
  std::uint64_t tensor_bytes = 0;   // every tensor (the "size" column)
  std::uint64_t params = 0;         // every tensor's elements
  std::uint64_t matrix_bytes = 0;   // 2-D tensors except the embedding table (when untied)
  std::uint64_t layer_params = 0;   // 2-D tensors of the blocks (blk.*)
  std::uint64_t output_params = 0;  // the logits matrix
  std::uint64_t q_rows = 0;         // rows of one attn_q matrix
  std::uint64_t layers = 0;

  [[nodiscard]] double prefill_flops(double p) const {
    return 2.0 * static_cast<double>(layer_params) * p + 2.0 * static_cast<double>(output_params) +
           2.0 * static_cast<double>(q_rows) * static_cast<double>(layers) * p * (p + 1.0);
  }
};

inline ExpectedWork expected_work(const std::filesystem::path& model) {
  ExpectedWork work;
  auto source = checkpoint::GgufCheckpointSource::open(model);
  EXPECT_TRUE(source.has_value());
  if (!source) return work;
  const bool tied = source->catalog().find("output.weight") == nullptr;
  for (const auto& t : source->catalog().entries()) {
    std::uint64_t elements = 1;
    for (auto d : t.shape)
      elements *= d;
    work.tensor_bytes += t.byte_length;
    work.params += elements;
    if (t.shape.size() != 2) continue;
    if (t.name == "token_embd.weight" && !tied) continue;
    work.matrix_bytes += t.byte_length;
    if (t.name.rfind("blk.", 0) == 0) {
      work.layer_params += elements;
    } else {
      work.output_params = elements;
    }
    if (t.name.find(".attn_q.weight") != std::string::npos) {
      ++work.layers;
      work.q_rows = t.shape[0];
    }
  }
  return work;
}

}  // namespace eredu::testing
