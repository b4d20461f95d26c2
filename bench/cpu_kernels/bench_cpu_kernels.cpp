// Google Benchmark micro-benchmarks of the CPU backend's hot kernels, through the public kernel
// table (eredu/backends/cpu/kernels.hpp, best ISA of this CPU, or the one EREDU_CPU_ISA=scalar|avx2
// forces, to compare the tables):
//
//   Matvec/<enc>/<rows>x<cols>/threads:T    one token (decode): weight bytes/s = the bound
//   Matmul/<enc>/<rows>x<cols>/tokens:128   a 128-token batch (prefill): FLOP/s
//   Attention/<decode|prefill128>/<preset>/ctx:N   llama1b (32 heads, 8 KV heads, head 64) or
//                                           smol135m (9 heads, 3 KV heads) geometry, F16 KV
//                                           cache; the queries sit at the end of N positions
//   RmsNorm/<n>/rows:R
//
// Weights are read as the backend binds them: in the table's row groups where it has them (Q4_K
// on AVX-512), else as stored.
// Shapes are the ffn_down matrices of the two benchmark presets (smol135m: 576 x 1536, llama1b:
// 2048 x 8192; rows = outputs, cols = inputs; both row lengths are whole K-quant super-blocks),
// which stay in cache; Matvec also runs 16384 x 8192, which streams from memory as decode does.
// Threads default to 2 (the machine of the benchmark issue); EREDU_BENCH_THREADS overrides.
//   eredu_bench_cpu_kernels --benchmark_filter='Matvec/Q4_0'
// With default flags the whole set runs in about half a minute on a 2-core machine.

#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "eredu/backends/cpu/kernels.hpp"
#include "eredu/checkpoint/encoding/half.hpp"

