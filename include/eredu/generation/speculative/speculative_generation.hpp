#pragma once
// SpeculativeGeneration<B, D>: one text generation request decoded speculatively, written once
// above the backends over the generic session (runtime::FamilySession: prefill, verify,
// truncate). It honours the request exactly as TextGeneration does (make_request_sequence: the
// same checks, stop strings, EOS, max tokens, context, UTF-8 streaming, cancellation) and
// returns the same result, plus how drafting went.
//
// One round, the transaction:
//   1. the drafter proposes up to k tokens after the committed history (k chosen by the
//      DraftLengthPolicy from the acceptance and costs measured so far, 0 meaning a plain
//      decoding step, and bounded by the remaining budget and context);
//   2. the target evaluates [last committed token, drafts...] in one verify pass: row i holds
//      the target's logits after the history and the first i drafts;
//   3. rows are judged in order: greedy accepts draft i when it is the target's arg-max
//      (the sampler's greedy choice, penalties included); sampling accepts it with
//      probability min(1, p/q), else draws from the residual (SpeculativeSampling). The first
//      refused draft is replaced by the target's token; when all are accepted the last row gives
//      a bonus token. Every committed token passes through the sequence (and its cancellation
//      poll) one at a time, so a finish mid-round publishes nothing after it;
//   4. the target's and the drafter's caches are rolled back to the committed position (the
//      last committed token stays unevaluated, as in plain decoding).
// Greedy output is therefore the target's plain greedy output, whatever the drafter proposes,
// as long as a verify row equals the one-token decode's logits bit for bit. On the CPU backend
// it does for every encoding up to 16 rows (15 drafts; tests/e2e/speculative); beyond that,
// float-decoded weights (F32, F16, BF16) take the tiled prompt kernel, which rounds differently,
// and a near tie may then resolve differently than in plain decoding.
//
// The CPU computes each pass synchronously, so a cancellation requested during a verification
// takes effect once it is done, before any of its tokens is published.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <exception>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "eredu/core/result.hpp"
#include "eredu/generation/cancellation.hpp"
#include "eredu/generation/generation_sequence.hpp"
#include "eredu/generation/sampler.hpp"
#include "eredu/generation/speculative/draft.hpp"
#include "eredu/generation/speculative/draft_length_policy.hpp"
#include "eredu/generation/speculative/speculative_sampling.hpp"
#include "eredu/generation/text_generation.hpp"
#include "eredu/runtime/model_runtime.hpp"

namespace eredu::generation::speculative {

struct SpeculativeOptions {
  static constexpr std::uint32_t kDefaultMaxDraft = 8;
  static constexpr std::uint32_t kMaxDraft = 256;
  std::uint32_t max_draft = kDefaultMaxDraft;  // k: drafts verified per round (1..kMaxDraft)
  // Choose each round's k (0..max_draft) from the measured acceptance and costs
  // (DraftLengthPolicy); false: always max_draft.
  bool adaptive = true;
};

struct SpeculativeStatistics {
  std::int64_t rounds = 0;        // verification passes
  std::int64_t drafted = 0;       // draft tokens verified
  std::int64_t accepted = 0;      // of those, committed as they were
  std::int64_t plain_rounds = 0;  // rounds that verified no draft (a plain decoding step)

  [[nodiscard]] double acceptance_rate() const noexcept {
    return drafted > 0 ? static_cast<double>(accepted) / static_cast<double>(drafted) : 0.0;
  }
};

struct SpeculativeResult {
  TextGenerationResult generation;
  SpeculativeStatistics statistics;
};

template <typename B, Drafter D>
class SpeculativeGeneration {
 public:
  using runtime_type = runtime::ModelRuntime<B>;

