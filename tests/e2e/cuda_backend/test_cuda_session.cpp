// CudaBackend contracts and session semantics on stories260K, compared with the CPU backend (an
// independent implementation): prefill/decode logits with an F32 and an F16 KV cache,
// checkpoint/truncate replay, rejected input (token out of range, context full) leaving the
// session usable, completions that observe only their own submission, a steady decode that asks
// the driver for no new device memory, a long chain of operators enqueued without waiting, device
// selection errors and device reports, and a KV cache beyond device memory. Without a GPU every
// test that needs one skips with CudaBackend::create's "no CUDA device: ..." reason.
#include <gtest/gtest.h>

#ifdef EREDU_HAVE_CUDA_BACKEND
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "cuda_backend_fixture.hpp"
#include "eredu/backends/cuda/cuda_plan_factory.hpp"
#include "eredu/backends/cuda/device.hpp"

// (a) The contracts, checked where the header is used.
static_assert(eredu::diagnose::neural_backend<eredu::cuda::CudaBackend>());
static_assert(eredu::diagnose::parameter_backend<eredu::cuda::CudaBackend>());
static_assert(eredu::diagnose::backend_provider<eredu::cuda::CudaBackend>());
static_assert(eredu::diagnose::model_loading_backend<eredu::cuda::CudaBackend>());
static_assert(eredu::diagnose::text_generation_backend<eredu::cuda::CudaBackend>());
static_assert(eredu::model::ModelBackend<eredu::cuda::CudaBackend>);
static_assert(eredu::diagnose::optional_operators<eredu::cuda::CudaBackend>());
static_assert(eredu::diagnose::execution_plan_backend_factory<eredu::cuda::CudaPlanFactory>());

