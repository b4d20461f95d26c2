#pragma once
// A tokenizer's vocabulary fingerprint and the proof that a draft model's tokenizer is the
// target's, for speculative decoding (a draft token id must mean the same text on both sides).
//
// The fingerprint digests, in id order, every entry's stored text and type, plus the vocabulary
// size, into 32 bytes (four independent 64-bit FNV-1a lanes: a checksum against accidental
// mismatch, not a cryptographic hash). prove_tokenizer_compatibility compares the entries first,
// so that a refusal names the first differing token id and both entries.

#include "eredu/core/result.hpp"
#include "eredu/plan/realization.hpp"
#include "eredu/text/tokenizer.hpp"

namespace eredu::text {

[[nodiscard]] Result<plan::VocabularyFingerprint> vocabulary_fingerprint(
    const Tokenizer& tokenizer);

// The proof, or kInvalidModel (subject "tokenizer fingerprint") naming the first difference.
[[nodiscard]] Result<plan::TokenizerCompatibilityProof> prove_tokenizer_compatibility(
    const Tokenizer& target, const Tokenizer& draft);

}  // namespace eredu::text
