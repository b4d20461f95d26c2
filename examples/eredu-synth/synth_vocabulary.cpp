#include "synth_vocabulary.hpp"

#include <cstdio>
#include <string_view>

namespace eredu::synth {
namespace {

constexpr std::string_view kSpace = "\xE2\x96\x81";  // U+2581 LOWER ONE EIGHTH BLOCK
constexpr std::string_view kSingles =
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.,!?'\"-:;()";

// Appends pieces until `vocab` holds `size` tokens; each piece gets the next descending score.
class PieceSink {
 public:
  PieceSink(SynthVocabulary& vocab, std::uint32_t size) : vocab_(vocab), size_(size) {}
  [[nodiscard]] bool full() const { return vocab_.tokens.size() >= size_; }
  void add(std::string piece) {
    if (full()) return;
    vocab_.tokens.push_back(std::move(piece));
    vocab_.scores.push_back(-static_cast<float>(next_rank_++));
    vocab_.types.push_back(kTokenNormal);
  }

 private:
  SynthVocabulary& vocab_;
  std::uint32_t size_;
  std::uint32_t next_rank_ = 0;
};

// Every lower-case word of `length` letters in lexicographic order, each with `prefix` in front,
// stopping as soon as the sink is full.
void add_words(PieceSink& sink, std::string_view prefix, std::size_t length) {
  std::string word(length, 'a');
  while (!sink.full()) {
    sink.add(std::string(prefix) + word);
    // Odometer increment over a..z; done when it wraps around.
    std::size_t i = length;
    while (i > 0) {
      --i;
      if (word[i] != 'z') {
        ++word[i];
        break;
      }
      word[i] = 'a';
      if (i == 0) return;
    }
  }
}

}  // namespace

SynthVocabulary make_vocabulary(std::uint32_t size) {
  SynthVocabulary v;
  v.tokens.reserve(size);
  v.scores.reserve(size);
  v.types.reserve(size);
  const auto reserve = [&](std::string text, std::int32_t type) {
    v.tokens.push_back(std::move(text));
    v.scores.push_back(0.0f);
    v.types.push_back(type);
  };
  reserve("<unk>", kTokenUnknown);
  reserve("<s>", kTokenControl);
  reserve("</s>", kTokenControl);
  for (unsigned b = 0; b < 256; ++b) {
    char text[8];
    std::snprintf(text, sizeof text, "<0x%02X>", b);
    reserve(text, kTokenByte);
  }
  PieceSink sink(v, size);
  sink.add(std::string(kSpace));
  for (char c : kSingles)
    sink.add(std::string(1, c));
  // 26^L words per length: the loop ends long before `length` can grow large (49152 entries need
  // L = 4).
  for (std::size_t length = 1; !sink.full(); ++length) {
    add_words(sink, kSpace, length);
    add_words(sink, "", length + 1);
  }
  return v;
}

}  // namespace eredu::synth
