// eredu-cuda-probe: what one CUDA device does with memory and dense F16 products, for
// bench/gpu-check.sh.
//   - device-to-device copy bandwidth: cudaMemcpyAsync of a ~1 GiB buffer timed with events,
//     best of several runs (the ceiling every memory-bound kernel is measured against);
//   - the dequantize kernel (backends/cuda/src/dequantize.cu) per encoding: 2^28 elements
//     (1 GiB of float32 out), best of several runs, as GB/s of packed bytes read, of bytes written,
//     and of both (the number to compare with the copy's read + write traffic);
//   - cuBLAS's dense GEMM throughput at the linear shapes of a 1B Llama (eredu-synth --preset
//     llama1b: hidden 2048, 16 layers, 32 heads, 8 KV heads, head size 64, ffn 8192, vocab 32000)
//     for a batch of N = 512 tokens: per layer Q 2048x2048, K 512x2048, V 512x2048, O 2048x2048,
//     gate 8192x2048, up 8192x2048, down 2048x8192 (out x in), 16 layers with their own weights,
//     then the output head 32000x2048. cublasGemmEx with F16 weights and activations, F32 output,
//     CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT; Y[N, out] = X[N, in] W[out, in]^T, the weights
//     row-major as GGUF stores them. The whole sequence of 113 products is timed with events, best
//     of several runs, as GFLOP/s (2 x out x in x N per product); each shape alone as well.
// Prints two tables, then machine-readable lines "metric NAME VALUE" for the script:
//   metric d2d_copy_bytes B             the copy's buffer
//   metric d2d_copy_gb_per_s X          read + write traffic: 2 x B / best time
//   metric d2d_copy_read_gb_per_s X     B / best time
//   metric cublas_gemm_tokens N
//   metric cublas_gemm_gflop_per_s X    all 113 products' flops / their best total time
// Without a usable device it prints "no CUDA device: ..." (the CUDA error's name and description)
// and exits 2; any other CUDA or cuBLAS failure exits 1 with the error named.
// Environment: EREDU_PROBE_COPY_MIB (copy buffer, default 1024), EREDU_PROBE_RUNS (default 10),
// EREDU_PROBE_GEMM_TOKENS (N, default 512).
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "cuda_error.hpp"
#include "dequantize.hpp"
#include "eredu/core/dtype.hpp"

namespace {

using eredu::DType;

[[noreturn]] void fail(std::string_view operation, cudaError_t error) {
  std::fprintf(stderr, "eredu-cuda-probe: %s\n",
               eredu::cuda::cuda_error(operation, error).what().c_str());
  std::exit(1);
}

void check(cudaError_t error, std::string_view operation) {
  if (error != cudaSuccess) fail(operation, error);
}

// The status's enumerator name (no cublasGetStatusName: it needs cuBLAS 11.4.2 or later).
const char* cublas_status_name(cublasStatus_t status) {
  switch (status) {
    case CUBLAS_STATUS_SUCCESS:
      return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED:
      return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED:
      return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE:
      return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH:
      return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR:
      return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED:
      return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR:
      return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED:
      return "CUBLAS_STATUS_NOT_SUPPORTED";
    case CUBLAS_STATUS_LICENSE_ERROR:
      return "CUBLAS_STATUS_LICENSE_ERROR";
  }
  return "unknown cuBLAS status";
}

void check(cublasStatus_t status, std::string_view operation) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  std::fprintf(stderr, "eredu-cuda-probe: %.*s failed: %s (%d)\n",
               static_cast<int>(operation.size()), operation.data(), cublas_status_name(status),
               static_cast<int>(status));
  std::exit(1);
}

std::uint64_t env_or(const char* name, std::uint64_t fallback) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return fallback;
  return std::strtoull(value, nullptr, 10);
}