namespace {

using namespace eredu::testing;
using eredu::ErrorCode;

const std::vector<std::uint32_t> kPrompt = {1, 403, 407, 261, 378, 429};

std::filesystem::path stories() {
  return models_dir() / "stories260K.gguf";
}

#define REQUIRE_STORIES() \
  EREDU_REQUIRE_CUDA();   \
  EREDU_REQUIRE_SHARED_PATH(stories())

// Logits of `tokens` prefilled from position 0, then each of `decodes`, on the CPU.
std::vector<std::vector<float>> cpu_logits(const std::vector<std::uint32_t>& tokens,
                                           const std::vector<std::uint32_t>& decodes,
                                           eredu::cpu::CpuLoadOptions options = {}) {
  auto runtime = load_on_cpu(stories(), options);
  EXPECT_TRUE(runtime.has_value());
  std::vector<std::vector<float>> out;
  if (!runtime.has_value()) return out;
  auto sub = runtime->prefill(std::vector<std::uint32_t>(tokens));
  out.push_back(*runtime->observe_output(sub->output));
  for (std::uint32_t t : decodes) {
    auto step = runtime->decode(std::uint32_t{t});
    out.push_back(*runtime->observe_output(step->output));
  }
  return out;
}

constexpr double kLogitTolerance = 2e-3;

// Prefill then three decodes on CUDA with `kv`, each compared with the CPU backend's (same KV
// type).
void expect_cpu_logits_with_kv_cache(eredu::KvCacheType kv) {
  eredu::cpu::CpuLoadOptions cpu_options;
  cpu_options.kv_cache_type = kv;
  const auto expected = cpu_logits(kPrompt, {300, 301, 302}, cpu_options);
  ASSERT_EQ(expected.size(), 4u);
  eredu::cuda::CudaLoadOptions options;
  options.kv_cache_type = kv;
  auto runtime = load_on_cuda(stories(), options);
  ASSERT_TRUE(runtime.has_value()) << runtime.error().what();
  auto sub = runtime->prefill(std::vector<std::uint32_t>(kPrompt));
  ASSERT_TRUE(sub.has_value()) << sub.error().what();
  auto logits = runtime->observe_output(sub->output);
  ASSERT_TRUE(logits.has_value()) << logits.error().what();
  EXPECT_LE(max_abs_diff(*logits, expected[0]), kLogitTolerance);
  std::size_t i = 1;
  for (std::uint32_t t : {300u, 301u, 302u}) {
    auto step = runtime->decode(std::uint32_t{t});
    ASSERT_TRUE(step.has_value()) << step.error().what();
    ASSERT_TRUE(step->completion.wait().has_value());
    EXPECT_TRUE(*step->completion.is_complete());
    auto l = runtime->observe_output(step->output);
    ASSERT_TRUE(l.has_value()) << l.error().what();
    EXPECT_LE(max_abs_diff(*l, expected[i++]), kLogitTolerance) << "decode of " << t;
  }
  EXPECT_EQ(runtime->session().checkpoint(), kPrompt.size() + 3);
}

TEST(CudaSession, PrefillAndDecodeLogitsMatchTheCpuBackendWithAnF32KvCache) {
  REQUIRE_STORIES();
  expect_cpu_logits_with_kv_cache(eredu::KvCacheType::kF32);
}

TEST(CudaSession, PrefillAndDecodeLogitsMatchTheCpuBackendWithAnF16KvCache) {
  REQUIRE_STORIES();
  expect_cpu_logits_with_kv_cache(eredu::KvCacheType::kF16);
}

TEST(CudaSession, TruncateToACheckpointAndReplayGivesTheSameLogits) {
  REQUIRE_STORIES();
  auto runtime = load_on_cuda(stories());
  ASSERT_TRUE(runtime.has_value()) << runtime.error().what();
  auto sub = runtime->prefill(std::vector<std::uint32_t>(kPrompt));
  ASSERT_TRUE(sub.has_value()) << sub.error().what();
  auto first = runtime->decode(std::uint32_t{300});
  ASSERT_TRUE(first.has_value()) << first.error().what();
  const auto before = *runtime->observe_output(first->output);
  ASSERT_TRUE(runtime->session_mut().truncate(3).has_value());
  EXPECT_EQ(runtime->session().checkpoint(), 3u);
  auto rest = runtime->prefill(std::vector<std::uint32_t>(kPrompt.begin() + 3, kPrompt.end()));
  ASSERT_TRUE(rest.has_value()) << rest.error().what();
  auto again = runtime->decode(std::uint32_t{300});
  ASSERT_TRUE(again.has_value()) << again.error().what();
  const auto after = *runtime->observe_output(again->output);
  EXPECT_LE(max_abs_diff(before, after), 1e-5);
  // Truncating past the cached positions is refused and changes nothing.
  auto beyond = runtime->session_mut().truncate(100);
  ASSERT_FALSE(beyond.has_value());
  EXPECT_EQ(beyond.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(runtime->session().checkpoint(), kPrompt.size() + 1);
}

TEST(CudaSession, TokenOutOfRangeIsRejectedAndTheSessionStaysUsable) {
  REQUIRE_STORIES();
  const auto expected = cpu_logits(kPrompt, {300});
  ASSERT_EQ(expected.size(), 2u);
  auto runtime = load_on_cuda(stories());
  ASSERT_TRUE(runtime.has_value()) << runtime.error().what();
  ASSERT_TRUE(runtime->prefill(std::vector<std::uint32_t>(kPrompt)).has_value());
  const std::uint32_t n_vocab = runtime->session().n_vocab();
  auto bad = runtime->decode(std::uint32_t{n_vocab});
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().code(), ErrorCode::kInvalidArgument);
  auto bad_prefill = runtime->prefill(std::vector<std::uint32_t>{1, 2, n_vocab + 5});
  ASSERT_FALSE(bad_prefill.has_value());
  // The bad token's index is named in the message; it is not a byte offset.
  EXPECT_FALSE(bad_prefill.error().offset().has_value());
  EXPECT_NE(bad_prefill.error().what().find("at index 2 "), std::string::npos)
      << bad_prefill.error().what();
  EXPECT_EQ(bad_prefill.error().what().find("at byte"), std::string::npos);
  EXPECT_FALSE(runtime->prefill(std::vector<std::uint32_t>{}).has_value());
  EXPECT_EQ(runtime->session().checkpoint(), kPrompt.size());
  auto good = runtime->decode(std::uint32_t{300});
  ASSERT_TRUE(good.has_value()) << good.error().what();
  EXPECT_LE(max_abs_diff(*runtime->observe_output(good->output), expected[1]), kLogitTolerance);
}

TEST(CudaSession, ContextFullIsRejectedAndTruncateMakesRoomAgain) {
  REQUIRE_STORIES();
  eredu::cuda::CudaLoadOptions options;
  options.context_length = 8;
  auto runtime = load_on_cuda(stories(), options);
  ASSERT_TRUE(runtime.has_value()) << runtime.error().what();
  ASSERT_TRUE(runtime->prefill(std::vector<std::uint32_t>(kPrompt)).has_value());
  ASSERT_TRUE(runtime->decode(std::uint32_t{300}).has_value());
  ASSERT_TRUE(runtime->decode(std::uint32_t{301}).has_value());
  auto full = runtime->decode(std::uint32_t{302});
  ASSERT_FALSE(full.has_value());
  EXPECT_EQ(full.error().code(), ErrorCode::kLimitExceeded);
  EXPECT_EQ(runtime->session().checkpoint(), 8u);
  ASSERT_TRUE(runtime->session_mut().truncate(kPrompt.size()).has_value());
  auto again = runtime->decode(std::uint32_t{300});
  ASSERT_TRUE(again.has_value()) << again.error().what();
  const auto expected = cpu_logits(kPrompt, {300});
  ASSERT_EQ(expected.size(), 2u);
  EXPECT_LE(max_abs_diff(*runtime->observe_output(again->output), expected[1]), kLogitTolerance);
}

TEST(CudaSession, EachCompletionObservesOnlyItsOwnSubmission) {
  REQUIRE_STORIES();
  const auto expected = cpu_logits(kPrompt, {300, 301});
  ASSERT_EQ(expected.size(), 3u);
  auto runtime = load_on_cuda(stories());
  ASSERT_TRUE(runtime.has_value()) << runtime.error().what();
  // Three submissions in flight before anything is waited for.
  auto a = runtime->prefill(std::vector<std::uint32_t>(kPrompt));
  auto b = runtime->decode(std::uint32_t{300});
  auto c = runtime->decode(std::uint32_t{301});
  ASSERT_TRUE(a.has_value() && b.has_value() && c.has_value());
  // Waiting for the middle one gives its own output, whatever the others' state.
  ASSERT_TRUE(b->completion.wait().has_value());
  EXPECT_TRUE(*b->completion.is_complete());
  EXPECT_LE(max_abs_diff(*runtime->observe_output(b->output), expected[1]), kLogitTolerance);
  EXPECT_LE(max_abs_diff(*runtime->observe_output(c->output), expected[2]), kLogitTolerance);
  EXPECT_LE(max_abs_diff(*runtime->observe_output(a->output), expected[0]), kLogitTolerance);
}

TEST(CudaSession, ACompletionOutlivesItsDroppedOutputAndStillWaits) {
  REQUIRE_STORIES();
  auto runtime = load_on_cuda(stories());
  ASSERT_TRUE(runtime.has_value()) << runtime.error().what();
  auto sub = runtime->prefill(std::vector<std::uint32_t>(kPrompt));
  ASSERT_TRUE(sub.has_value()) << sub.error().what();
  eredu::cuda::CudaCompletion completion = std::move(sub->completion);
  sub->output = eredu::cuda::CudaTensor{};     // the logits' pinned copy is dropped here...
  ASSERT_TRUE(completion.wait().has_value());  // ...and the forward pass still writes it safely
  EXPECT_TRUE(*completion.is_complete());
  auto next = runtime->decode(std::uint32_t{300});
  ASSERT_TRUE(next.has_value()) << next.error().what();
  EXPECT_EQ(runtime->observe_output(next->output)->size(), runtime->session().n_vocab());
}

// The bytes the default device's cudaMallocAsync pool holds from the driver (the backend allocates
// from that pool and raises its release threshold, so the figure only grows when it asks for more).
std::uint64_t pool_reserved_bytes(int device) {
  cudaMemPool_t pool = nullptr;
  EXPECT_EQ(cudaDeviceGetDefaultMemPool(&pool, device), cudaSuccess);
  std::uint64_t reserved = 0;
  EXPECT_EQ(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved),
            cudaSuccess);
  return reserved;
}

