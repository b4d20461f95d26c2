// Decode steps as CUDA graphs (backends/cuda/src/backend/decode_graph.hpp): a session captures its
// decode step once and replays it at every later position; the replayed steps give the eager
// passes' logits bit for bit (the same kernels, the position read from device memory); a
// truncated session replays at the earlier position; a prompt never runs as a graph. The eager
// backend (CudaBackendOptions::decode_graphs = false) is the reference.
#include <gtest/gtest.h>

#ifdef EREDU_HAVE_CUDA_BACKEND
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <vector>

#include "cuda_backend_fixture.hpp"

namespace {

using namespace eredu::testing;

const std::vector<std::uint32_t> kPrompt = {1, 403, 407, 261, 378, 429};
const std::vector<std::uint32_t> kDecodes = {300, 301, 302, 303, 304, 305, 306, 307};

std::filesystem::path stories() {
  return models_dir() / "stories260K.gguf";
}

// EREDU_CUDA_GRAPHS=0 turns graphs off whatever the options say: nothing to test then.
#define REQUIRE_STORIES()                                                          \
  EREDU_REQUIRE_CUDA();                                                            \
  EREDU_REQUIRE_SHARED_PATH(stories());                                            \
  if (const char* graphs = std::getenv("EREDU_CUDA_GRAPHS");                       \
      graphs != nullptr && std::string_view(graphs) == "0") {                      \
    GTEST_SKIP() << "EREDU_CUDA_GRAPHS=0 is set: decode steps run without graphs"; \
  }

eredu::cuda::CudaBackendOptions with_graphs(bool on) {
  eredu::cuda::CudaBackendOptions options;
  options.decode_graphs = on;
  return options;
}

// The prompt's logits, then each decode's.
std::vector<std::vector<float>> run_steps(
    eredu::runtime::ModelRuntime<eredu::cuda::CudaBackend>& rt) {
  std::vector<std::vector<float>> out;
  auto sub = rt.prefill(std::vector<std::uint32_t>(kPrompt));
  EXPECT_TRUE(sub.has_value()) << sub.error().what();
  out.push_back(*rt.observe_output(sub->output));
  for (std::uint32_t t : kDecodes) {
    auto step = rt.decode(std::uint32_t{t});
    EXPECT_TRUE(step.has_value()) << step.error().what();
    auto logits = rt.observe_output(step->output);
    EXPECT_TRUE(logits.has_value()) << logits.error().what();
    out.push_back(*logits);
  }
  return out;
}

bool bit_identical(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

TEST(CudaDecodeGraph, ASessionCapturesItsDecodeStepOnceAndReplaysItAtEveryPosition) {
  REQUIRE_STORIES();
  auto rt = load_on_cuda(stories(), {}, with_graphs(true));
  ASSERT_TRUE(rt.has_value()) << rt.error().what();
  (void)run_steps(*rt);
  const auto stats = rt->backend().decode_graph_stats();
  EXPECT_EQ(stats.failed_captures, 0u);
  EXPECT_EQ(stats.captures, 1u) << "the prompt is not a graph; the first decode is captured";
  EXPECT_EQ(stats.replays, kDecodes.size());
}

TEST(CudaDecodeGraph, ReplayedDecodeStepsGiveTheEagerPassesLogitsBitForBit) {
  REQUIRE_STORIES();
  for (auto kv : {eredu::KvCacheType::kF16, eredu::KvCacheType::kF32}) {
    SCOPED_TRACE(kv == eredu::KvCacheType::kF16 ? "f16 cache" : "f32 cache");
    eredu::cuda::CudaLoadOptions load;
    load.kv_cache_type = kv;
    auto eager = load_on_cuda(stories(), load, with_graphs(false));
    auto graphed = load_on_cuda(stories(), load, with_graphs(true));
    ASSERT_TRUE(eager.has_value()) << eager.error().what();
    ASSERT_TRUE(graphed.has_value()) << graphed.error().what();
    const auto expected = run_steps(*eager);
    const auto actual = run_steps(*graphed);
    EXPECT_EQ(eager->backend().decode_graph_stats().replays, 0u);
    EXPECT_EQ(graphed->backend().decode_graph_stats().replays, kDecodes.size());
    ASSERT_EQ(actual.size(), expected.size());
    for (std::size_t i = 0; i < expected.size(); ++i) {
      EXPECT_TRUE(bit_identical(actual[i], expected[i]))
          << "step " << i << ": max |diff| " << max_abs_diff(actual[i], expected[i]);
    }
  }
}

TEST(CudaDecodeGraph, ATruncatedSessionReplaysTheSameGraphAtTheEarlierPosition) {
  REQUIRE_STORIES();
  auto rt = load_on_cuda(stories(), {}, with_graphs(true));
  ASSERT_TRUE(rt.has_value()) << rt.error().what();
  const auto first = run_steps(*rt);
  // Back to just after the prompt's first decode, then the same decodes again.
  const auto position = static_cast<std::uint32_t>(kPrompt.size() + 1);
  ASSERT_TRUE(rt->session_mut().truncate(position).has_value());
  for (std::size_t i = 1; i < kDecodes.size(); ++i) {
    auto step = rt->decode(std::uint32_t{kDecodes[i]});
    ASSERT_TRUE(step.has_value()) << step.error().what();
    auto logits = rt->observe_output(step->output);
    ASSERT_TRUE(logits.has_value());
    EXPECT_TRUE(bit_identical(*logits, first[i + 1])) << "decode " << i << " after truncate";
  }
  const auto stats = rt->backend().decode_graph_stats();
  EXPECT_EQ(stats.captures, 1u);
  EXPECT_EQ(stats.replays, kDecodes.size() + kDecodes.size() - 1);
}

TEST(CudaDecodeGraph, AGraphedSessionMatchesTheCpuBackendsGreedyTokens) {
  REQUIRE_STORIES();
  auto gpu = load_on_cuda(stories(), {}, with_graphs(true));
  auto cpu = load_on_cpu(stories());
  ASSERT_TRUE(gpu.has_value()) << gpu.error().what();
  ASSERT_TRUE(cpu.has_value()) << cpu.error().what();
  auto g = gpu->prefill(std::vector<std::uint32_t>(kPrompt));
  auto c = cpu->prefill(std::vector<std::uint32_t>(kPrompt));
  ASSERT_TRUE(g.has_value() && c.has_value());
  std::uint32_t g_token = argmax(*gpu->observe_output(g->output));
  std::uint32_t c_token = argmax(*cpu->observe_output(c->output));
  for (int i = 0; i < 24; ++i) {
    ASSERT_EQ(g_token, c_token) << "greedy token " << i;
    auto gs = gpu->decode(std::uint32_t{g_token});
    auto cs = cpu->decode(std::uint32_t{c_token});
    ASSERT_TRUE(gs.has_value() && cs.has_value());
    g_token = argmax(*gpu->observe_output(gs->output));
    c_token = argmax(*cpu->observe_output(cs->output));
  }
  EXPECT_GT(gpu->backend().decode_graph_stats().replays, 0u);
}

}  // namespace
#endif  // EREDU_HAVE_CUDA_BACKEND
