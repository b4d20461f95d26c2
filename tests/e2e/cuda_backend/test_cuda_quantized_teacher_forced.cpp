// The quantized stories260K files, uploaded to the GPU with their blocks packed and decoded by the
// kernels, give llama.cpp's reference tokens their log-probabilities within the CPU test's
// tolerance (tests/support/quantized_teacher_forced_suite.hpp) -- on CUDA. Without a GPU they
// skip.
#include <gtest/gtest.h>

#ifdef EREDU_HAVE_CUDA_BACKEND
#include <filesystem>
#include <string>

#include "cuda_backend_fixture.hpp"
#include "quantized_teacher_forced_suite.hpp"

namespace {

struct Cuda {
  static std::string unavailable() { return eredu::testing::cuda_unavailable(); }
  static auto load(const std::filesystem::path& path, eredu::KvCacheType kv) {
    eredu::cuda::CudaLoadOptions options;
    options.kv_cache_type = kv;
    return eredu::testing::load_on_cuda(path, options);
  }
  static void after_case() {}
};

EREDU_QUANTIZED_TEACHER_FORCED_SUITE(Cuda, Cuda)

}  // namespace
#endif  // EREDU_HAVE_CUDA_BACKEND
