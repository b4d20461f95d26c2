// plan::device_ordinal: the index of a device backend's id "<backend>:<index>", and nothing for an
// id of another backend, without digits, with anything after them, or past the cap.
#include <gtest/gtest.h>

#include "eredu/plan/backend_plan_checks.hpp"

namespace {

using eredu::plan::device_ordinal;

TEST(DeviceOrdinal, ReadsTheIndexOfThisBackendsIds) {
  EXPECT_EQ(device_ordinal("cuda:0", "cuda"), 0u);
  EXPECT_EQ(device_ordinal("cuda:17", "cuda"), 17u);
  EXPECT_EQ(device_ordinal("vulkan:3", "vulkan"), 3u);
}

TEST(DeviceOrdinal, RejectsOtherBackendsAndMalformedIds) {
  EXPECT_FALSE(device_ordinal("vulkan:0", "cuda"));
  EXPECT_FALSE(device_ordinal("cuda", "cuda"));
  EXPECT_FALSE(device_ordinal("cuda:", "cuda"));
  EXPECT_FALSE(device_ordinal("cudax0", "cuda"));
  EXPECT_FALSE(device_ordinal("cuda:1a", "cuda"));
  EXPECT_FALSE(device_ordinal("cuda:-1", "cuda"));
  EXPECT_FALSE(device_ordinal("cu:0", "cuda"));
  EXPECT_FALSE(device_ordinal("cuda:99999999", "cuda"));
}

}  // namespace
