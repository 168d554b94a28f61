// SPDX-License-Identifier: Apache-2.0
// The no-driver path. ctest runs this binary with GREENCTX_LIBCUDA=/nonexistent/libcuda.so.1, so
// the driver fails to load on every machine, GPU or not. The driver is loaded once per process,
// which is why these tests have a process of their own.
#include "greenctx/core/device.hpp"
#include "greenctx/driver/driver.hpp"
#include "greenctx/plan/error.hpp"
#include "greenctx/plan/granularity.hpp"
#include "greenctx/plan/partition_plan.hpp"

#include "text_checks.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <optional>
#include <string>
#include <unistd.h>

namespace {

using greenctx_test::contains;

constexpr const char *missing_library = "/nonexistent/libcuda.so.1";

class NoDriver : public testing::Test {
protected:
  void SetUp() override {
    const char *path = std::getenv("GREENCTX_LIBCUDA");
    ASSERT_NE(path, nullptr) << "run through ctest, or set GREENCTX_LIBCUDA=" << missing_library;
    ASSERT_STREQ(path, missing_library);
    ASSERT_NE(access(path, F_OK), 0) << path << " exists";
  }
};

// The greenctx::error that `call` throws, or nullopt when it returns.
std::optional<greenctx::error> failure_of(const std::function<void()> &call) {
  try {
    call();
  } catch (const greenctx::error &e) {
    return e;
  }
  return std::nullopt;
}

void expect_no_driver(const std::optional<greenctx::error> &e) {
  ASSERT_TRUE(e.has_value()) << "did not throw";
  EXPECT_EQ(e->code(), CUDA_ERROR_NO_DEVICE);
  EXPECT_TRUE(contains(e->what(), "no NVIDIA driver"));
  EXPECT_TRUE(contains(e->what(), missing_library)); // says what it tried to open
}

TEST_F(NoDriver, QueryDriverThrowsNoDevice) {
  expect_no_driver(failure_of([] { greenctx::query_driver(); }));
}

TEST_F(NoDriver, DeviceCountThrowsNoDevice) {
  expect_no_driver(failure_of([] { greenctx::device::count(); }));
}

TEST_F(NoDriver, OpeningADeviceThrowsNoDevice) {
  expect_no_driver(failure_of([] { greenctx::device dev(0); }));
}

TEST_F(NoDriver, TheFailureIsRememberedAndRepeated) {
  const auto first = failure_of([] { greenctx::query_driver(); });
  const auto second = failure_of([] { greenctx::query_driver(); });
  const auto via_device = failure_of([] { greenctx::device::count(); });
  ASSERT_TRUE(first && second && via_device);
  EXPECT_STREQ(first->what(), second->what());
  EXPECT_STREQ(first->what(), via_device->what());
  EXPECT_EQ(second->code(), CUDA_ERROR_NO_DEVICE);
}

TEST_F(NoDriver, ResultNameFallsBackToTheNumber) {
  EXPECT_EQ(greenctx::result_name(CUDA_ERROR_INVALID_VALUE), "CUresult 1");
  // Asking again after a failed load still answers.
  (void)failure_of([] { greenctx::query_driver(); });
  EXPECT_EQ(greenctx::result_name(CUDA_ERROR_NO_DEVICE), "CUresult 100");
}

TEST_F(NoDriver, PureFunctionsStillWork) {
  EXPECT_EQ(greenctx::round_group_size(12, greenctx::documented_granularity(9, 0)).size, 16u);
  const auto plan = greenctx::plan_partitions(greenctx::parse_partition_request("16,rest"), 132,
                                              greenctx::documented_granularity(9, 0));
  ASSERT_EQ(plan.parts.size(), 2u);
  EXPECT_EQ(plan.parts[1].planned, 116u);
  EXPECT_EQ(greenctx::format_cuda_version(12050), "12.5");
  EXPECT_GE(greenctx::toolkit_version(), 12040);
}

} // namespace
