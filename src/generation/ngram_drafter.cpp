#include "eredu/generation/speculative/ngram_drafter.hpp"

#include <algorithm>
#include <new>
#include <string>

namespace eredu::generation::speculative {

Result<NgramDrafter> NgramDrafter::create(std::uint32_t order) {
  if (order == 0 || order > kMaxOrder) {
    return fail(Error(ErrorCode::kInvalidArgument, "n-gram order " + std::to_string(order) +
                                                       " is outside 1.." +
                                                       std::to_string(kMaxOrder))
                    .with_subject("order"));
  }
  return NgramDrafter(order);
}

Result<Draft> NgramDrafter::propose(std::span<const TokenId> history, std::uint32_t k) const {
  Draft draft;
  const std::size_t size = history.size();
  if (k == 0 || size < 2) return draft;
  try {
    for (std::size_t n = std::min<std::size_t>(order_, size - 1); n >= 1; --n) {
      const auto suffix = history.subspan(size - n);
      // The most recent earlier occurrence: the match ends before the history's last token, so
      // at least one token follows it.
      for (std::size_t start = size - n; start-- > 0;) {
        if (!std::equal(suffix.begin(), suffix.end(), history.begin() + start)) continue;
        const std::size_t follow = start + n;
        const std::size_t count = std::min<std::size_t>(k, size - follow);
        draft.tokens.assign(history.begin() + follow, history.begin() + follow + count);
        return draft;
      }
    }
  } catch (const std::bad_alloc&) {
    return fail(ErrorCode::kCapacityExhausted, "n-gram drafter: cannot allocate the draft");
  }
  return draft;
}

}  // namespace eredu::generation::speculative