namespace {

using eredu::DType;
namespace cpu = eredu::cpu;

std::size_t bench_threads() {
  if (const char* env = std::getenv("EREDU_BENCH_THREADS"); env != nullptr && *env != '\0') {
    const long n = std::strtol(env, nullptr, 10);
    if (n > 0) return static_cast<std::size_t>(n);
  }
  return 2;
}

// SplitMix64: fast, so that filling a 64 MiB matrix takes no noticeable time.
struct SplitMix {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  // Uniform in [-0.05, 0.05): weight-like magnitudes, never subnormal in F32.
  float small() {
    return static_cast<float>(next() >> 40) / static_cast<float>(1 << 24) * 0.1F - 0.05F;
  }
};

// A packed matrix of `dtype`. Float encodings hold real small values; block encodings hold random
// quant bytes with every 16-bit word's exponent bits limited (the F16 scales stay finite and
// moderate). Timings do not depend on the values beyond that.
std::vector<std::byte> make_weights(DType dtype, std::size_t rows, std::size_t cols) {
  const std::size_t row_bytes = cpu::packed_row_bytes(dtype, cols);
  std::vector<std::byte> bytes(rows * row_bytes);
  SplitMix rng{static_cast<std::uint64_t>(dtype) * 7919 + rows * 31 + cols};
  if (dtype == DType::kF32) {
    for (std::size_t i = 0; i < rows * cols; ++i) {
      const float v = rng.small();
      std::memcpy(bytes.data() + 4 * i, &v, 4);
    }
  } else if (dtype == DType::kF16 || dtype == DType::kBF16) {
    for (std::size_t i = 0; i < rows * cols; ++i) {
      const float v = rng.small();
      const std::uint16_t h = dtype == DType::kF16 ? eredu::encoding::fp32_to_fp16(v)
                                                   : eredu::encoding::fp32_to_bf16(v);
      std::memcpy(bytes.data() + 2 * i, &h, 2);
    }
  } else {
    for (std::size_t i = 0; i + 8 <= bytes.size(); i += 8) {
      const std::uint64_t v = rng.next();
      std::memcpy(bytes.data() + i, &v, 8);
    }
    for (std::size_t i = 1; i < bytes.size(); i += 2)
      bytes[i] &= std::byte{0x3B};
  }
  return bytes;
}

// The matrix of the running benchmark, kept while consecutive runs use the same one (Google
// Benchmark calls a benchmark function several times while it sizes the iteration count).
const std::vector<std::byte>& cached_weights(DType dtype, std::size_t rows, std::size_t cols) {
  struct Key {
    DType dtype;
    std::size_t rows, cols;
  };
  static Key key{DType::kF32, 0, 0};
  static std::vector<std::byte> weights;
  if (key.dtype != dtype || key.rows != rows || key.cols != cols) {
    weights.clear();
    weights.shrink_to_fit();
    weights = make_weights(dtype, rows, cols);
    key = {dtype, rows, cols};
  }
  return weights;
}

// The table's row groups of that matrix (KernelTable::row_group_bytes), as the backend makes them
// at load; null where the table reads the encoding as stored. Kept with cached_weights'.
const void* cached_row_groups(const cpu::KernelTable& k, DType dtype, std::size_t rows,
                              std::size_t cols, const std::vector<std::byte>& weights) {
  static const std::byte* packed_from = nullptr;
  static std::vector<std::byte> storage;
  static void* groups = nullptr;
  const std::size_t bytes = k.row_group_bytes(dtype, rows, cols);
  if (bytes == 0) return nullptr;
  if (packed_from != weights.data() || storage.size() != bytes + 64) {
    storage.assign(bytes + 64, std::byte{0});
    void* at = storage.data();
    std::size_t space = storage.size();
    groups = std::align(64, bytes, at, space);
    k.pack_row_groups(dtype, weights.data(), rows, cols, groups);
    packed_from = weights.data();
  }
  return groups;
}

cpu::ThreadPool& pool_of(std::size_t threads) {
  static std::unique_ptr<cpu::ThreadPool> pool;
  if (!pool || pool->size() != threads) pool = std::make_unique<cpu::ThreadPool>(threads);
  return *pool;
}

void run_matmul(benchmark::State& state, DType dtype, std::size_t rows, std::size_t cols,
                std::size_t tokens, std::size_t threads) {
  const cpu::KernelTable& k = cpu::kernels();
  if (!k.supports_matmul(dtype)) {
    state.SkipWithError("encoding not supported by the kernels");
    return;
  }
  const auto& w_bytes = cached_weights(dtype, rows, cols);
  const cpu::MatrixView w{dtype, w_bytes.data(), rows, cols,
                          cached_row_groups(k, dtype, rows, cols, w_bytes)};
  std::vector<float> x(tokens * cols), y(tokens * rows);
  SplitMix rng{42};
  for (float& v : x)
    v = rng.small() * 20.0F;
  cpu::ThreadPool& pool = pool_of(threads);
  for (auto _ : state) {
    k.matmul(w, x.data(), tokens, y.data(), &pool);
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) *
                          static_cast<std::int64_t>(w_bytes.size()));
  state.counters["FLOP/s"] = benchmark::Counter(
      static_cast<double>(state.iterations()) * 2.0 * static_cast<double>(rows * cols * tokens),
      benchmark::Counter::kIsRate);
  if (tokens > 1) {
    state.counters["tokens/s"] = benchmark::Counter(
        static_cast<double>(state.iterations() * tokens), benchmark::Counter::kIsRate);
  }
}

// The attention geometry of a benchmark preset.
struct AttentionGeometry {
  const char* name;
  std::size_t heads;
  std::size_t kv_heads;
  std::size_t head_dim;
};
constexpr AttentionGeometry kLlama1b{"llama1b", 32, 8, 64};
constexpr AttentionGeometry kSmol135m{"smol135m", 9, 3, 64};

