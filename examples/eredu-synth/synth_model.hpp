#pragma once
// The synthetic model: which tensors, in which order and encoding, what metadata, and writing it
// all to a GGUF file tensor by tensor (memory stays at a few MiB whatever the model size).

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "eredu/core/dtype.hpp"
#include "eredu/core/result.hpp"
#include "synth_spec.hpp"

namespace eredu::synth {

struct PlannedTensor {
  std::string name;
  std::vector<std::uint64_t> shape;  // row-major, outermost first ({rows, row length} or {n})
  DType dtype = DType::kF32;
  bool is_norm = false;  // filled with 1.0 instead of N(0, 0.02)
  // Set when the requested encoding could not hold this tensor (row length not a whole number
  // of blocks) and it is stored as F16 instead.
  bool fell_back = false;
};

// The tensors in the order llama.cpp's converter writes a Llama model: token_embd, output_norm,
// output, then per block attn_norm, attn_q, attn_k, attn_v, attn_output, ffn_norm, ffn_gate,
// ffn_up, ffn_down. Norms are F32; matrices take `spec.encoding` (in a medium mixture, output and
// the attn_v / ffn_down of the layers uses_more_bits names take Q6_K), or F16 where their row
// length is not a multiple of its block size.
[[nodiscard]] std::vector<PlannedTensor> plan_tensors(const SynthSpec& spec);

struct WriteReport {
  std::uint64_t file_bytes = 0;
  std::uint64_t parameters = 0;
  std::vector<std::string> fallbacks;  // one message per tensor stored as F16 instead
};

// Writes the model to `path` (removed again on failure). `on_fallback` receives the message for
// each tensor that keeps F16 before any byte is written.
[[nodiscard]] Result<WriteReport> write_synthetic_model(
    const SynthSpec& spec, const std::filesystem::path& path,
    const std::function<void(std::string_view)>& on_fallback = {});

}  // namespace eredu::synth
