#pragma once
// DraftLengthPolicy: how many drafts the next speculative round asks for, chosen from what the
// rounds so far measured, so that drafting never costs much more than it wins.
//
// A round with k drafts commits E(k) = 1 + a + a^2 + ... + a^k tokens on average (a: the chance
// that a draft is accepted, drafts accepted independently) and costs k * t_draft (the drafter's
// seconds per proposed token) plus t_verify(k + 1) (the target's pass over k + 1 rows, modelled
// as t0 + t1 * rows). The policy picks the k in 0..max_draft with the most committed tokens per
// second; k = 0 is plain decoding (a verify pass of one row). Where drafts are rarely accepted
// (a poorly matched draft model, a prompt the n-gram drafter cannot find) it settles on k = 0
// and probes with one draft after kProbeInterval plain rounds, so it notices when acceptance
// returns; each probe refused doubles the wait (up to kMaxProbeInterval), since a probe costs the
// drafter a catch-up over the rounds it skipped, and an accepted one resets it.
//
// The estimates decay (each update weighs kDecay of the past), so the choice follows a
// generation whose text moves between predictable and unpredictable stretches. Before anything
// is measured it asks for max_draft. With `adaptive` off it always asks for max_draft.
//
// Greedy output does not depend on k (every committed token is the target's own choice); under
// sampling any k fixed before a round's drafts are drawn keeps the target's distribution, but
// because k follows measured times, a seeded sampled run can differ from one run to the next.

#include <algorithm>
#include <cstdint>

namespace eredu::generation::speculative {

class DraftLengthPolicy {
 public:
  static constexpr double kDecay = 0.9;
  static constexpr std::uint32_t kProbeInterval = 16;
  static constexpr std::uint32_t kMaxProbeInterval = 256;

  DraftLengthPolicy(std::uint32_t max_draft, bool adaptive) noexcept
      : max_draft_(max_draft), adaptive_(adaptive) {}

  // The draft length for the next round (at most max_draft; the caller bounds it further by the
  // budget and the context).
  [[nodiscard]] std::uint32_t next() const noexcept {
    if (!adaptive_ || verify_weight_ <= 0.0) return max_draft_;
    const std::uint32_t best = best_length();
    if (best == 0 && rounds_since_draft_ + 1 >= probe_interval_) return std::min(1u, max_draft_);
    return best;
  }

  // A proposal of `proposed` tokens took `seconds` of the drafter's time.
  void record_draft(std::uint32_t proposed, double seconds) noexcept {
    if (proposed == 0) return;
    draft_seconds_ = kDecay * draft_seconds_ + seconds;
    draft_tokens_ = kDecay * draft_tokens_ + proposed;
  }

  // A verify pass over `rows` rows (drafts + 1) took `seconds`, and `accepted` of its `drafts`
  // drafts were committed.
  void record_verify(std::uint32_t rows, std::uint32_t drafts, std::uint32_t accepted,
                     double seconds) noexcept {
    if (drafts > 0) {
      if (rounds_since_draft_ + 1 >= probe_interval_) {  // this round was a probe
        probe_interval_ =
            accepted > 0 ? kProbeInterval : std::min(2 * probe_interval_, kMaxProbeInterval);
      }
      accepted_ = kDecay * accepted_ + accepted;
      drafted_ = kDecay * drafted_ + drafts;
      rounds_since_draft_ = 0;
    } else {
      ++rounds_since_draft_;
    }
    const double n = rows;
    verify_weight_ = kDecay * verify_weight_ + 1.0;
    sum_rows_ = kDecay * sum_rows_ + n;
    sum_rows2_ = kDecay * sum_rows2_ + n * n;
    sum_seconds_ = kDecay * sum_seconds_ + seconds;
    sum_rows_seconds_ = kDecay * sum_rows_seconds_ + n * seconds;
  }

  // The estimated chance that a draft is accepted (a Laplace estimate over the decayed counts,
  // optimistic before any draft was judged).
  [[nodiscard]] double acceptance() const noexcept {
    return (accepted_ + kPriorAccepted) / (drafted_ + kPriorDrafted);
  }

  // The modelled seconds of a verify pass over `rows` rows.
  [[nodiscard]] double verify_seconds(std::uint32_t rows) const noexcept {
    const double mean_rows = sum_rows_ / verify_weight_;
    const double mean_seconds = sum_seconds_ / verify_weight_;
    const double spread = sum_rows2_ / verify_weight_ - mean_rows * mean_rows;
    // One row count seen so far: assume each extra row costs a quarter of a one-row pass
    // (a verification re-reads no weights, so it is far below a pass per row).
    double per_row = mean_seconds / (mean_rows + 3.0);
    if (spread > 0.25) {
      per_row = (sum_rows_seconds_ / verify_weight_ - mean_rows * mean_seconds) / spread;
    }
    per_row = std::max(per_row, 0.0);
    const double fixed = std::max(mean_seconds - per_row * mean_rows, 0.0);
    return fixed + per_row * rows;
  }

 private:
  static constexpr double kPriorAccepted = 3.0;
  static constexpr double kPriorDrafted = 3.5;

  [[nodiscard]] std::uint32_t best_length() const noexcept {
    const double a = acceptance();
    const double t_draft = draft_tokens_ > 0.0 ? draft_seconds_ / draft_tokens_ : 0.0;
    std::uint32_t best = 0;
    double best_rate = 1.0 / std::max(verify_seconds(1), 1e-12);
    double expected = 1.0;  // E(k)
    double a_power = 1.0;
    for (std::uint32_t k = 1; k <= max_draft_; ++k) {
      a_power *= a;
      expected += a_power;
      const double cost = k * t_draft + verify_seconds(k + 1);
      const double rate = expected / std::max(cost, 1e-12);
      if (rate > best_rate) {
        best_rate = rate;
        best = k;
      }
    }
    return best;
  }

  std::uint32_t max_draft_;
  bool adaptive_;
  double accepted_ = 0.0, drafted_ = 0.0;
  double draft_seconds_ = 0.0, draft_tokens_ = 0.0;
  double verify_weight_ = 0.0, sum_rows_ = 0.0, sum_rows2_ = 0.0;
  double sum_seconds_ = 0.0, sum_rows_seconds_ = 0.0;
  std::uint32_t rounds_since_draft_ = 0;
  std::uint32_t probe_interval_ = kProbeInterval;
};

}  // namespace eredu::generation::speculative