// Device memory freed on scope exit.
struct DeviceBuffer {
  void* ptr = nullptr;
  explicit DeviceBuffer(std::uint64_t bytes) {
    const cudaError_t error = cudaMalloc(&ptr, bytes);
    if (error != cudaSuccess) {
      std::fprintf(stderr, "eredu-cuda-probe: %s\n",
                   eredu::cuda::cuda_allocation_error("cudaMalloc", error, bytes, std::nullopt)
                       .what()
                       .c_str());
      std::exit(1);
    }
  }
  ~DeviceBuffer() { cudaFree(ptr); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

// The shortest of `runs` timings (ms) of `work` enqueued on `stream` between two events, after
// one untimed warm-up (first-touch, clocks, kernel loading).
template <typename Work>
float best_ms(cudaStream_t stream, int runs, Work&& work) {
  cudaEvent_t start;
  cudaEvent_t stop;
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&stop), "cudaEventCreate");
  work();
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize (warm-up)");
  float best = 0.0F;
  for (int r = 0; r < runs; ++r) {
    check(cudaEventRecord(start, stream), "cudaEventRecord");
    work();
    check(cudaEventRecord(stop, stream), "cudaEventRecord");
    check(cudaEventSynchronize(stop), "cudaEventSynchronize");
    float ms = 0.0F;
    check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
    best = r == 0 ? ms : std::min(best, ms);
  }
  check(cudaEventDestroy(start), "cudaEventDestroy");
  check(cudaEventDestroy(stop), "cudaEventDestroy");
  return best;
}

double gb_per_s(double bytes, float ms) {
  return bytes / 1e9 / (static_cast<double>(ms) / 1e3);
}

// One linear layer shape of the llama1b preset: `count` products of [out, in] weights (one per
// layer, each with its own weights) with a batch of N activations.
constexpr int kLayers = 16;
struct GemmShape {
  const char* name;
  int out;
  int in;
  int count;
};
constexpr GemmShape kLlama1bShapes[] = {
    {"attn_q", 2048, 2048, 16},      {"attn_k", 512, 2048, 16},    {"attn_v", 512, 2048, 16},
    {"attn_output", 2048, 2048, 16}, {"ffn_gate", 8192, 2048, 16}, {"ffn_up", 8192, 2048, 16},
    {"ffn_down", 2048, 8192, 16},    {"output", 32000, 2048, 1}};

// `count` random F16 bit patterns of magnitude in [2^-5, 1) and either sign (no NaN, Inf or
// denormal: the products run at their ordinary speed).
std::vector<std::uint16_t> random_halves(std::size_t count, std::uint32_t seed) {
  std::vector<std::uint16_t> halves(count);
  std::mt19937 rng(seed);
  for (auto& h : halves) {
    const std::uint32_t r = rng();
    const std::uint32_t exponent = 10 + (r >> 16) % 5;  // biased: 2^-5 .. 2^-1
    h = static_cast<std::uint16_t>((r & 0x8000u) | (exponent << 10) | (r & 0x3FFu));
  }
  return halves;
}

// Fills `bytes` of device memory at `dst` with copies of `pattern`.
void fill_from(void* dst, std::uint64_t bytes, const std::vector<std::uint16_t>& pattern) {
  const std::uint64_t chunk = pattern.size() * sizeof(std::uint16_t);
  for (std::uint64_t offset = 0; offset < bytes; offset += chunk) {
    const std::uint64_t n = std::min(chunk, bytes - offset);
    check(cudaMemcpy(static_cast<std::uint8_t*>(dst) + offset, pattern.data(), n,
                     cudaMemcpyHostToDevice),
          "cudaMemcpy (fill)");
  }
}

constexpr DType kEncodings[] = {DType::kF16,    DType::kBF16,  DType::kQ8_0, DType::kQ4_0,
                                DType::kQ4_1,   DType::kQ5_0,  DType::kQ5_1, DType::kQ2_K,
                                DType::kQ3_K,   DType::kQ4_K,  DType::kQ5_K, DType::kQ6_K,
                                DType::kIQ4_NL, DType::kIQ4_XS};

}  // namespace

