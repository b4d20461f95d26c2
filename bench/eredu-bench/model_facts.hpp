#pragma once
// What eredu-bench reports about a model, read from the checkpoint's header-only tensor catalog
// (no payload bytes): size and parameter count as llama-bench counts them, and the quantities the
// throughput columns are derived from.

#include <cstdint>
#include <string>

#include "eredu/checkpoint/tensor_catalog.hpp"
#include "eredu/core/result.hpp"

namespace eredu::bench {

struct ModelFacts {
  std::string file;  // the path as given
  std::string name;  // the file name without its directory and .gguf extension
  std::string type;  // "<architecture> <encoding of most matrix bytes>", e.g. "llama Q4_0"
  std::uint64_t size_bytes = 0;  // every tensor's payload bytes (llama-bench's "size")
  std::uint64_t params = 0;      // every tensor's element count (llama-bench's "params")
  std::uint32_t n_vocab = 0;     // rows of the token embedding table
  std::uint32_t n_layers = 0;
  std::uint64_t q_dim = 0;  // query width per layer (heads x head size), for attention flops

  // Bytes of every matrix a decoded token reads: all 2-D weights, the output matrix included,
  // the token embedding table excluded (a token gathers one row of it). When the model has no
  // separate output matrix, the embedding table is the output matrix and counts.
  std::uint64_t matrix_bytes = 0;
  std::uint64_t matrix_params = 0;  // elements of those matrices
  std::uint64_t output_params = 0;  // elements of the output (logits) matrix

  // Floating-point operations of a prefill of `tokens` tokens into an empty sequence:
  //   2 x (matrix_params - output_params) x tokens        every layer's products, every token
  // + 2 x output_params                                    logits of the last token only
  // + 4 x q_dim x n_layers x tokens (tokens + 1) / 2       causal attention: Q.K and P.V, each
  //                                                        2 x q_dim flops per (query, key) pair
  [[nodiscard]] double prefill_flops(std::uint64_t tokens) const noexcept;
};

// Facts of a catalog; `architecture` names the family (GGUF general.architecture). Fails with
// kInvalidModel when the catalog has no token embedding table ("token_embd.weight").
[[nodiscard]] Result<ModelFacts> model_facts(const std::string& file,
                                             const std::string& architecture,
                                             const checkpoint::TensorCatalog& catalog);

}  // namespace eredu::bench
