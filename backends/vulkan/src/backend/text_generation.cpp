// VulkanBackend as a TextGenerationBackend: prefill / decode through the session (one submission
// each), wait for the logits, then sample the last position's logits on the host with
// generation::Sampler (created on the first prefill, when the vocabulary size is known).
#include <memory>
#include <optional>
#include <utility>

#include "eredu/backends/vulkan/vulkan_backend.hpp"
#include "eredu/generation/sampler.hpp"
#include "eredu/generation/sampling_config.hpp"
#include "eredu/runtime/model_runtime.hpp"

namespace eredu::vulkan {

struct VulkanSamplerState {
  generation::SamplingConfig config;
  std::optional<generation::Sampler> sampler;
};

VulkanTextState::VulkanTextState(std::unique_ptr<VulkanSamplerState> state)
    : state_(std::move(state)) {}
VulkanTextState::VulkanTextState(VulkanTextState&&) noexcept = default;
VulkanTextState& VulkanTextState::operator=(VulkanTextState&&) noexcept = default;
VulkanTextState::~VulkanTextState() = default;

namespace {

using TokenSubmission = Submission<VulkanTextToken, VulkanReadyCompletion>;

// Waits for the submission (observe_output) and samples its logits on the host.
Result<TokenSubmission> sample_last(VulkanSamplerState& state,
                                    const runtime::ModelRuntime<VulkanBackend>& runtime,
                                    const VulkanTensor& output) {
  EREDU_TRY(const std::vector<float> logits, runtime.observe_output(output));
  if (logits.empty()) return fail(ErrorCode::kInternal, "the forward pass returned no logits");
  EREDU_TRY(const generation::TokenId token, state.sampler->sample(logits));
  EREDU_TRY_VOID(state.sampler->accept(token));
  return TokenSubmission{VulkanTextToken{static_cast<std::uint32_t>(token)},
                         VulkanReadyCompletion{}};
}

}  // namespace

TextGenerationLimits VulkanBackend::text_limits(
    const runtime::ModelRuntime<VulkanBackend>& runtime) {
  return TextGenerationLimits{
      runtime.session().max_positions(), runtime.session().config().n_vocab, {}};
}

Result<VulkanTextState> VulkanBackend::start_text_generation(
    const VulkanBackend& /*backend*/, const generation::SamplingConfig& config) {
  EREDU_TRY_VOID(config.validate());
  auto state = std::make_unique<VulkanSamplerState>();
  state->config = config;
  return VulkanTextState(std::move(state));
}

Result<VulkanTextPrompt> VulkanBackend::prepare_text_prompt(const VulkanBackend& /*backend*/,
                                                            std::span<const std::uint32_t> tokens) {
  if (tokens.empty()) {
    return fail(Error(ErrorCode::kInvalidArgument, "empty prompt").with_subject("prompt"));
  }
  return VulkanTextPrompt{std::vector<std::uint32_t>(tokens.begin(), tokens.end())};
}

Result<TokenSubmission> VulkanBackend::submit_text_prefill(
    runtime::ModelRuntime<VulkanBackend>& runtime, VulkanTextPrompt&& prompt,
    VulkanTextState& text_state) {
  VulkanSamplerState& state = text_state.state();
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
  return sample_last(state, runtime, submission.output);
}

Result<TokenSubmission> VulkanBackend::submit_text_decode(
    runtime::ModelRuntime<VulkanBackend>& runtime, VulkanTextToken&& token,
    VulkanTextState& text_state) {
  VulkanSamplerState& state = text_state.state();
  if (!state.sampler) {
    return fail(ErrorCode::kInvalidArgument, "decode before the prompt was prefilled");
  }
  EREDU_TRY(auto submission, runtime.decode(std::uint32_t{token.id}));
  return sample_last(state, runtime, submission.output);
}

}  // namespace eredu::vulkan
