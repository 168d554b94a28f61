// SPDX-License-Identifier: Apache-2.0
// The compat layer's last error (greenctxGetLastErrorMessage) and GREENCTX_LOG_FILE: recorded where
// a C call returns its code, never when a C++ exception is made.
#include <greenctx/cuda_compat.h>
#include <greenctx/plan/error.hpp>
#include <greenctx/plan/partition_plan.hpp>

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

namespace {

std::string last() {
  return greenctxGetLastErrorMessage();
}

// Fails before the driver is asked, so the test needs no GPU and behaves the same with one.
cudaError_t failing_c_call() {
  return cudaDeviceGetExecutionCtx(nullptr, 0);
}

TEST(LastError, IsKeptPerThreadByTheCompatLayer) {
  ASSERT_EQ(failing_c_call(), cudaErrorInvalidValue);
  const std::string mine = last();
  EXPECT_NE(mine.find("ctx is NULL"), std::string::npos) << mine;
  std::string other = "unset";
  std::thread([&] { other = last(); }).join();
  EXPECT_EQ(other, "") << "another thread saw this thread's error";
}

TEST(LastError, CppExceptionsLeaveItAlone) {
  ASSERT_EQ(failing_c_call(), cudaErrorInvalidValue);
  const std::string before = last();
  // A C++ error made and caught (inside greenctx or by the caller) is not a compat-layer failure.
  EXPECT_THROW(greenctx::parse_partition_request("16,,rest"), greenctx::request_error);
  EXPECT_EQ(last(), before);
  std::string other = "unset";
  std::thread([&] {
    try {
      throw greenctx::error(CUDA_ERROR_INVALID_VALUE, "test", "made on another thread");
    } catch (const greenctx::error &) {
    }
    other = last();
  }).join();
  EXPECT_EQ(other, "");
}

TEST(LastError, IsWrittenToTheLogFileWhenSet) {
  const std::string path = ::testing::TempDir() + "greenctx-log-test.txt";
  std::remove(path.c_str());
  ASSERT_EQ(::setenv("GREENCTX_LOG_FILE", path.c_str(), 1), 0);
  EXPECT_EQ(failing_c_call(), cudaErrorInvalidValue);
  EXPECT_THROW(greenctx::parse_partition_request("abc"),
               greenctx::request_error); // C++: not logged
  ::unsetenv("GREENCTX_LOG_FILE");
  EXPECT_EQ(cudaExecutionCtxSynchronize(nullptr), cudaErrorInvalidValue); // not logged: unset again
  std::ifstream f(path);
  std::stringstream text;
  text << f.rdbuf();
  const std::string log = text.str();
  EXPECT_NE(log.find("[cudaDeviceGetExecutionCtx] CUresult 1: "), std::string::npos) << log;
  EXPECT_NE(log.find("ctx is NULL"), std::string::npos) << log;
  EXPECT_EQ(log.find("'abc'"), std::string::npos) << log;
  EXPECT_EQ(log.find("cudaExecutionCtxSynchronize"), std::string::npos) << log;
  std::remove(path.c_str());
}

} // namespace
