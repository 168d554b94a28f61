// SPDX-License-Identifier: Apache-2.0
// error.hpp: the exception types, version formatting and CUresult names.
#include "greenctx/driver/driver.hpp"
#include "greenctx/plan/error.hpp"

#include "text_checks.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <type_traits>

namespace {

using greenctx_test::contains;

TEST(Error, CarriesCodeApiAndMessage) {
  const greenctx::error e(CUDA_ERROR_INVALID_VALUE, "cuDevSmResourceSplitByCount",
                          "group 1 asks 12 SMs");
  EXPECT_EQ(e.code(), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(e.api(), "cuDevSmResourceSplitByCount");
  EXPECT_STREQ(e.what(), "group 1 asks 12 SMs");
}

TEST(Error, IsCaughtAsRuntimeError) {
  static_assert(std::is_base_of_v<std::runtime_error, greenctx::error>);
  try {
    throw greenctx::error(CUDA_ERROR_OUT_OF_MEMORY, "cuGreenCtxCreate", "out of memory");
  } catch (const std::runtime_error &e) {
    EXPECT_STREQ(e.what(), "out of memory");
    return;
  }
  FAIL() << "not caught as std::runtime_error";
}

TEST(RequestError, IsAGreenctxErrorAndKeepsItsCode) {
  static_assert(std::is_base_of_v<greenctx::error, greenctx::request_error>);
  try {
    throw greenctx::request_error(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION,
                                  "greenctx::plan_partitions", "too many SMs");
  } catch (const greenctx::error &e) {
    EXPECT_EQ(e.code(), CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION);
    EXPECT_EQ(e.api(), "greenctx::plan_partitions");
    EXPECT_STREQ(e.what(), "too many SMs");
    return;
  }
  FAIL() << "not caught as greenctx::error";
}

TEST(UnsupportedError, NamesTheFeatureAndBothVersions) {
  const greenctx::unsupported_error e("cuDevSmResourceSplit", 13010, 12050);
  EXPECT_EQ(e.feature(), "cuDevSmResourceSplit");
  EXPECT_EQ(e.required_version(), 13010);
  EXPECT_EQ(e.driver_version(), 12050);
  EXPECT_NE(e.code(), CUDA_SUCCESS);
  EXPECT_TRUE(contains(e.what(), "cuDevSmResourceSplit"));
  EXPECT_TRUE(contains(e.what(), "13.1"));
  EXPECT_TRUE(contains(e.what(), "12.5"));
}

TEST(UnsupportedError, FormatsWholeVersions) {
  const greenctx::unsupported_error e("sm_partition_info", 13000, 12040);
  EXPECT_TRUE(contains(e.what(), "13.0"));
  EXPECT_TRUE(contains(e.what(), "12.4"));
}

// A driver that reports a version that has the entry point and still lacks it (a stub, a broken
// or partial libcuda): the message says so instead of asking for the version it already is.
TEST(UnsupportedError, NewEnoughDriverWithoutTheEntryPointIsSaidSo) {
  const greenctx::unsupported_error e("cuStreamGetId", 12000, 13000);
  EXPECT_TRUE(contains(e.what(), "the loaded driver (CUDA 13.0) does not provide cuStreamGetId"));
  EXPECT_TRUE(contains(e.what(), "CUDA 12.0 drivers have"));
  EXPECT_FALSE(contains(e.what(), "needs a CUDA 12.0 driver"));
  EXPECT_EQ(e.required_version(), 12000);
}

TEST(UnsupportedError, IsAGreenctxError) {
  static_assert(std::is_base_of_v<greenctx::error, greenctx::unsupported_error>);
  try {
    throw greenctx::unsupported_error("cuGreenCtxGetId", 12090, 12050);
  } catch (const greenctx::error &e) {
    EXPECT_TRUE(contains(e.what(), "12.9"));
    return;
  }
  FAIL() << "not caught as greenctx::error";
}

TEST(FormatCudaVersion, MajorDotMinor) {
  EXPECT_EQ(greenctx::format_cuda_version(12050), "12.5");
  EXPECT_EQ(greenctx::format_cuda_version(13000), "13.0");
  EXPECT_EQ(greenctx::format_cuda_version(13010), "13.1");
  EXPECT_EQ(greenctx::format_cuda_version(12040), "12.4");
  EXPECT_EQ(greenctx::format_cuda_version(12090), "12.9");
}

TEST(FormatCudaVersion, ZeroIsUnknown) {
  EXPECT_EQ(greenctx::format_cuda_version(0), "unknown");
}

TEST(ResultName, NeverThrowsAndIsNeverEmpty) {
  // The driver may or may not load in this process (it is absent on machines without a GPU);
  // either way there is a name: the driver's, or "CUresult N". test_no_driver.cpp pins the latter.
  static_assert(noexcept(greenctx::result_name(CUDA_SUCCESS)));
  EXPECT_FALSE(greenctx::result_name(CUDA_ERROR_INVALID_VALUE).empty());
  EXPECT_FALSE(greenctx::result_name(CUDA_ERROR_NO_DEVICE).empty());
  EXPECT_FALSE(greenctx::result_name(static_cast<CUresult>(123456)).empty());
}

} // namespace
