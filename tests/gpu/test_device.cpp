// SPDX-License-Identifier: Apache-2.0
// Driver and device queries on a real GPU.
#include "gpu_fixture.hpp"

namespace greenctx::test {
namespace {

class DeviceTest : public gpu_test {};

TEST_F(DeviceTest, driver_has_green_contexts_natively) {
  const driver_info drv = query_driver();
  EXPECT_GE(drv.version, 12040);
  EXPECT_EQ(drv[feature::green_contexts].status, availability::native);
  for (const auto &f : drv.features) {
    if (f.status == availability::native)
      EXPECT_LE(f.introduced, drv.version) << f.name << " is native on an older driver";
  }
}

TEST_F(DeviceTest, names_and_attributes) {
  EXPECT_GE(device::count(), 1);
  EXPECT_FALSE(dev().name().empty());
  const auto [major, minor] = dev().compute_capability();
  EXPECT_GE(major, 7);
  EXPECT_GE(minor, 0);
  EXPECT_EQ(dev().ordinal(), 0);
}

TEST_F(DeviceTest, unknown_ordinal_names_the_valid_range) {
  try {
    device bad(device::count());
    FAIL() << "device(count()) did not throw";
  } catch (const error &e) {
    EXPECT_EQ(e.code(), CUDA_ERROR_INVALID_DEVICE);
    EXPECT_NE(std::string(e.what()).find("GPU"), std::string::npos) << e.what();
  }
}

TEST_F(DeviceTest, sm_resource_matches_attributes) {
  const sm_resource sms = dev().sms();
  EXPECT_EQ(sms.sm_count(),
            static_cast<unsigned>(dev().attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)));
  EXPECT_GT(sms.min_partition_size(), 0u);
  EXPECT_GT(sms.coscheduled_alignment(), 0u);
  if (dev().compute_capability().first >= 9) {
    EXPECT_EQ(sms.min_partition_size(), 8u);
    EXPECT_EQ(sms.coscheduled_alignment(), 8u);
  }
  EXPECT_EQ(sms.device(), dev().native_handle());
  EXPECT_EQ(sms.origin(), 0u);
}

TEST_F(DeviceTest, primary_context_is_an_execution_context) {
  const execution_context_ref primary = dev().primary_context();
  ASSERT_TRUE(primary);
  EXPECT_FALSE(primary.is_green());
  EXPECT_EQ(primary.device(), dev().native_handle());
  EXPECT_EQ(primary.id(), primary.id());
  EXPECT_EQ(primary.sms().sm_count(), dev().sms().sm_count());
}

TEST_F(DeviceTest, priorities_and_memory) {
  const auto [least, greatest] = dev().stream_priority_range();
  EXPECT_LE(greatest, least);
  const auto [free, total] = dev().memory_info();
  EXPECT_GT(total, 0u);
  EXPECT_LE(free, total);
}

TEST_F(DeviceTest, device_moves) {
  device a(0);
  const CUdevice h = a.native_handle();
  device b(std::move(a));
  EXPECT_EQ(b.native_handle(), h);
  EXPECT_EQ(a.ordinal(), -1);
  a = std::move(b);
  EXPECT_EQ(a.native_handle(), h);
  EXPECT_EQ(a.sms().sm_count(), dev().sms().sm_count());
}

} // namespace
} // namespace greenctx::test