int main() {
  int count = 0;
  const cudaError_t count_error = cudaGetDeviceCount(&count);
  if (count_error != cudaSuccess) {
    // The translation names no-device / no-driver cases "no CUDA device: ..." itself.
    std::fprintf(stderr, "%s\n",
                 eredu::cuda::cuda_error("cudaGetDeviceCount", count_error).message().c_str());
    return 2;
  }
  if (count == 0) {
    std::fprintf(stderr, "no CUDA device: cudaGetDeviceCount found none\n");
    return 2;
  }
  check(cudaSetDevice(0), "cudaSetDevice");
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  int runtime = 0;
  int driver = 0;
  check(cudaRuntimeGetVersion(&runtime), "cudaRuntimeGetVersion");
  check(cudaDriverGetVersion(&driver), "cudaDriverGetVersion");
  std::printf("device 0: %s, compute capability %d.%d, %d SMs, %.1f GiB; runtime %d, driver %d\n",
              prop.name, prop.major, prop.minor, prop.multiProcessorCount,
              static_cast<double>(prop.totalGlobalMem) / (1024.0 * 1024.0 * 1024.0), runtime,
              driver);

  const int runs = static_cast<int>(std::max<std::uint64_t>(1, env_or("EREDU_PROBE_RUNS", 10)));
  cudaStream_t stream;
  check(cudaStreamCreate(&stream), "cudaStreamCreate");

  // Copy bandwidth.
  const std::uint64_t copy_bytes = env_or("EREDU_PROBE_COPY_MIB", 1024) << 20;
  float copy_ms = 0.0F;
  {
    DeviceBuffer src(copy_bytes);
    DeviceBuffer dst(copy_bytes);
    check(cudaMemsetAsync(src.ptr, 0x5A, copy_bytes, stream), "cudaMemsetAsync");
    copy_ms = best_ms(stream, runs, [&] {
      check(cudaMemcpyAsync(dst.ptr, src.ptr, copy_bytes, cudaMemcpyDeviceToDevice, stream),
            "cudaMemcpyAsync");
    });
  }

  // Dequantize: 2^28 elements of each encoding from random bytes (random scales include NaN and
  // Inf, which cost a GPU nothing extra) into 1 GiB of float32.
  constexpr std::uint64_t kElements = std::uint64_t{1} << 28;
  std::uint64_t max_packed = 0;
  for (DType dtype : kEncodings) {
    const auto& info = eredu::dtype_info(dtype);
    max_packed = std::max(max_packed, kElements / info.block_elements * info.block_bytes);
  }
  DeviceBuffer packed(max_packed);
  DeviceBuffer out(kElements * sizeof(float));
  {
    std::vector<std::uint8_t> chunk(64u << 20);
    std::mt19937 rng(1);
    for (auto& byte : chunk)
      byte = static_cast<std::uint8_t>(rng());
    for (std::uint64_t offset = 0; offset < max_packed; offset += chunk.size()) {
      const std::uint64_t n = std::min<std::uint64_t>(chunk.size(), max_packed - offset);
      check(cudaMemcpy(static_cast<std::uint8_t*>(packed.ptr) + offset, chunk.data(), n,
                       cudaMemcpyHostToDevice),
            "cudaMemcpy (fill)");
    }
  }
  struct Row {
    DType dtype;
    std::uint64_t packed_bytes;
    float ms;
  };
  std::vector<Row> rows;
  for (DType dtype : kEncodings) {
    const auto& info = eredu::dtype_info(dtype);
    const std::uint64_t packed_bytes = kElements / info.block_elements * info.block_bytes;
    const float ms = best_ms(stream, runs, [&] {
      auto launched =
          eredu::cuda::launch_dequantize(dtype, static_cast<const std::uint8_t*>(packed.ptr),
                                         static_cast<float*>(out.ptr), kElements, stream);
      if (!launched) {
        std::fprintf(stderr, "eredu-cuda-probe: dequantize %s: %s\n",
                     std::string(info.name).c_str(), launched.error().what().c_str());
        std::exit(1);
      }
    });
    rows.push_back({dtype, packed_bytes, ms});
  }

  // cuBLAS GEMM at the llama1b shapes: every weight of every layer in one buffer (2 GiB in F16),
  // one activation buffer [N, 8192] and one output buffer [N, 32000] shared by all products.
  const int tokens =
      static_cast<int>(std::max<std::uint64_t>(1, env_or("EREDU_PROBE_GEMM_TOKENS", 512)));
  std::uint64_t weight_elements = 0;
  std::uint64_t max_in = 0;
  std::uint64_t max_out = 0;
  for (const GemmShape& shape : kLlama1bShapes) {
    weight_elements += static_cast<std::uint64_t>(shape.out) * shape.in * shape.count;
    max_in = std::max<std::uint64_t>(max_in, shape.in);
    max_out = std::max<std::uint64_t>(max_out, shape.out);
  }
  DeviceBuffer weights(weight_elements * sizeof(std::uint16_t));
  DeviceBuffer activations(max_in * tokens * sizeof(std::uint16_t));
  DeviceBuffer products(max_out * tokens * sizeof(float));
  {
    const std::vector<std::uint16_t> pattern = random_halves(std::size_t{16} << 20, 2);
    fill_from(weights.ptr, weight_elements * sizeof(std::uint16_t), pattern);
    fill_from(activations.ptr, max_in * tokens * sizeof(std::uint16_t), pattern);
  }
  cublasHandle_t cublas = nullptr;
  check(cublasCreate(&cublas), "cublasCreate");
  check(cublasSetStream(cublas, stream), "cublasSetStream");
  const float alpha = 1.0F;
  const float beta = 0.0F;
  // Y[N, out] = X[N, in] W[out, in]^T. Column-major, cuBLAS sees W as in x out (op T, lda = in),
  // X as in x N (op N, ldb = in) and Y as out x N (ldc = out).
  auto gemm = [&](const GemmShape& shape, const std::uint16_t* w) {
    check(
        cublasGemmEx(cublas, CUBLAS_OP_T, CUBLAS_OP_N, shape.out, tokens, shape.in, &alpha, w,
                     CUDA_R_16F, shape.in, activations.ptr, CUDA_R_16F, shape.in, &beta,
                     products.ptr, CUDA_R_32F, shape.out, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
        "cublasGemmEx");
  };
  // Each shape's products with their own weights, in the order they lie in `weights`.
  auto run_shape = [&](std::size_t index) {
    const auto* base = static_cast<const std::uint16_t*>(weights.ptr);
    for (std::size_t s = 0; s < index; ++s) {
      const GemmShape& before = kLlama1bShapes[s];
      base += static_cast<std::uint64_t>(before.out) * before.in * before.count;
    }
    const GemmShape& shape = kLlama1bShapes[index];
    for (int i = 0; i < shape.count; ++i)
      gemm(shape, base + static_cast<std::uint64_t>(shape.out) * shape.in * i);
  };
  struct GemmRow {
    std::string name;
    double flops;
    float ms;
  };
  std::vector<GemmRow> gemm_rows;
  double total_flops = 0.0;
  for (std::size_t i = 0; i < std::size(kLlama1bShapes); ++i) {
    const GemmShape& shape = kLlama1bShapes[i];
    const double flops = 2.0 * shape.out * shape.in * static_cast<double>(tokens) * shape.count;
    total_flops += flops;
    gemm_rows.push_back({std::string(shape.name) + " " + std::to_string(shape.out) + "x" +
                             std::to_string(shape.in) + " x" + std::to_string(shape.count),
                         flops, best_ms(stream, runs, [&] { run_shape(i); })});
  }
  // The layers in model order (Q, K, V, O, gate, up, down of layer 0, then layer 1, ...), then
  // the output head: what a prefill's products would be, back to back.
  const float all_ms = best_ms(stream, runs, [&] {
    std::vector<const std::uint16_t*> next(std::size(kLlama1bShapes));
    const auto* base = static_cast<const std::uint16_t*>(weights.ptr);
    for (std::size_t s = 0; s < std::size(kLlama1bShapes); ++s) {
      next[s] = base;
      const GemmShape& shape = kLlama1bShapes[s];
      base += static_cast<std::uint64_t>(shape.out) * shape.in * shape.count;
    }
    for (int layer = 0; layer < kLayers; ++layer) {
      for (std::size_t s = 0; s < std::size(kLlama1bShapes); ++s) {
        const GemmShape& shape = kLlama1bShapes[s];
        if (shape.count != kLayers) continue;
        gemm(shape, next[s] + static_cast<std::uint64_t>(shape.out) * shape.in * layer);
      }
    }
    for (std::size_t s = 0; s < std::size(kLlama1bShapes); ++s) {
      if (kLlama1bShapes[s].count == 1) gemm(kLlama1bShapes[s], next[s]);
    }
  });
  check(cublasDestroy(cublas), "cublasDestroy");
  check(cudaStreamDestroy(stream), "cudaStreamDestroy");

  std::printf("\n%-22s %10s %12s %12s %12s %10s\n", "measurement", "best ms", "read GB/s",
              "write GB/s", "total GB/s", "Gelem/s");
  std::printf("%-22s %10.3f %12.1f %12.1f %12.1f %10s\n",
              ("D2D copy " + std::to_string(copy_bytes >> 20) + " MiB").c_str(), copy_ms,
              gb_per_s(static_cast<double>(copy_bytes), copy_ms),
              gb_per_s(static_cast<double>(copy_bytes), copy_ms),
              gb_per_s(2.0 * static_cast<double>(copy_bytes), copy_ms), "-");
  for (const Row& row : rows) {
    const double out_bytes = static_cast<double>(kElements) * sizeof(float);
    std::printf("%-22s %10.3f %12.1f %12.1f %12.1f %10.1f\n",
                ("dequantize " + std::string(eredu::to_string(row.dtype))).c_str(), row.ms,
                gb_per_s(static_cast<double>(row.packed_bytes), row.ms),
                gb_per_s(out_bytes, row.ms),
                gb_per_s(static_cast<double>(row.packed_bytes) + out_bytes, row.ms),
                static_cast<double>(kElements) / 1e9 / (static_cast<double>(row.ms) / 1e3));
  }
  std::printf("(best of %d runs each)\n", runs);

  std::printf(
      "\ncuBLAS GEMM, llama1b linear shapes, N = %d tokens (F16 x F16 -> F32, compute 32F)\n",
      tokens);
  std::printf("%-30s %10s %10s %12s\n", "products (out x in x count)", "best ms", "GFLOP",
              "GFLOP/s");
  for (const GemmRow& row : gemm_rows) {
    std::printf("%-30s %10.3f %10.1f %12.1f\n", row.name.c_str(), row.ms, row.flops / 1e9,
                row.flops / 1e9 / (static_cast<double>(row.ms) / 1e3));
  }
  const double gemm_gflop_per_s = total_flops / 1e9 / (static_cast<double>(all_ms) / 1e3);
  std::printf("%-30s %10.3f %10.1f %12.1f\n", "all, in model order", all_ms, total_flops / 1e9,
              gemm_gflop_per_s);
  std::printf("(best of %d runs each)\n\n", runs);

  std::printf("metric d2d_copy_bytes %llu\n", static_cast<unsigned long long>(copy_bytes));
  std::printf("metric d2d_copy_gb_per_s %.3f\n",
              gb_per_s(2.0 * static_cast<double>(copy_bytes), copy_ms));
  std::printf("metric d2d_copy_read_gb_per_s %.3f\n",
              gb_per_s(static_cast<double>(copy_bytes), copy_ms));
  std::printf("metric cublas_gemm_tokens %d\n", tokens);
  std::printf("metric cublas_gemm_gflop_per_s %.3f\n", gemm_gflop_per_s);
  return 0;
}
