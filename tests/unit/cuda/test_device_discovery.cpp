// CUDA device discovery returns cleanly on every machine: a list of devices where there is a GPU
// and a driver, a typed "no CUDA device" error where there is not (this is what CI machines
// without a GPU exercise). The assertions about real devices run only where one exists.
#include <gtest/gtest.h>

#ifdef EREDU_HAVE_CUDA_BACKEND
#include <string>

#include "eredu/backends/cuda/device.hpp"

namespace {

TEST(CudaDiscovery, ReturnsDevicesOrATypedNoDeviceError) {
  const auto devices = eredu::cuda::list_devices();
  if (!devices.has_value()) {
    const eredu::Error& e = devices.error();
    EXPECT_EQ(e.code(), eredu::ErrorCode::kCapabilityMissing) << e.what();
    EXPECT_EQ(e.message().rfind("no CUDA device: ", 0), 0u) << e.message();
    EXPECT_NE(e.message().find("cudaError"), std::string::npos) << e.message();
    GTEST_SKIP() << e.message();  // starts "no CUDA device: ..."
  }
  ASSERT_FALSE(devices->empty());
  for (const eredu::cuda::DeviceInfo& d : *devices) {
    SCOPED_TRACE(d.name);
    EXPECT_FALSE(d.name.empty());
    EXPECT_GE(d.compute_capability_major, 3);
    EXPECT_GT(d.multiprocessors, 0);
    EXPECT_GT(d.total_memory_bytes, 0u);
    if (d.free_memory_bytes) {
      EXPECT_LE(*d.free_memory_bytes, d.total_memory_bytes);
    } else {
      EXPECT_FALSE(d.free_memory_unavailable_reason.empty());
    }
  }
}

TEST(CudaDiscovery, RuntimeVersionIsKnownEvenWithoutADriver) {
  const eredu::cuda::RuntimeVersions v = eredu::cuda::runtime_versions();
  EXPECT_GE(v.runtime, 12000) << "cudart reports " << v.runtime;
  EXPECT_GE(v.driver, 0);
}

TEST(CudaDiscovery, RepeatedDiscoveryGivesTheSameOutcome) {
  const auto first = eredu::cuda::list_devices();
  const auto second = eredu::cuda::list_devices();
  ASSERT_EQ(first.has_value(), second.has_value());
  if (!first) {
    EXPECT_EQ(first.error(), second.error());
  } else {
    EXPECT_EQ(first->size(), second->size());
  }
}

}  // namespace
#endif  // EREDU_HAVE_CUDA_BACKEND
