// CpuBackend's execution hooks of the generic session (runtime::FamilySession): what is not inline
// in the header. Loading and preparation are runtime::FamilyRuntimeBackend's.
#include <new>
#include <string>
#include <vector>

#include "eredu/backends/cpu/cpu_backend.hpp"

namespace eredu::cpu {

Result<std::vector<float>> CpuBackend::observe_forward(const CpuTensor& logits) const {
  try {
    return std::vector<float>(logits.data.begin(), logits.data.end());
  } catch (const std::bad_alloc&) {
    return fail(ErrorCode::kCapacityExhausted,
                "cpu observe_output: cannot allocate " +
                    std::to_string(logits.data.size() * sizeof(float)) + " bytes");
  }
}

}  // namespace eredu::cpu