// `n_tokens` queries at the last positions of a `ctx`-position cache.
void run_attention(benchmark::State& state, const AttentionGeometry& g, std::size_t ctx,
                   std::size_t n_tokens, std::size_t threads) {
  const std::size_t kHeads = g.heads, kKvHeads = g.kv_heads, kHeadDim = g.head_dim;
  std::vector<float> q(n_tokens * kHeads * kHeadDim), out(q.size());
  std::vector<std::uint16_t> k(ctx * kKvHeads * kHeadDim), v(k.size());
  SplitMix rng{7};
  for (float& x : q)
    x = rng.small() * 20.0F;
  for (std::size_t i = 0; i < k.size(); ++i) {
    k[i] = eredu::encoding::fp32_to_fp16(rng.small() * 20.0F);
    v[i] = eredu::encoding::fp32_to_fp16(rng.small() * 20.0F);
  }
  std::vector<std::int32_t> positions(n_tokens);
  for (std::size_t t = 0; t < n_tokens; ++t)
    positions[t] = static_cast<std::int32_t>(ctx - n_tokens + t);
  cpu::AttentionArgs args;
  args.q = q.data();
  args.k = k.data();
  args.v = v.data();
  args.kv_dtype = DType::kF16;
  args.positions = positions.data();
  args.n_tokens = n_tokens;
  args.n_head = kHeads;
  args.n_head_kv = kKvHeads;
  args.head_dim = kHeadDim;
  args.n_kv = ctx;
  args.scale = 1.0F / std::sqrt(static_cast<float>(kHeadDim));
  args.out = out.data();
  cpu::ThreadPool& pool = pool_of(threads);
  const cpu::KernelTable& kt = cpu::kernels();
  // The keys as the backend's cache holds them for this table.
  std::vector<std::uint16_t> k_blocks;
  if (kt.key_layout == cpu::KeyLayout::kBlocks16) {
    const std::size_t row = kKvHeads * kHeadDim;
    k_blocks.assign((ctx + 15) / 16 * 16 * row, 0);
    for (std::size_t j = 0; j < ctx; ++j) {
      for (std::size_t e = 0; e < row; ++e)
        k_blocks[cpu::key_offset(cpu::KeyLayout::kBlocks16, j, e, row)] = k[j * row + e];
    }
    args.k = k_blocks.data();
    args.key_layout = cpu::KeyLayout::kBlocks16;
  }
  for (auto _ : state) {
    kt.attention(args, &pool);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  // Q.K and P.V: 2 x head_dim flops each per (query head, visible key) pair.
  double pairs = 0.0;
  for (std::int32_t p : positions)
    pairs += static_cast<double>(p + 1);
  state.counters["FLOP/s"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * pairs * kHeads * 4.0 * kHeadDim,
                         benchmark::Counter::kIsRate);
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) *
                          static_cast<std::int64_t>(2 * k.size() * sizeof(std::uint16_t)));
}

void run_rms_norm(benchmark::State& state, std::size_t n, std::size_t rows, std::size_t threads) {
  std::vector<float> x(rows * n), gain(n, 1.0F), y(x.size());
  SplitMix rng{3};
  for (float& v : x)
    v = rng.small();
  cpu::ThreadPool& pool = pool_of(threads);
  const cpu::KernelTable& k = cpu::kernels();
  for (auto _ : state) {
    k.rms_norm(x.data(), gain.data(), rows, n, 1e-5F, y.data(), &pool);
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) *
                          static_cast<std::int64_t>(x.size() * sizeof(float)));
}

struct Shape {
  std::size_t rows, cols;
};

