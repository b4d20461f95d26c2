#pragma once
// A small hand-made SentencePiece vocabulary for unit tests: <unk>, <s>, </s>, the 256 byte
// tokens <0x00>..<0xFF> (ids 3..258), then the entries a test adds.

#include <cstdio>
#include <string>

#include "eredu/text/sentencepiece_tokenizer.hpp"

namespace eredu::testing {

inline constexpr text::TokenId kFirstByteToken = 3;
inline constexpr text::TokenId kFirstFreeId = 259;

inline text::TokenId byte_token(unsigned char b) {
  return kFirstByteToken + b;
}

class TinyVocab {
 public:
  TinyVocab() {
    add("<unk>", 0.0F, text::TokenType::kUnknown);
    add("<s>", 0.0F, text::TokenType::kControl);
    add("</s>", 0.0F, text::TokenType::kControl);
    for (int b = 0; b < 256; ++b) {
      char name[8];
      std::snprintf(name, sizeof name, "<0x%02X>", b);
      add(name, 0.0F, text::TokenType::kByte);
    }
    vocab_.special.unk = 0;
    vocab_.special.bos = 1;
    vocab_.special.eos = 2;
    vocab_.add_bos = false;
    vocab_.add_space_prefix = false;
  }

  // Appends an entry and returns its id.
  text::TokenId add(const std::string& token, float score,
                    text::TokenType type = text::TokenType::kNormal) {
    vocab_.tokens.push_back(token);
    vocab_.scores.push_back(score);
    vocab_.token_types.push_back(static_cast<std::int32_t>(type));
    return static_cast<text::TokenId>(vocab_.tokens.size() - 1);
  }

  text::SentencePieceVocabulary& data() { return vocab_; }

  std::shared_ptr<const text::SentencePieceTokenizer> build() const {
    auto made = text::SentencePieceTokenizer::create(vocab_);
    if (!made) {
      ADD_FAILURE() << made.error().what();
      return nullptr;
    }
    return *made;
  }

 private:
  text::SentencePieceVocabulary vocab_;
};

}  // namespace eredu::testing