  // Validates the request (as TextGeneration::create) and the options; no compute is done.
  // `runtime` and `drafter` must outlive the generation.
  [[nodiscard]] static Result<SpeculativeGeneration> create(runtime_type& runtime, D& drafter,
                                                            TextGenerationRequest request,
                                                            SpeculativeOptions options = {}) {
    if (options.max_draft == 0 || options.max_draft > SpeculativeOptions::kMaxDraft) {
      return fail(Error(ErrorCode::kInvalidArgument,
                        "draft length " + std::to_string(options.max_draft) + " is outside 1.." +
                            std::to_string(SpeculativeOptions::kMaxDraft))
                      .with_subject("max_draft"));
    }
    if (request.cached_prefix != 0) {
      return fail(Error(ErrorCode::kUnsupported,
                        "speculative decoding starts a new sequence; cached_prefix must be 0")
                      .with_subject("cached_prefix"));
    }
    EREDU_TRY(GenerationSequence sequence, make_request_sequence(request, B::text_limits(runtime)));
    return SpeculativeGeneration(runtime, drafter, std::move(request), options,
                                 std::move(sequence));
  }

  // Runs the request to its finish. Call once.
  template <typename PieceOf, typename OnText>
  [[nodiscard]] Result<SpeculativeResult> run(const CancellationToken& cancel, PieceOf&& piece_of,
                                              OnText&& on_text) {
    if (ran_) return fail(ErrorCode::kInvalidArgument, "a SpeculativeGeneration runs only once");
    ran_ = true;
    try {
      return run_unguarded(cancel, piece_of, on_text);
    } catch (const std::exception& e) {
      return fail(ErrorCode::kInternal,
                  std::string("speculative generation callback threw: ") + e.what());
    } catch (...) {
      return fail(ErrorCode::kInternal,
                  "speculative generation callback threw a non-standard exception");
    }
  }

 private:
  using clock = std::chrono::steady_clock;

  SpeculativeGeneration(runtime_type& runtime, D& drafter, TextGenerationRequest request,
                        SpeculativeOptions options, GenerationSequence sequence)
      : runtime_(&runtime),
        drafter_(&drafter),
        request_(std::move(request)),
        options_(options),
        sequence_(std::move(sequence)),
        lengths_(options.max_draft, options.adaptive) {}

  template <typename OnText>
  static void emit(TextGenerationResult& result, OnText& on_text, const std::string& text) {
    if (text.empty()) return;
    result.text += text;
    on_text(std::string_view(text));
  }

  // Publishes `token` (poll first: a cancellation stops before it). True when the sequence
  // finished, with or without the token.
  template <typename PieceOf, typename OnText>
  Result<bool> publish(TokenId token, const CancellationToken& cancel, TextGenerationResult& result,
                       PieceOf& piece_of, OnText& on_text) {
    EREDU_TRY(StepOutput before, sequence_.poll(cancel));
    emit(result, on_text, before.text);
    if (before.finished()) return true;
    EREDU_TRY(const std::string piece, piece_of(token));
    EREDU_TRY(StepOutput after, sequence_.commit(token, piece));
    result.tokens.push_back(token);
    history_.push_back(token);
    emit(result, on_text, after.text);
    return after.finished();
  }

  // How many drafts this round may verify: every committed token must fit the budget and the
  // cache (the round commits at most drafts + 1 tokens; the verify pass needs drafts + 1
  // positions after the committed ones).
  std::uint32_t draft_room() const {
    std::int64_t room = options_.max_draft;
    const auto& session = runtime_->session();
    room = std::min<std::int64_t>(
        room, static_cast<std::int64_t>(session.max_positions()) - session.checkpoint() - 1);
    const std::int64_t budget = sequence_.options().max_tokens;
    if (budget >= 0) room = std::min(room, budget - sequence_.generated_tokens() - 1);
    return static_cast<std::uint32_t>(std::max<std::int64_t>(room, 0));
  }

  // The target's choice at one row: greedy, or a draw from p (the bonus token).
  Result<TokenId> target_choice(std::span<const float> row) {
    if (request_.sampling.is_greedy()) return sampler_->sample(row);
    EREDU_TRY_VOID(sampler_->distribution(row, p_));
    return spec_.draw(p_);
  }