void register_all() {
  const std::size_t threads = bench_threads();
  const std::string t = "/threads:" + std::to_string(threads);
  const DType encodings[] = {DType::kF32,  DType::kF16,    DType::kBF16,  DType::kQ8_0,
                             DType::kQ4_0, DType::kQ4_1,   DType::kQ5_0,  DType::kQ5_1,
                             DType::kQ2_K, DType::kQ3_K,   DType::kQ4_K,  DType::kQ5_K,
                             DType::kQ6_K, DType::kIQ4_NL, DType::kIQ4_XS};
  const Shape shapes[] = {{576, 1536}, {2048, 8192}};
  // Decode also from memory: 16384 x 8192 is larger than any L3 seen here (32 MiB on the Zen 5
  // guests) in every encoding, as a decode's weights are; the two shapes above stay in cache.
  const Shape matvec_shapes[] = {{576, 1536}, {2048, 8192}, {16384, 8192}};
  for (const Shape& s : matvec_shapes) {
    for (DType d : encodings) {
      const std::string name = std::string(eredu::dtype_info(d).name) + "/" +
                               std::to_string(s.rows) + "x" + std::to_string(s.cols);
      benchmark::RegisterBenchmark(
          ("Matvec/" + name + t).c_str(),
          [=](benchmark::State& st) { run_matmul(st, d, s.rows, s.cols, 1, threads); })
          ->UseRealTime()
          ->MinTime(0.2);
    }
  }
  for (const Shape& s : shapes) {
    for (DType d : encodings) {
      const std::string name = std::string(eredu::dtype_info(d).name) + "/" +
                               std::to_string(s.rows) + "x" + std::to_string(s.cols);
      benchmark::RegisterBenchmark(
          ("Matmul/" + name + "/tokens:128" + t).c_str(),
          [=](benchmark::State& st) { run_matmul(st, d, s.rows, s.cols, 128, threads); })
          ->UseRealTime()
          ->MinTime(0.2)
          ->Unit(benchmark::kMillisecond);
    }
  }
  // The F32 prompt products of a tiny model (stories260K: rows of 64 and of 172), where the
  // horizontal sums at the end of each short chain weigh as much as the multiply-adds.
  for (const Shape& s : {Shape{64, 64}, Shape{172, 64}, Shape{64, 172}}) {
    const std::string name = "F32/" + std::to_string(s.rows) + "x" + std::to_string(s.cols);
    benchmark::RegisterBenchmark(
        ("Matmul/" + name + "/tokens:128" + t).c_str(),
        [=](benchmark::State& st) { run_matmul(st, DType::kF32, s.rows, s.cols, 128, threads); })
        ->UseRealTime()
        ->MinTime(0.2)
        ->Unit(benchmark::kMicrosecond);
  }
  // A speculative verification: 4 or 8 drafts and the bonus; compare its time with Matvec's.
  for (DType d : {DType::kF16, DType::kQ8_0, DType::kQ4_0, DType::kQ4_K}) {
    const Shape s{2048, 8192};
    const std::string name = std::string(eredu::dtype_info(d).name) + "/" + std::to_string(s.rows) +
                             "x" + std::to_string(s.cols);
    for (std::size_t tokens : {5, 9}) {  // --draft-max 4, and the default 8
      benchmark::RegisterBenchmark(
          ("Verify/" + name + "/tokens:" + std::to_string(tokens) + t).c_str(),
          [=](benchmark::State& st) { run_matmul(st, d, s.rows, s.cols, tokens, threads); })
          ->UseRealTime()
          ->MinTime(0.2);
    }
  }
  for (const AttentionGeometry& g : {kLlama1b, kSmol135m}) {
    const std::string geometry = g.name;
    for (std::size_t ctx : {128, 512, 2048, 4096}) {
      benchmark::RegisterBenchmark(
          ("Attention/decode/" + geometry + "/ctx:" + std::to_string(ctx) + t).c_str(),
          [=](benchmark::State& st) { run_attention(st, g, ctx, 1, threads); })
          ->UseRealTime()
          ->MinTime(0.2);
      if (ctx == 4096) continue;
      benchmark::RegisterBenchmark(
          ("Attention/prefill128/" + geometry + "/ctx:" + std::to_string(ctx) + t).c_str(),
          [=](benchmark::State& st) { run_attention(st, g, ctx, 128, threads); })
          ->UseRealTime()
          ->MinTime(0.2)
          ->Unit(benchmark::kMillisecond);
    }
  }
  for (std::size_t n : {576, 2048}) {
    for (std::size_t rows : {1, 128}) {
      benchmark::RegisterBenchmark(
          ("RmsNorm/" + std::to_string(n) + "/rows:" + std::to_string(rows) + t).c_str(),
          [=](benchmark::State& st) { run_rms_norm(st, n, rows, threads); })
          ->UseRealTime()
          ->MinTime(0.1);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  register_all();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
