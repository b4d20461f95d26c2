#pragma once
// Which rows of a forward pass become logits: the last token's (generation: the next token is
// sampled from it alone) or every token's (speculative verification scores each drafted position
// in the same pass).

#include <cstdint>

namespace eredu::model {

enum class LogitRows : std::uint8_t {
  kLast,  // [1, n_vocab]: the last token's logits
  kAll,   // [n, n_vocab]: one row per input token, in input order
};

}  // namespace eredu::model
