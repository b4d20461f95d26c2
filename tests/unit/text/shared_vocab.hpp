#pragma once
// Test helper: the tokenizer of a GGUF file from ../shared (a vocabulary or a model).

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>

#include "eredu/text/sentencepiece_tokenizer.hpp"
#include "test_vocab_file.hpp"

namespace eredu::testing {

// nullptr (with a test failure recorded) when the file cannot be read or the vocabulary is bad.
inline std::shared_ptr<const text::Tokenizer> load_shared_tokenizer(
    const std::filesystem::path& gguf) {
  auto vocab = TestGgufVocabReader::read(gguf.string());
  if (!vocab) {
    ADD_FAILURE() << "cannot read " << gguf;
    return nullptr;
  }
  auto tokenizer = text::SentencePieceTokenizer::create(std::move(*vocab));
  if (!tokenizer) {
    ADD_FAILURE() << tokenizer.error().what();
    return nullptr;
  }
  return *tokenizer;
}

}  // namespace eredu::testing
