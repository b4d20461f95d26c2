// CpuBackend as a TextGenerationBackend: prefill / decode through the session, then sample the
// last position's logits on the host with generation::Sampler (created on the first prefill, when
// the vocabulary size is known).
#include <memory>
#include <optional>
#include <utility>

#include "eredu/backends/cpu/cpu_backend.hpp"
#include "eredu/generation/sampler.hpp"
#include "eredu/generation/sampling_config.hpp"
#include "eredu/runtime/model_runtime.hpp"

namespace eredu::cpu {

struct CpuSamplerState {
  generation::SamplingConfig config;
  std::optional<generation::Sampler> sampler;
};

CpuTextState::CpuTextState(std::unique_ptr<CpuSamplerState> state) : state_(std::move(state)) {}
CpuTextState::CpuTextState(CpuTextState&&) noexcept = default;
CpuTextState& CpuTextState::operator=(CpuTextState&&) noexcept = default;
CpuTextState::~CpuTextState() = default;

namespace {

using TokenSubmission = Submission<CpuTextToken, CpuReadyCompletion>;

Result<TokenSubmission> sample_last(CpuSamplerState& state, const CpuTensor& logits) {
  if (logits.rows == 0) return fail(ErrorCode::kInternal, "the forward pass returned no logits");
  EREDU_TRY(const generation::TokenId token, state.sampler->sample(logits.row(logits.rows - 1)));
  EREDU_TRY_VOID(state.sampler->accept(token));
  return TokenSubmission{CpuTextToken{static_cast<std::uint32_t>(token)}, CpuReadyCompletion{}};
}

}  // namespace

TextGenerationLimits CpuBackend::text_limits(const runtime::ModelRuntime<CpuBackend>& runtime) {
  return TextGenerationLimits{
      runtime.session().max_positions(), runtime.session().config().n_vocab, {}};
}

Result<CpuTextState> CpuBackend::start_text_generation(const CpuBackend& /*backend*/,
                                                       const generation::SamplingConfig& config) {
  EREDU_TRY_VOID(config.validate());
  auto state = std::make_unique<CpuSamplerState>();
  state->config = config;
  return CpuTextState(std::move(state));
}

Result<CpuTextPrompt> CpuBackend::prepare_text_prompt(const CpuBackend& /*backend*/,
                                                      std::span<const std::uint32_t> tokens) {
  if (tokens.empty()) {
    return fail(Error(ErrorCode::kInvalidArgument, "empty prompt").with_subject("prompt"));
  }
  return CpuTextPrompt{std::vector<std::uint32_t>(tokens.begin(), tokens.end())};
}

Result<TokenSubmission> CpuBackend::submit_text_prefill(runtime::ModelRuntime<CpuBackend>& runtime,
                                                        CpuTextPrompt&& prompt,
                                                        CpuTextState& text_state) {
  CpuSamplerState& state = text_state.state();
  const auto n_vocab = static_cast<std::int32_t>(runtime.session().config().n_vocab);
  if (!state.sampler) {
    EREDU_TRY(generation::Sampler sampler, generation::Sampler::create(state.config, n_vocab));
    state.sampler.emplace(std::move(sampler));
  }
  state.sampler->reset_history();
  // A new sequence: the cache is rolled back to position 0 before the prompt runs.
  EREDU_TRY_VOID(runtime.session_mut().truncate(0));
  const std::vector<std::uint32_t> ids = prompt.tokens;
  EREDU_TRY(auto submission, runtime.prefill(std::move(prompt.tokens)));
  // The prompt counts towards the repetition penalty window, as in llama.cpp's CLI.
  for (const std::uint32_t id : ids) {
    EREDU_TRY_VOID(state.sampler->accept(static_cast<generation::TokenId>(id)));
  }
  return sample_last(state, submission.output);
}

Result<TokenSubmission> CpuBackend::submit_text_decode(runtime::ModelRuntime<CpuBackend>& runtime,
                                                       CpuTextToken&& token,
                                                       CpuTextState& text_state) {
  CpuSamplerState& state = text_state.state();
  if (!state.sampler) {
    return fail(ErrorCode::kInvalidArgument, "decode before the prompt was prefilled");
  }
  EREDU_TRY(auto submission, runtime.decode(std::uint32_t{token.id}));
  return sample_last(state, submission.output);
}

}  // namespace eredu::cpu
