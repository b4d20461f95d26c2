#pragma once
// Reading a family's hyper-parameters from GGUF metadata, written once for every family. Each
// reader fails with an Error whose subject is the offending key and whose message says what was
// expected (reliability.md G44-G47): a missing required key, a value of another type, a value
// outside its bounds.

#include <cstdint>
#include <string>
#include <string_view>

#include "eredu/core/error.hpp"
#include "eredu/core/result.hpp"

namespace eredu::checkpoint {
class GgufContents;
}

namespace eredu::model {

// Upper bounds far above any real model: a value beyond one is treated as corrupt metadata, and
// they keep every product of hyper-parameters well inside 64 bits.
inline constexpr std::uint64_t kMaxLayers = 4096;
inline constexpr std::uint64_t kMaxEmbedding = 1u << 20;
inline constexpr std::uint64_t kMaxFeedForward = 1u << 22;
inline constexpr std::uint64_t kMaxHeads = 4096;
inline constexpr std::uint64_t kMaxContext = 1u << 24;
// The KV positions a session gets when nobody asked for a context: the model's training context,
// at most this (llama.cpp's default too). Llama 3.2 is trained for 131072 positions: a full cache
// of those is gigabytes nobody asked for.
inline constexpr std::uint32_t kDefaultContextLength = 4096;
inline constexpr std::uint64_t kMaxVocab = 1u << 24;

// kInvalidModel "hyper-parameter '<key>': <message>" with subject = key.
[[nodiscard]] Error hyperparameter_error(const std::string& key, std::string message);

// `general.architecture` as a string (kUnsupported when missing, kInvalidModel when mistyped).
[[nodiscard]] Result<std::string> read_architecture(const checkpoint::GgufContents& gguf);

// A required unsigned integer in [min, max].
[[nodiscard]] Result<std::uint32_t> required_u32(const checkpoint::GgufContents& gguf,
                                                 const std::string& key, std::uint64_t min,
                                                 std::uint64_t max);
// The same, `fallback` when the key is absent.
[[nodiscard]] Result<std::uint32_t> optional_u32(const checkpoint::GgufContents& gguf,
                                                 const std::string& key, std::uint64_t min,
                                                 std::uint64_t max, std::uint32_t fallback);
// A float that must be finite and positive; `fallback` when absent.
[[nodiscard]] Result<float> optional_positive_float(const checkpoint::GgufContents& gguf,
                                                    const std::string& key, float fallback);
// A string; `fallback` when absent.
[[nodiscard]] Result<std::string> optional_string(const checkpoint::GgufContents& gguf,
                                                  const std::string& key,
                                                  std::string_view fallback);

}  // namespace eredu::model
