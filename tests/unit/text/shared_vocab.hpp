#pragma once
// Test helper: the tokenizer of a GGUF file from ../shared (a vocabulary or a model), read with
// the library's GGUF reader and make_tokenizer_from_gguf.

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>

#include "eredu/checkpoint/gguf.hpp"
#include "eredu/text/gguf_tokenizer.hpp"

namespace eredu::testing {

// nullptr (with a test failure recorded) when the file cannot be read or the vocabulary is bad.
inline std::shared_ptr<const text::Tokenizer> load_shared_tokenizer(
    const std::filesystem::path& gguf) {
  const auto file = checkpoint::GgufFile::open(gguf);
  if (!file) {
    ADD_FAILURE() << file.error().what();
    return nullptr;
  }
  auto tokenizer = text::make_tokenizer_from_gguf(file->contents());
  if (!tokenizer) {
    ADD_FAILURE() << tokenizer.error().what();
    return nullptr;
  }
  return *tokenizer;
}

}  // namespace eredu::testing
