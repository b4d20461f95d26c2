// Every cudaError_t becomes a typed eredu::Error at the backend boundary. These cases need no
// GPU: the translation only reads the runtime's error names and descriptions.
#include <gtest/gtest.h>

#ifdef EREDU_HAVE_CUDA_BACKEND
#include <string>

#include "cuda_error.hpp"

namespace {

using eredu::ErrorCode;
using eredu::cuda::cuda_allocation_error;
using eredu::cuda::cuda_error;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(CudaErrors, OutOfMemoryIsCapacityExhaustedNamingRequestedAndFreeBytes) {
  const eredu::Error e =
      cuda_allocation_error("cudaMalloc", cudaErrorMemoryAllocation, 8589934592ull, 1073741824ull);
  EXPECT_EQ(e.code(), ErrorCode::kCapacityExhausted);
  EXPECT_TRUE(contains(e.message(), "cudaMalloc")) << e.message();
  EXPECT_TRUE(contains(e.message(), "cudaErrorMemoryAllocation")) << e.message();
  EXPECT_TRUE(contains(e.message(), "requested 8589934592 bytes")) << e.message();
  EXPECT_TRUE(contains(e.message(), "1073741824 bytes free")) << e.message();
}

TEST(CudaErrors, OutOfMemoryWithUnknownFreeBytesSaysSo) {
  const eredu::Error e =
      cuda_allocation_error("cudaMallocAsync", cudaErrorMemoryAllocation, 4096, std::nullopt);
  EXPECT_EQ(e.code(), ErrorCode::kCapacityExhausted);
  EXPECT_TRUE(contains(e.message(), "requested 4096 bytes")) << e.message();
  EXPECT_TRUE(contains(e.message(), "free device memory unknown")) << e.message();
}

TEST(CudaErrors, OutOfMemoryWithoutAllocationContextIsStillCapacityExhausted) {
  const eredu::Error e = cuda_error("cudaMemcpy", cudaErrorMemoryAllocation);
  EXPECT_EQ(e.code(), ErrorCode::kCapacityExhausted);
}

TEST(CudaErrors, NoDeviceIsAMissingCapability) {
  const eredu::Error e = cuda_error("cudaGetDeviceCount", cudaErrorNoDevice);
  EXPECT_EQ(e.code(), ErrorCode::kCapabilityMissing);
  EXPECT_TRUE(contains(e.message(), "no CUDA device: ")) << e.message();
  EXPECT_TRUE(contains(e.message(), "cudaGetDeviceCount")) << e.message();
  EXPECT_TRUE(contains(e.message(), "cudaErrorNoDevice")) << e.message();
}

TEST(CudaErrors, InsufficientDriverIsAMissingCapabilityNamingTheDriver) {
  const eredu::Error e = cuda_error("cudaGetDeviceCount", cudaErrorInsufficientDriver);
  EXPECT_EQ(e.code(), ErrorCode::kCapabilityMissing);
  EXPECT_TRUE(contains(e.message(), "cudaErrorInsufficientDriver")) << e.message();
  EXPECT_TRUE(contains(e.message(), "driver")) << e.message();
}

TEST(CudaErrors, ALaunchErrorIsABackendErrorNamingTheOperationAndTheError) {
  const eredu::Error e = cuda_error("dequantize kernel launch", cudaErrorLaunchOutOfResources);
  EXPECT_EQ(e.code(), ErrorCode::kBackend);
  EXPECT_TRUE(contains(e.message(), "dequantize kernel launch")) << e.message();
  EXPECT_TRUE(contains(e.message(), "cudaErrorLaunchOutOfResources")) << e.message();
}

TEST(CudaErrors, AStickyErrorSaysTheContextIsLost) {
  const eredu::Error e = cuda_error("cudaStreamSynchronize", cudaErrorIllegalAddress);
  EXPECT_EQ(e.code(), ErrorCode::kBackend);
  EXPECT_TRUE(contains(e.message(), "cudaErrorIllegalAddress")) << e.message();
  EXPECT_TRUE(contains(e.message(), "unusable")) << e.message();
}

TEST(CudaErrors, AllocationContextDoesNotChangeOtherErrors) {
  const eredu::Error e = cuda_allocation_error("cudaMalloc", cudaErrorInvalidValue, 16, 32);
  EXPECT_EQ(e.code(), ErrorCode::kBackend);
  EXPECT_TRUE(contains(e.message(), "cudaErrorInvalidValue")) << e.message();
}

}  // namespace
#endif  // EREDU_HAVE_CUDA_BACKEND
