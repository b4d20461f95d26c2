#pragma once
// The token id type used by generation. It matches llama.cpp's `llama_token` (a signed 32-bit
// integer) so ids read from GGUF metadata and reference files need no conversion; a valid id is
// in [0, n_vocab).

#include <cstdint>

namespace eredu::generation {

using TokenId = std::int32_t;

}  // namespace eredu::generation
