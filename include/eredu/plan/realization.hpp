#pragma once
// What an ExecutionPlanBackendFactory realizes a plan into: the target backend with its load
// options, and the drafting mode (with, for external drafting, the assistant artifact it needs).

#include <array>
#include <cstdint>
#include <optional>
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

// Proof that an assistant model shares the target's vocabulary; only `prove` makes one, so a
// factory holding one never decides compatibility itself.
class TokenizerCompatibilityProof {
 public:
  // Fails with kInvalidModel when the fingerprints differ.
  [[nodiscard]] static Result<TokenizerCompatibilityProof> prove(
      const VocabularyFingerprint& target, const VocabularyFingerprint& assistant) {
    if (target != assistant) {
      return fail(
          Error(ErrorCode::kInvalidModel, "the draft model's vocabulary differs from the target's")
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

// The realized drafting mode: disabled, or an external drafter the backend prepared.
template <typename D>
class RealizedDrafting {
 public:
  [[nodiscard]] static RealizedDrafting disabled() { return RealizedDrafting(std::nullopt); }
  [[nodiscard]] static RealizedDrafting external(D drafter) {
    return RealizedDrafting(std::optional<D>(std::move(drafter)));
  }

  [[nodiscard]] DraftingPlan::Kind kind() const noexcept {
    return drafter_ ? DraftingPlan::Kind::kExternal : DraftingPlan::Kind::kDisabled;
  }
  // The external drafter, or nullptr when drafting is disabled.
  [[nodiscard]] const D* drafter() const noexcept { return drafter_ ? &*drafter_ : nullptr; }
  [[nodiscard]] D* drafter() noexcept { return drafter_ ? &*drafter_ : nullptr; }

 private:
  explicit RealizedDrafting(std::optional<D> drafter) : drafter_(std::move(drafter)) {}
  std::optional<D> drafter_;
};

}  // namespace eredu::plan
