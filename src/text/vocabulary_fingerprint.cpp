#include "eredu/text/vocabulary_fingerprint.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace eredu::text {
namespace {

class FingerprintHasher {
 public:
  void bytes(std::string_view data) {
    for (const char c : data)
      byte(static_cast<std::uint8_t>(c));
  }
  void word(std::uint64_t value) {
    for (int i = 0; i < 8; ++i)
      byte(static_cast<std::uint8_t>(value >> (8 * i)));
  }
  [[nodiscard]] plan::VocabularyFingerprint digest() const {
    plan::VocabularyFingerprint out{};
    for (std::size_t lane = 0; lane < kLanes; ++lane) {
      for (std::size_t i = 0; i < 8; ++i)
        out[lane * 8 + i] = static_cast<std::uint8_t>(state_[lane] >> (8 * i));
    }
    return out;
  }

 private:
  static constexpr std::size_t kLanes = 4;
  static constexpr std::uint64_t kPrime = 0x100000001b3ULL;
  void byte(std::uint8_t b) {
    // Each lane sees the byte mixed with its own index, so the lanes stay independent.
    for (std::size_t lane = 0; lane < kLanes; ++lane) {
      state_[lane] ^= static_cast<std::uint64_t>(b ^ static_cast<std::uint8_t>(lane * 0x5Bu));
      state_[lane] *= kPrime;
    }
  }
  std::array<std::uint64_t, kLanes> state_{0xcbf29ce484222325ULL, 0x84222325cbf29ce4ULL,
                                           0x9e3779b97f4a7c15ULL, 0xc2b2ae3d27d4eb4fULL};
};

// The entry of `id` as a refusal shows it: its text, with its type when not normal.
Result<std::string> describe(const Tokenizer& tokenizer, TokenId id) {
  EREDU_TRY(const std::string_view entry, tokenizer.token_text(id));
  EREDU_TRY(const TokenType type, tokenizer.token_type(id));
  std::string out(entry);
  if (type != TokenType::kNormal) out += " (" + std::string(to_string(type)) + ")";
  return out;
}

}  // namespace

Result<plan::VocabularyFingerprint> vocabulary_fingerprint(const Tokenizer& tokenizer) {
  FingerprintHasher hasher;
  const std::size_t size = tokenizer.vocab_size();
  hasher.word(size);
  for (std::size_t i = 0; i < size; ++i) {
    const auto id = static_cast<TokenId>(i);
    EREDU_TRY(const std::string_view entry, tokenizer.token_text(id));
    EREDU_TRY(const TokenType type, tokenizer.token_type(id));
    hasher.word(entry.size());
    hasher.bytes(entry);
    hasher.word(static_cast<std::uint64_t>(static_cast<std::int64_t>(type)));
  }
  return hasher.digest();
}

Result<plan::TokenizerCompatibilityProof> prove_tokenizer_compatibility(const Tokenizer& target,
                                                                        const Tokenizer& draft) {
  EREDU_TRY(const plan::VocabularyFingerprint target_print, vocabulary_fingerprint(target));
  EREDU_TRY(const plan::VocabularyFingerprint draft_print, vocabulary_fingerprint(draft));
  std::optional<plan::VocabularyDifference> difference;
  if (target_print != draft_print) {
    const std::size_t n = std::max(target.vocab_size(), draft.vocab_size());
    for (std::size_t i = 0; i < n && !difference; ++i) {
      const auto id = static_cast<TokenId>(i);
      std::string a = "(none)";
      std::string b = "(none)";
      if (i < target.vocab_size()) {
        EREDU_TRY(std::string entry, describe(target, id));
        a = std::move(entry);
      }
      if (i < draft.vocab_size()) {
        EREDU_TRY(std::string entry, describe(draft, id));
        b = std::move(entry);
      }
      if (a != b) difference = plan::VocabularyDifference{i, std::move(a), std::move(b)};
    }
  }
  return plan::TokenizerCompatibilityProof::prove(target_print, draft_print, difference);
}

}  // namespace eredu::text
