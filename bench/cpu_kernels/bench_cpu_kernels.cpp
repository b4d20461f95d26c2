// CPU kernel throughput: matrix-vector (decode) and matrix-matrix (prefill) products per weight
// encoding, reported as weight bytes per second, for the best ISA table and the generic one.
//   eredu_bench_cpu_kernels --benchmark_filter=Matvec
#include <benchmark/benchmark.h>

#include <cstring>
#include <random>
#include <vector>

#include "eredu/backends/cpu/kernels.hpp"
#include "eredu/checkpoint/encoding/half.hpp"

namespace {

using eredu::DType;

std::vector<std::byte> random_weights(DType dtype, std::size_t rows, std::size_t cols) {
  std::vector<std::byte> bytes(rows * eredu::cpu::packed_row_bytes(dtype, cols));
  std::mt19937 rng(1);
  for (auto& b : bytes)
    b = static_cast<std::byte>(rng() & 0xFF);
  // Keep F16 scales and float values finite: clear the exponent's top bit of every 16-bit word.
  if (dtype != DType::kF32) {
    for (std::size_t i = 1; i < bytes.size(); i += 2)
      bytes[i] &= std::byte{0x3F};
  } else {
    for (std::size_t i = 3; i < bytes.size(); i += 4)
      bytes[i] &= std::byte{0x3F};
  }
  return bytes;
}

void run_matmul(benchmark::State& state, DType dtype, eredu::cpu::Isa isa, std::size_t tokens) {
  const auto* table = eredu::cpu::kernels_for(isa);
  if (table == nullptr) {
    state.SkipWithError("ISA not supported");
    return;
  }
  const std::size_t rows = 4096, cols = 4096;
  const auto w_bytes = random_weights(dtype, rows, cols);
  const eredu::cpu::MatrixView w{dtype, w_bytes.data(), rows, cols};
  std::vector<float> x(tokens * cols, 0.5F), y(tokens * rows);
  eredu::cpu::ThreadPool pool(static_cast<std::size_t>(state.range(0)));
  for (auto _ : state) {
    table->matmul(w, x.data(), tokens, y.data(), &pool);
    benchmark::DoNotOptimize(y.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * w_bytes.size()));
  state.counters["flops"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * 2.0 * rows * cols * tokens,
                         benchmark::Counter::kIsRate);
}

#define EREDU_BENCH_MATMUL(D)                               \
  void Matvec_##D(benchmark::State& s) {                    \
    run_matmul(s, DType::k##D, eredu::cpu::best_isa(), 1);  \
  }                                                         \
  void Matmul32_##D(benchmark::State& s) {                  \
    run_matmul(s, DType::k##D, eredu::cpu::best_isa(), 32); \
  }                                                         \
  BENCHMARK(Matvec_##D)->Arg(1)->Arg(2)->UseRealTime();     \
  BENCHMARK(Matmul32_##D)->Arg(2)->UseRealTime();

EREDU_BENCH_MATMUL(F32)
EREDU_BENCH_MATMUL(F16)
EREDU_BENCH_MATMUL(Q8_0)
EREDU_BENCH_MATMUL(Q4_0)
EREDU_BENCH_MATMUL(Q4_K)
EREDU_BENCH_MATMUL(Q6_K)

}  // namespace
