#pragma once
// NgramDrafter: prompt-lookup drafting, which needs no second model. The last n tokens of the
// history (n = the configured order, then shorter down to 1) are looked up in the history
// itself; at their most recent earlier occurrence, the tokens that followed are proposed.
// Text that repeats its context (code edits, summaries quoting the input, lists) is drafted
// well; elsewhere it proposes nothing and decoding runs as plain decoding, one token a round.
//
// Deterministic and stateless between rounds (rollback does nothing).

#include <cstdint>
#include <span>

#include "eredu/core/result.hpp"
#include "eredu/generation/speculative/draft.hpp"
#include "eredu/generation/token.hpp"

namespace eredu::generation::speculative {

class NgramDrafter {
 public:
  static constexpr std::uint32_t kDefaultOrder = 3;
  static constexpr std::uint32_t kMaxOrder = 64;

  // kInvalidArgument (subject "order") unless 1 <= order <= kMaxOrder.
  [[nodiscard]] static Result<NgramDrafter> create(std::uint32_t order = kDefaultOrder);

  [[nodiscard]] Result<Draft> propose(std::span<const TokenId> history, std::uint32_t k) const;
  [[nodiscard]] Result<void> rollback(std::uint32_t /*committed*/) const { return ok(); }

  [[nodiscard]] std::uint32_t order() const noexcept { return order_; }

 private:
  explicit NgramDrafter(std::uint32_t order) : order_(order) {}
  std::uint32_t order_;
};

static_assert(Drafter<NgramDrafter>);

}  // namespace eredu::generation::speculative
