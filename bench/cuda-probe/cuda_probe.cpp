// eredu-cuda-probe: what one CUDA device does with memory, for bench/gpu-check.sh.
//   - device-to-device copy bandwidth: cudaMemcpyAsync of a ~1 GiB buffer timed with events,
//     best of several runs (the ceiling every memory-bound kernel is measured against);
//   - the dequantize kernel (backends/cuda/src/dequantize.cu) per encoding: 2^28 elements
//     (1 GiB of float32 out), best of several runs, as GB/s of packed bytes read, of bytes written,
//     and of both (the number to compare with the copy's read + write traffic).
// Prints one table. Without a usable device it prints "no CUDA device: ..." (the CUDA error's
// name and description) and exits 2; any other CUDA failure exits 1 with the translated error.
// Environment: EREDU_PROBE_COPY_MIB (copy buffer, default 1024), EREDU_PROBE_RUNS (default 10).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
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
  std::printf("(best of %d runs each; decode/prefill tokens/s come once CudaBackend exists)\n",
              runs);
  return 0;
}
