// Every model family on the CUDA backend generates llama.cpp's exact greedy tokens, with an F32
// and with an F16 KV cache (the suite is tests/support/family_greedy_suite.hpp, written once for
// every backend). Without a GPU every case skips with "no CUDA device: ...".
#include <gtest/gtest.h>

#ifdef EREDU_HAVE_CUDA_BACKEND
#include <filesystem>
#include <string>

#include "cuda_backend_fixture.hpp"
#include "family_greedy_suite.hpp"

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

EREDU_FAMILY_GREEDY_SUITE(Cuda, Cuda)

}  // namespace
#endif  // EREDU_HAVE_CUDA_BACKEND
