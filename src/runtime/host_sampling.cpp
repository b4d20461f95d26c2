// HostSamplingState: generation::Sampler behind a pointer, so that backend headers that inherit
// HostSamplingTextGeneration never include the generation layer.
#include "eredu/runtime/host_sampling.hpp"

#include <optional>

#include "eredu/generation/sampler.hpp"
#include "eredu/generation/sampling_config.hpp"

namespace eredu::runtime {

struct HostSampler {
  generation::SamplingConfig config;
  std::optional<generation::Sampler> sampler;
};

HostSamplingState::HostSamplingState(std::unique_ptr<HostSampler> sampler)
    : sampler_(std::move(sampler)) {}
HostSamplingState::HostSamplingState(HostSamplingState&&) noexcept = default;
HostSamplingState& HostSamplingState::operator=(HostSamplingState&&) noexcept = default;
HostSamplingState::~HostSamplingState() = default;

Result<HostSamplingState> HostSamplingState::create(const generation::SamplingConfig& config) {
  EREDU_TRY_VOID(config.validate());
  auto sampler = std::make_unique<HostSampler>();
  sampler->config = config;
  return HostSamplingState(std::move(sampler));
}

Result<void> HostSamplingState::begin_sequence(std::uint32_t n_vocab,
                                               std::span<const std::uint32_t> prompt) {
  if (!sampler_->sampler) {
    EREDU_TRY(generation::Sampler sampler,
              generation::Sampler::create(sampler_->config, static_cast<std::int32_t>(n_vocab)));
    sampler_->sampler.emplace(std::move(sampler));
  }
  sampler_->sampler->reset_history();
  for (const std::uint32_t id : prompt) {
    EREDU_TRY_VOID(sampler_->sampler->accept(static_cast<generation::TokenId>(id)));
  }
  return ok();
}

Result<std::uint32_t> HostSamplingState::sample_and_accept(std::span<const float> logits) {
  if (!sampler_->sampler) {
    return fail(ErrorCode::kInvalidArgument, "sampling before the prompt was prefilled");
  }
  EREDU_TRY(const generation::TokenId token, sampler_->sampler->sample(logits));
  EREDU_TRY_VOID(sampler_->sampler->accept(token));
  return static_cast<std::uint32_t>(token);
}

bool HostSamplingState::started() const noexcept {
  return sampler_->sampler.has_value();
}

}  // namespace eredu::runtime