TEST(CudaSession, SteadyDecodeReusesPooledMemoryInsteadOfAskingTheDriver) {
  REQUIRE_STORIES();
  auto runtime = load_on_cuda(stories());
  ASSERT_TRUE(runtime.has_value()) << runtime.error().what();
  ASSERT_TRUE(runtime->prefill(std::vector<std::uint32_t>(kPrompt)).has_value());
  for (std::uint32_t t : {300u, 301u}) {
    auto s = runtime->decode(std::uint32_t{t});
    ASSERT_TRUE(s.has_value() && runtime->observe_output(s->output).has_value());
  }
  const int device = 0;  // CudaBackendOptions{} selects the first device
  const std::uint64_t reserved = pool_reserved_bytes(device);
  EXPECT_GT(reserved, 0u);
  for (std::uint32_t t : {302u, 303u, 304u, 305u}) {
    auto s = runtime->decode(std::uint32_t{t});
    ASSERT_TRUE(s.has_value() && runtime->observe_output(s->output).has_value());
  }
  EXPECT_EQ(pool_reserved_bytes(device), reserved);
}

TEST(CudaOps, AThousandOperatorsEnqueuedWithoutWaitingGiveTheExactSum) {
  EREDU_REQUIRE_CUDA();
  auto backend = test_cuda_backend();
  ASSERT_TRUE(backend.has_value()) << backend.error().what();
  // A 2 x 8 activation: row r = r + col / 8 (sums of these are exact in F32).
  std::vector<float> values(16);
  for (std::size_t i = 0; i < values.size(); ++i)
    values[i] = static_cast<float>(i / 8) + static_cast<float>(i % 8) / 8.0f;
  auto x = backend->upload(values, 2, 8);
  ASSERT_TRUE(x.has_value()) << x.error().what();
  auto round_trip = backend->read(*x);
  ASSERT_TRUE(round_trip.has_value()) << round_trip.error().what();
  EXPECT_EQ(*round_trip, values);
  // acc = x + x + ... (1001 terms): every intermediate is dropped while later kernels that read it
  // may still be queued, so its memory must go back to the pool in stream order.
  auto acc = *x;
  constexpr int kAdds = 1000;
  for (int i = 0; i < kAdds; ++i) {
    auto next = backend->add(acc, *x);
    ASSERT_TRUE(next.has_value()) << next.error().what();
    acc = std::move(*next);
  }
  auto done = backend->flush();
  ASSERT_TRUE(done.has_value()) << done.error().what();
  ASSERT_TRUE(done->wait().has_value());
  EXPECT_TRUE(*done->is_complete());
  auto sum = backend->read(acc);
  ASSERT_TRUE(sum.has_value()) << sum.error().what();
  ASSERT_EQ(sum->size(), values.size());
  for (std::size_t i = 0; i < values.size(); ++i)
    EXPECT_FLOAT_EQ((*sum)[i], (kAdds + 1) * values[i]) << "element " << i;
}