  // The committed token at row i for draft `d` with draft distribution `q` (empty: one-hot).
  Result<Verdict> judge(std::span<const float> row, TokenId d, std::span<const float> q) {
    if (request_.sampling.is_greedy()) {
      EREDU_TRY(const TokenId y, sampler_->sample(row));
      return Verdict{y == d, y};
    }
    EREDU_TRY_VOID(sampler_->distribution(row, p_));
    return spec_.judge(p_, q, d);
  }

  template <typename PieceOf, typename OnText>
  Result<SpeculativeResult> run_unguarded(const CancellationToken& cancel, PieceOf& piece_of,
                                          OnText& on_text) {
    SpeculativeResult out;
    TextGenerationResult& result = out.generation;
    SpeculativeStatistics& stats = out.statistics;
    result.prompt_tokens = static_cast<std::int64_t>(request_.prompt.size());
    auto& session = runtime_->session_mut();
    const B& backend = runtime_->backend();
    const std::uint32_t n_vocab = session.n_vocab();

    EREDU_TRY(Sampler sampler,
              Sampler::create(request_.sampling, static_cast<std::int32_t>(n_vocab)));
    sampler_.emplace(std::move(sampler));
    // The penalty window takes the prompt, as HostSamplingState::begin_sequence does.
    for (const TokenId id : request_.prompt)
      EREDU_TRY_VOID(sampler_->accept(id));
    try {
      p_.resize(n_vocab);
      history_.assign(request_.prompt.begin(), request_.prompt.end());
    } catch (const std::bad_alloc&) {
      return fail(ErrorCode::kCapacityExhausted, "speculative generation: cannot allocate");
    }

    // The prompt: prefill and the first token, as plain generation.
    {
      EREDU_TRY(StepOutput before, sequence_.poll(cancel));
      emit(result, on_text, before.text);
      if (before.finished()) return finish(std::move(out));
      const auto started = clock::now();
      EREDU_TRY_VOID(session.truncate(0));
      EREDU_TRY_VOID(drafter_->rollback(0));
      std::vector<std::uint32_t> ids(request_.prompt.begin(), request_.prompt.end());
      EREDU_TRY(auto submission, session.prefill(backend, std::move(ids)));
      EREDU_TRY(std::vector<float> logits, session.observe_output(backend, submission.output));
      if constexpr (PreparesPrompt<D>) {
        EREDU_TRY_VOID(drafter_->prepare(std::span<const TokenId>(request_.prompt)));
      }
      EREDU_TRY(const TokenId first, target_choice(logits));
      EREDU_TRY_VOID(sampler_->accept(first));
      result.timings.prompt_seconds = seconds_since(started);
      EREDU_TRY(const bool finished, publish(first, cancel, result, piece_of, on_text));
      if (finished) return finish(std::move(out));
    }

    while (true) {
      EREDU_TRY(StepOutput before, sequence_.poll(cancel));
      emit(result, on_text, before.text);
      if (before.finished()) break;
      const auto started = clock::now();
      const std::uint32_t room = std::min(draft_room(), lengths_.next());
      Draft draft;
      if (room > 0) {
        const auto drafting = clock::now();
        EREDU_TRY(Draft proposed, drafter_->propose(std::span<const TokenId>(history_), room));
        draft = std::move(proposed);
        if (draft.tokens.size() > room) draft.tokens.resize(room);
        lengths_.record_draft(static_cast<std::uint32_t>(draft.tokens.size()),
                              seconds_since(drafting));
      }
      const bool has_q = !draft.probabilities.empty();
      if (has_q && draft.probabilities.size() < draft.tokens.size()) {
        return fail(ErrorCode::kInternal, "the drafter gave fewer distributions than tokens");
      }
      std::vector<std::uint32_t> input{static_cast<std::uint32_t>(history_.back())};
      for (const TokenId t : draft.tokens) {
        if (t < 0 || static_cast<std::uint32_t>(t) >= n_vocab) {
          return fail(Error(ErrorCode::kInvalidArgument,
                            "the drafter proposed token " + std::to_string(t) +
                                " outside the target's vocabulary of " + std::to_string(n_vocab))
                          .with_subject("draft"));
        }
        input.push_back(static_cast<std::uint32_t>(t));
      }
      const std::uint32_t base = session.checkpoint();
      const auto verifying = clock::now();
      EREDU_TRY(auto submission, session.verify(backend, std::span<const std::uint32_t>(input)));
      EREDU_TRY(const std::vector<float> rows, session.observe_output(backend, submission.output));
      if (rows.size() != input.size() * n_vocab) {
        return fail(ErrorCode::kInternal, "the verify pass returned " +
                                              std::to_string(rows.size()) + " logits for " +
                                              std::to_string(input.size()) + " rows");
      }
      const double verify_seconds = seconds_since(verifying);
      ++stats.rounds;
      stats.drafted += static_cast<std::int64_t>(draft.tokens.size());
      if (draft.tokens.empty()) ++stats.plain_rounds;
      const std::int64_t accepted_before = stats.accepted;

      bool finished = false;
      std::uint32_t evaluated_kept = 1;  // the last committed token's row is kept
      for (std::size_t i = 0; i <= draft.tokens.size() && !finished; ++i) {
        const std::span<const float> row(rows.data() + i * n_vocab, n_vocab);
        Verdict verdict;
        if (i < draft.tokens.size()) {
          const std::span<const float> q =
              has_q ? std::span<const float>(draft.probabilities[i]) : std::span<const float>();
          EREDU_TRY(Verdict v, judge(row, draft.tokens[i], q));
          verdict = v;
        } else {
          EREDU_TRY(const TokenId bonus, target_choice(row));
          verdict = Verdict{false, bonus};
        }
        EREDU_TRY_VOID(sampler_->accept(verdict.token));
        EREDU_TRY(const bool done, publish(verdict.token, cancel, result, piece_of, on_text));
        finished = done;
        if (!verdict.accepted) break;
        ++stats.accepted;
        ++evaluated_kept;  // the accepted draft's keys/values are the committed token's
      }
      lengths_.record_verify(
          static_cast<std::uint32_t>(input.size()), static_cast<std::uint32_t>(draft.tokens.size()),
          static_cast<std::uint32_t>(stats.accepted - accepted_before), verify_seconds);
      // Roll both caches back to the committed position: the history minus its last token.
      const auto committed = static_cast<std::uint32_t>(history_.size() - 1);
      const std::uint32_t keep = std::min(committed, base + evaluated_kept);
      EREDU_TRY_VOID(session.truncate(keep));
      EREDU_TRY_VOID(drafter_->rollback(keep));
      result.timings.generation_seconds += seconds_since(started);
      if (finished) break;
    }
    return finish(std::move(out));
  }

  Result<SpeculativeResult> finish(SpeculativeResult out) {
    out.generation.finish_reason = *sequence_.finish_reason();
    out.generation.timings.decoded_tokens =
        std::max<std::int64_t>(0, static_cast<std::int64_t>(out.generation.tokens.size()) - 1);
    return out;
  }

  static double seconds_since(clock::time_point started) {
    return std::chrono::duration<double>(clock::now() - started).count();
  }

  runtime_type* runtime_;
  D* drafter_;
  TextGenerationRequest request_;
  SpeculativeOptions options_;
  GenerationSequence sequence_;
  std::optional<Sampler> sampler_;
  SpeculativeSampling spec_{request_.sampling.seed ^ 0x5BEC0ULL};
  std::vector<float> p_;          // the target's distribution at one row
  std::vector<TokenId> history_;  // prompt and committed tokens
  DraftLengthPolicy lengths_;
  bool ran_ = false;
};

}  // namespace eredu::generation::speculative
