// CpuSession: prefill / decode over the llama forward pass, with checks that leave the session
// unchanged (and usable) when an input is rejected or an allocation fails (kCapacityExhausted).
#include <new>
#include <string>

#include "eredu/backends/cpu/cpu_backend.hpp"
#include "eredu/model/llama/admission.hpp"

namespace eredu::cpu {

Result<Submission<CpuTensor, CpuReadyCompletion>> CpuSession::prefill(const CpuBackend& backend,
                                                                      prefill_input&& tokens) {
  const ::eredu::model::llama::LlamaConfig& c = model_.llama->config();
  EREDU_TRY_VOID(::eredu::model::llama::check_forward_input(tokens, c.n_vocab, position_,
                                                            model_.max_positions));
  EREDU_TRY(auto logits, model_.llama->forward(backend, cache_, tokens, position_));
  position_ += static_cast<std::uint32_t>(tokens.size());
  return Submission<CpuTensor, CpuReadyCompletion>{std::move(logits), CpuReadyCompletion{}};
}

Result<Submission<CpuTensor, CpuReadyCompletion>> CpuSession::decode(const CpuBackend& backend,
                                                                     decode_input&& token) {
  prefill_input tokens;
  try {
    tokens.push_back(token);
  } catch (const std::bad_alloc&) {
    return fail(ErrorCode::kCapacityExhausted, "cpu decode: cannot allocate the token");
  }
  return prefill(backend, std::move(tokens));
}

Result<std::vector<float>> CpuSession::observe_output(const CpuBackend&,
                                                      const CpuTensor& out) const {
  try {
    return out.data;
  } catch (const std::bad_alloc&) {
    return fail(ErrorCode::kCapacityExhausted, "cpu observe_output: cannot allocate " +
                                                   std::to_string(out.data.size() * sizeof(float)) +
                                                   " bytes");
  }
}

Result<void> CpuSession::truncate(std::uint32_t position) {
  if (position > position_) {
    return fail(ErrorCode::kInvalidArgument, "truncate: position " + std::to_string(position) +
                                                 " is beyond the " + std::to_string(position_) +
                                                 " cached positions");
  }
  position_ = position;
  return ok();
}

}  // namespace eredu::cpu