TEST(CudaOps, MismatchedShapesAreRejectedBeforeAnyKernelRuns) {
  EREDU_REQUIRE_CUDA();
  auto backend = test_cuda_backend();
  ASSERT_TRUE(backend.has_value()) << backend.error().what();
  auto a = backend->upload(std::vector<float>(6, 1.0f), 2, 3);
  auto b = backend->upload(std::vector<float>(6, 1.0f), 3, 2);
  ASSERT_TRUE(a.has_value() && b.has_value());
  EXPECT_FALSE(backend->add(*a, *b).has_value());
  EXPECT_FALSE(backend->swiglu(*a, *b).has_value());
  // Too few values for the shape asked for.
  EXPECT_FALSE(backend->upload(std::vector<float>(5, 1.0f), 2, 3).has_value());
  // The stream is still healthy afterwards.
  auto sum = backend->add(*a, *a);
  ASSERT_TRUE(sum.has_value()) << sum.error().what();
  auto out = backend->read(*sum);
  ASSERT_TRUE(out.has_value()) << out.error().what();
  EXPECT_EQ(*out, std::vector<float>(6, 2.0f));
}

TEST(CudaBackendDevices, ReportsEveryDeviceAndRejectsAnUnknownSelector) {
  EREDU_REQUIRE_CUDA();
  auto backend = test_cuda_backend();
  ASSERT_TRUE(backend.has_value()) << backend.error().what();
  auto reports = backend->devices();
  ASSERT_TRUE(reports.has_value()) << reports.error().what();
  const auto infos = eredu::cuda::list_devices();
  ASSERT_TRUE(infos.has_value()) << infos.error().what();
  ASSERT_EQ(reports->size(), infos->size());
  for (std::size_t i = 0; i < infos->size(); ++i) {
    const auto& info = (*infos)[i];
    EXPECT_EQ((*reports)[i].descriptor.id, "cuda:" + std::to_string(info.index));
    EXPECT_NE((*reports)[i].descriptor.name.find(info.name), std::string::npos);
    EXPECT_EQ((*reports)[i].descriptor.memory_bytes, info.total_memory_bytes);
  }
  EXPECT_EQ(backend->descriptor().name, "cuda");
  eredu::cuda::CudaBackendOptions options;
  options.device = "no-such-device-anywhere";
  auto missing = eredu::cuda::CudaBackend::create(options);
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code(), ErrorCode::kNotFound);
  // The message lists the devices there are.
  EXPECT_NE(missing.error().what().find(infos->front().name), std::string::npos)
      << missing.error().what();
  options.device = "999";
  auto by_index = eredu::cuda::CudaBackend::create(options);
  ASSERT_FALSE(by_index.has_value());
  EXPECT_EQ(by_index.error().code(), ErrorCode::kNotFound);
  options.device = std::to_string(infos->front().index);
  auto chosen = eredu::cuda::CudaBackend::create(options);
  EXPECT_TRUE(chosen.has_value()) << chosen.error().what();
}

