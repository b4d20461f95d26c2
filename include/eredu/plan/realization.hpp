#pragma once
// What an ExecutionPlanBackendFactory realizes a plan into: the target backend with its load
// options, and the drafting mode (with, for external drafting, the assistant artifact it needs).

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "eredu/core/planning_fwd.hpp"
#include "eredu/core/result.hpp"
#include "eredu/plan/automatic_planning.hpp"
#include "eredu/plan/execution_plan.hpp"

namespace eredu::plan {

// The backend a factory built for a plan, and the opaque load policy it chose.
template <typename B>
struct ExecutionPlanTarget {
  B backend;
  typename B::load_options load_options;
};

// A 32-byte digest of a tokenizer's vocabulary.
using VocabularyFingerprint = std::array<std::uint8_t, 32>;

// Where two vocabularies first differ (text::prove_tokenizer_compatibility finds it): the token
// id and the entry each side stores there ("(none)" past the end of the shorter one).
struct VocabularyDifference {
  std::uint64_t id = 0;
  std::string target;
  std::string assistant;
};

// Proof that an assistant model shares the target's vocabulary; only `prove` makes one, so a
// factory holding one never decides compatibility itself.
class TokenizerCompatibilityProof {
 public:
  // Fails with kInvalidModel when the fingerprints differ; the message names `difference` when
  // the caller located it.
  [[nodiscard]] static Result<TokenizerCompatibilityProof> prove(
      const VocabularyFingerprint& target, const VocabularyFingerprint& assistant,
      const std::optional<VocabularyDifference>& difference = std::nullopt) {
    if (target != assistant) {
      std::string message = "the draft model's vocabulary differs from the target's";
      if (difference) {
        message += " at token " + std::to_string(difference->id) + ": the target has '" +
                   difference->target + "', the draft model '" + difference->assistant + "'";
      }
      return fail(Error(ErrorCode::kInvalidModel, std::move(message))
                      .with_subject("tokenizer fingerprint"));
    }
    return TokenizerCompatibilityProof(target);
  }
  [[nodiscard]] const VocabularyFingerprint& fingerprint() const noexcept { return fingerprint_; }

 private:
  explicit TokenizerCompatibilityProof(const VocabularyFingerprint& fingerprint)
      : fingerprint_(fingerprint) {}
  VocabularyFingerprint fingerprint_;
};

// What the portable facade assembles for external drafting: the architecture-owned preparation
// of the assistant and the proof that it tokenizes like the target.
template <typename P>
struct ExternalDraftArtifact {
  P preparation;
  TokenizerCompatibilityProof tokenizer;
};

// The realized drafting mode: disabled, n-gram (prompt lookup over the committed tokens: no model,
// so nothing of the backend's), or an external drafter the backend prepared.
template <typename D>
class RealizedDrafting {
 public:
  [[nodiscard]] static RealizedDrafting disabled() {
    return RealizedDrafting(DraftingPlan::Kind::kDisabled, std::nullopt, 0);
  }
  [[nodiscard]] static RealizedDrafting ngram(std::uint32_t n) {
    return RealizedDrafting(DraftingPlan::Kind::kNgram, std::nullopt, n);
  }
  [[nodiscard]] static RealizedDrafting external(D drafter) {
    return RealizedDrafting(DraftingPlan::Kind::kExternal, std::optional<D>(std::move(drafter)), 0);
  }

  [[nodiscard]] DraftingPlan::Kind kind() const noexcept { return kind_; }
  // The n-gram size of n-gram drafting; 0 otherwise.
  [[nodiscard]] std::uint32_t ngram_size() const noexcept { return ngram_; }
  // The external drafter, or nullptr unless drafting is external.
  [[nodiscard]] const D* drafter() const noexcept { return drafter_ ? &*drafter_ : nullptr; }
  [[nodiscard]] D* drafter() noexcept { return drafter_ ? &*drafter_ : nullptr; }

 private:
  RealizedDrafting(DraftingPlan::Kind kind, std::optional<D> drafter, std::uint32_t ngram)
      : kind_(kind), drafter_(std::move(drafter)), ngram_(ngram) {}
  DraftingPlan::Kind kind_;
  std::optional<D> drafter_;
  std::uint32_t ngram_ = 0;
};

}  // namespace eredu::plan
