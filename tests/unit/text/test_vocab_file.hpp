#pragma once
// Test-only: reads the tokenizer.ggml.* metadata of a GGUF file into a SentencePieceVocabulary,
// independently of the library's GGUF reader, so the tokenizer is checked against llama.cpp's
// vectors on its own. Trusted input only (the shared test files); no hardening.

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "eredu/text/sentencepiece_tokenizer.hpp"

namespace eredu::testing {

class TestGgufVocabReader {
 public:
  static std::optional<text::SentencePieceVocabulary> read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return std::nullopt;
    TestGgufVocabReader r{std::string(std::istreambuf_iterator<char>(in), {})};
    if (r.bytes_.substr(0, 4) != "GGUF") return std::nullopt;
    r.pos_ = 4;
    r.scalar<std::uint32_t>();  // version
    r.scalar<std::uint64_t>();  // tensor count
    const auto n_kv = r.scalar<std::uint64_t>();
    text::SentencePieceVocabulary vocab;
    // llama.cpp's defaults for tokenizer.ggml.model == "llama".
    vocab.special.bos = 1;
    vocab.special.eos = 2;
    vocab.special.unk = 0;
    for (std::uint64_t k = 0; k < n_kv; ++k) {
      const std::string key = r.string();
      const auto type = r.scalar<std::uint32_t>();
      if (key == "tokenizer.ggml.tokens") {
        vocab.tokens = r.array<std::string>(type, 8);
      } else if (key == "tokenizer.ggml.scores") {
        vocab.scores = r.array<float>(type, 6);
      } else if (key == "tokenizer.ggml.token_type") {
        vocab.token_types = r.array<std::int32_t>(type, 5);
      } else if (key == "tokenizer.ggml.bos_token_id") {
        vocab.special.bos = r.id(type);
      } else if (key == "tokenizer.ggml.eos_token_id") {
        vocab.special.eos = r.id(type);
      } else if (key == "tokenizer.ggml.unknown_token_id") {
        vocab.special.unk = r.id(type);
      } else if (key == "tokenizer.ggml.padding_token_id") {
        vocab.special.pad = r.id(type);
      } else if (key == "tokenizer.ggml.add_bos_token" && type == 7) {
        vocab.add_bos = r.scalar<std::uint8_t>() != 0;
      } else if (key == "tokenizer.ggml.add_eos_token" && type == 7) {
        vocab.add_eos = r.scalar<std::uint8_t>() != 0;
      } else if (key == "tokenizer.ggml.add_space_prefix" && type == 7) {
        vocab.add_space_prefix = r.scalar<std::uint8_t>() != 0;
      } else {
        r.skip(type);
      }
    }
    return vocab;
  }

 private:
  explicit TestGgufVocabReader(std::string bytes) : bytes_(std::move(bytes)) {}

  template <typename T>
  T scalar() {
    if (pos_ + sizeof(T) > bytes_.size()) throw std::runtime_error("truncated test GGUF");
    T v;
    std::memcpy(&v, bytes_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  std::string string() {
    const auto n = scalar<std::uint64_t>();
    if (pos_ + n > bytes_.size()) throw std::runtime_error("truncated test GGUF");
    std::string s = bytes_.substr(pos_, n);
    pos_ += n;
    return s;
  }
  std::optional<text::TokenId> id(std::uint32_t type) {
    if (type != 4) throw std::runtime_error("test GGUF: special id is not u32");
    const auto v = scalar<std::uint32_t>();
    if (v == 0xFFFFFFFFu) return std::nullopt;
    return static_cast<text::TokenId>(v);
  }
  template <typename T>
  std::vector<T> array(std::uint32_t type, std::uint32_t element_type) {
    if (type != 9 || scalar<std::uint32_t>() != element_type) {
      throw std::runtime_error("test GGUF: unexpected array type");
    }
    const auto n = scalar<std::uint64_t>();
    std::vector<T> out;
    for (std::uint64_t i = 0; i < n; ++i) {
      if constexpr (std::is_same_v<T, std::string>) {
        out.push_back(string());
      } else {
        out.push_back(scalar<T>());
      }
    }
    return out;
  }
  void skip(std::uint32_t type) {
    static constexpr std::size_t kSizes[13] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
    if (type >= 13) throw std::runtime_error("test GGUF: bad type");
    if (type == 8) {
      string();
    } else if (type == 9) {
      const auto element_type = scalar<std::uint32_t>();
      const auto n = scalar<std::uint64_t>();
      for (std::uint64_t i = 0; i < n; ++i)
        skip(element_type);
    } else {
      pos_ += kSizes[type];
    }
  }

  std::string bytes_;
  std::size_t pos_ = 0;
};

}  // namespace eredu::testing