// Runs on every machine: CudaBackend::create either opens the default device or returns the typed
// "no CUDA device" error a caller can tell apart from a failure (never an abort or an exception).
TEST(CudaBackendCreate, OpensTheDefaultDeviceOrReturnsATypedNoDeviceError) {
  auto backend = eredu::cuda::CudaBackend::create(eredu::cuda::CudaBackendOptions{});
  if (backend.has_value()) {
    EXPECT_NE(backend->stream_ptr(), nullptr);
    EXPECT_TRUE(cuda_unavailable().empty());
    return;
  }
  EXPECT_EQ(backend.error().code(), ErrorCode::kCapabilityMissing) << backend.error().what();
  EXPECT_EQ(backend.error().message().rfind("no CUDA device: ", 0), 0u) << backend.error().what();
  EXPECT_EQ(cuda_unavailable(), backend.error().message());
}

// A KV cache far beyond the device's memory is a clear error, not an abort, and the backend still
// runs afterwards.
TEST(CudaBackendErrors, AKvCacheBeyondDeviceMemoryIsCapacityExhausted) {
  EREDU_REQUIRE_CUDA();
  auto backend = test_cuda_backend();
  ASSERT_TRUE(backend.has_value()) << backend.error().what();
  const auto infos = eredu::cuda::list_devices();
  ASSERT_TRUE(infos.has_value()) << infos.error().what();
  const std::uint64_t memory = infos->front().total_memory_bytes;
  // One layer whose K buffer alone is 4x the device's memory (F32, 1024-wide rows).
  const std::uint64_t positions = std::max<std::uint64_t>(1, memory / 1024);
  const eredu::KvCacheSpec spec{1, 8, 128,
                                static_cast<std::uint32_t>(std::min<std::uint64_t>(
                                    positions, std::numeric_limits<std::uint32_t>::max()))};
  auto cache = backend->create_kv_cache(spec);
  ASSERT_FALSE(cache.has_value());
  EXPECT_EQ(cache.error().code(), ErrorCode::kCapacityExhausted) << cache.error().what();
  auto small = backend->create_kv_cache(eredu::KvCacheSpec{1, 1, 8, 4});
  EXPECT_TRUE(small.has_value()) << small.error().what();
  auto x = backend->upload(std::vector<float>{1.0f, 2.0f}, 1, 2);
  ASSERT_TRUE(x.has_value()) << x.error().what();
  auto back = backend->read(*x);
  ASSERT_TRUE(back.has_value()) << back.error().what();
  EXPECT_EQ(*back, (std::vector<float>{1.0f, 2.0f}));
}

}  // namespace
#endif  // EREDU_HAVE_CUDA_BACKEND
