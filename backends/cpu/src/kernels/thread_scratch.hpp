#pragma once
// Internal: per-thread scratch for the matrix products (matmul.cpp, one_token_matmul.cpp,
// token_forms.cpp).
//
// A buffer grows to the largest size asked for and is then reused (no allocation per call once
// warm). One buffer per purpose: decode keeps its small one-row buffer cache-resident while the
// tiled path's larger buffers live elsewhere, and buffers that are live at the same time (a
// prompt's activations, codes and scales) never alias. The template is inline, so every unit that
// asks for a purpose gets the same buffer; only baseline units include this (see vec_ops.hpp).
#include <cstddef>
#include <vector>

namespace eredu::cpu::detail {

template <typename T, typename Purpose>
T* thread_scratch(std::size_t n) {
  thread_local std::vector<T> buffer;
  if (buffer.size() < n) buffer.resize(n);
  return buffer.data();
}

struct DecodedRow;      // one row decoded to floats (decode)
struct TileRows;        // decoded row blocks, quant_gemm's scratch (prompts)
struct RoundedAct;      // activations rounded to F16 precision (token_forms.hpp)
struct RoundedBf16Act;  // activations rounded to BF16 precision
struct HalfAct;         // activations stored as F16
struct Bf16Act;         // activations stored as BF16
struct PromptCodes;     // PromptActivations::codes
struct PromptScales;    // PromptActivations::d
struct PromptSums;      // PromptActivations::s
struct ActQ8;           // activations quantized to 8-bit blocks of 32
struct ActQ8K;          // activations quantized to q8_K
struct MatvecLayout;    // quant_matvec's activation layout
struct alignas(64) CacheLine {
  std::byte bytes[64];
};

}  // namespace eredu::cpu::detail
