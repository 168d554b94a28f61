// SPDX-License-Identifier: Apache-2.0
// The 13.1 runtime-API layer without a driver (same process rules as test_no_driver.cpp): every
// call returns a code and leaves an explanation; checks that need no driver still run first.
#include <greenctx/cuda_compat.h>

#include <gtest/gtest.h>

#include <string>

namespace {

std::string last() {
  return greenctxGetLastErrorMessage();
}

TEST(CompatNoDriver, device_queries_say_there_is_no_driver) {
  cudaDevResource r{};
  EXPECT_EQ(cudaDeviceGetDevResource(0, &r, cudaDevResourceTypeSm), cudaErrorNoDevice);
  EXPECT_NE(last().find("no NVIDIA driver"), std::string::npos) << last();
  cudaExecutionContext_t ctx = nullptr;
  EXPECT_EQ(cudaDeviceGetExecutionCtx(&ctx, 0), cudaErrorNoDevice);
  EXPECT_EQ(ctx, nullptr);
}

TEST(CompatNoDriver, null_arguments_are_invalid_values) {
  EXPECT_EQ(cudaDeviceGetExecutionCtx(nullptr, 0), cudaErrorInvalidValue);
  EXPECT_NE(last().find("ctx is NULL"), std::string::npos) << last();
  EXPECT_EQ(cudaExecutionCtxSynchronize(nullptr), cudaErrorInvalidValue);
  EXPECT_EQ(cudaGreenCtxCreate(nullptr, nullptr, 0, 0), cudaErrorInvalidValue);
  unsigned n = 1;
  EXPECT_EQ(cudaDevSmResourceSplitByCount(nullptr, &n, nullptr, nullptr, 0, 8),
            cudaErrorInvalidValue);
  EXPECT_EQ(cudaDevResourceGenerateDesc(nullptr, nullptr, 1), cudaErrorInvalidValue);
}

// Handles are checked by value before anything is read through them: a stray pointer is refused
// with the reason, not followed (fuzz_compat crashed here when the descriptor was read first).
TEST(CompatNoDriver, stray_handles_are_refused_without_being_read) {
  const auto stray_desc = reinterpret_cast<cudaDevResourceDesc_t>(0x40);
  cudaExecutionContext_t ctx = nullptr;
  EXPECT_EQ(cudaGreenCtxCreate(&ctx, stray_desc, 0, 0), cudaErrorInvalidValue);
  EXPECT_NE(last().find("not made by greenctx"), std::string::npos) << last();
  EXPECT_EQ(ctx, nullptr);
  const auto stray_ctx = reinterpret_cast<cudaExecutionContext_t>(0x40);
  EXPECT_EQ(cudaExecutionCtxDestroy(stray_ctx), cudaErrorInvalidResourceHandle);
  EXPECT_NE(last().find("not an execution context made by greenctx"), std::string::npos) << last();
  EXPECT_EQ(cudaExecutionCtxSynchronize(stray_ctx), cudaErrorInvalidResourceHandle);
  int device = -1;
  EXPECT_EQ(cudaExecutionCtxGetDevice(&device, stray_ctx), cudaErrorInvalidResourceHandle);
  EXPECT_EQ(device, -1);
}

TEST(CompatNoDriver, resources_not_made_by_greenctx_are_refused) {
  cudaDevResource made_by_hand{};
  made_by_hand.type = cudaDevResourceTypeSm;
  made_by_hand.sm.smCount = 16;
  cudaDevResourceDesc_t desc = nullptr;
  EXPECT_EQ(cudaDevResourceGenerateDesc(&desc, &made_by_hand, 1),
            cudaErrorInvalidResourceConfiguration);
  EXPECT_NE(last().find("not filled in by greenctx"), std::string::npos) << last();
  made_by_hand.type = static_cast<cudaDevResourceType>(3);
  EXPECT_EQ(cudaDevResourceGenerateDesc(&desc, &made_by_hand, 1), cudaErrorInvalidResourceType);
  unsigned n = 1;
  cudaDevResource out{};
  EXPECT_EQ(cudaDevSmResourceSplitByCount(&out, &n, &made_by_hand, nullptr, 0, 8),
            cudaErrorInvalidResourceType);
}

TEST(CompatNoDriver, split_arguments_are_checked_before_the_driver) {
  cudaDevResource in{}, out[2];
  cudaDevSmResourceGroupParams p[1] = {};
  p[0].smCount = 16;
  EXPECT_EQ(cudaDevSmResourceSplit(out, 0, &in, nullptr, 0, p), cudaErrorInvalidValue);
  EXPECT_EQ(cudaDevSmResourceSplit(out, 1, &in, nullptr, 2, p), cudaErrorInvalidValue);
  EXPECT_NE(last().find("flags"), std::string::npos) << last();
  p[0].reserved[3] = 1;
  EXPECT_EQ(cudaDevSmResourceSplit(out, 1, &in, nullptr, 0, p), cudaErrorInvalidValue);
  EXPECT_NE(last().find("reserved"), std::string::npos) << last();
}

TEST(CompatNoDriver, work_queue_resources_follow_the_descriptor_rules) {
  cudaDevResource wq[2] = {};
  for (auto &r : wq) {
    r.type = cudaDevResourceTypeWorkqueueConfig;
    r.wqConfig.wqConcurrencyLimit = 4;
  }
  cudaDevResourceDesc_t desc = nullptr;
  EXPECT_EQ(cudaDevResourceGenerateDesc(&desc, wq, 2), cudaErrorInvalidResourceConfiguration);
  EXPECT_NE(last().find("at most one"), std::string::npos) << last();
  wq[0].wqConfig.sharingScope = static_cast<cudaDevWorkqueueConfigScope>(9);
  EXPECT_EQ(cudaDevResourceGenerateDesc(&desc, wq, 1), cudaErrorInvalidResourceConfiguration);
  wq[0].wqConfig.sharingScope = cudaDevWorkqueueConfigScopeGreenCtxBalanced;
  wq[0].wqConfig.wqConcurrencyLimit = 0;
  EXPECT_EQ(cudaDevResourceGenerateDesc(&desc, wq, 1), cudaErrorInvalidResourceConfiguration);
  wq[0].wqConfig.wqConcurrencyLimit = 4;
  EXPECT_EQ(cudaDevResourceGenerateDesc(&desc, wq, 1), cudaSuccess) << last();
  EXPECT_STREQ(greenctxGetLastErrorMessage(), "") << "a success clears the explanation";
}

} // namespace
