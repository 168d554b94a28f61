// SPDX-License-Identifier: Apache-2.0
// The 13.1 runtime-API layer over the tests' fake driver (tests/preload/fake_cuda.cpp: two GPUs
// of 132 SMs in units of 8), in a process of its own pointed at it: what can be made without a
// GPU is made, and resources changed by the caller are refused with the reason. fuzz_compat_fake
// (tests/sanitize) runs the same layer over the same driver with random call sequences; the cases
// it found are here.
#include <greenctx/cuda_compat.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>

namespace {

std::string last() {
  return greenctxGetLastErrorMessage();
}

cudaDevResource device_sms(int device = 0) {
  cudaDevResource r{};
  EXPECT_EQ(cudaDeviceGetDevResource(device, &r, cudaDevResourceTypeSm), cudaSuccess) << last();
  return r;
}

TEST(CompatFakeDriver, split_describe_create_and_destroy) {
  const cudaDevResource all = device_sms();
  EXPECT_EQ(all.sm.smCount, 132u);
  cudaDevResource groups[2], rest;
  unsigned n = 2;
  ASSERT_EQ(cudaDevSmResourceSplitByCount(groups, &n, &all, &rest, 0, 16), cudaSuccess) << last();
  ASSERT_EQ(n, 2u);
  EXPECT_EQ(groups[0].sm.smCount, 16u);
  EXPECT_EQ(rest.sm.smCount, 132u - 32u);
  cudaDevResourceDesc_t desc = nullptr;
  ASSERT_EQ(cudaDevResourceGenerateDesc(&desc, groups, 1), cudaSuccess) << last();
  cudaExecutionContext_t ctx = nullptr;
  ASSERT_EQ(cudaGreenCtxCreate(&ctx, desc, 0, 0), cudaSuccess) << last();
  cudaDevResource got{};
  ASSERT_EQ(cudaExecutionCtxGetDevResource(ctx, &got, cudaDevResourceTypeSm), cudaSuccess);
  EXPECT_EQ(got.sm.smCount, 16u);
  cudaStream_t s = nullptr;
  ASSERT_EQ(cudaExecutionCtxStreamCreate(&s, ctx, 0, 0), cudaSuccess) << last();
  cudaExecutionContext_t of = nullptr;
  EXPECT_EQ(greenctxStreamGetExecutionCtx(s, &of), cudaSuccess);
  EXPECT_EQ(of, ctx);
  EXPECT_EQ(cudaExecutionCtxSynchronize(ctx), cudaSuccess) << last();
  EXPECT_EQ(cudaExecutionCtxDestroy(ctx), cudaSuccess) << last();
  EXPECT_EQ(greenctxStreamGetExecutionCtx(s, &of), cudaErrorStreamDetached);
  EXPECT_NE(cudaExecutionCtxDestroy(ctx), cudaSuccess) << "destroyed twice";
}

// fuzz_compat_fake: a device resource whose piece mask (greenctx's bookkeeping in the internal
// padding) the caller changed to name no piece was split: splittable_input read the first of no
// pieces (UBSan: reference binding to null). Now it is refused as corrupt, as is a mask naming
// pieces its record does not have.
TEST(CompatFakeDriver, resource_with_a_changed_piece_mask_is_refused) {
  const cudaDevResource all = device_sms();
  // The tag's layout (src/compat/resources.hpp): magic, kind, record, then the 128-bit mask.
  constexpr std::size_t mask_at = 4 + 4 + 8;
  for (const std::uint64_t low : {std::uint64_t{0}, std::uint64_t{3}, std::uint64_t{2}}) {
    cudaDevResource changed = all;
    std::memcpy(changed._internal_padding + mask_at, &low, sizeof low);
    cudaDevResource groups[1];
    unsigned n = 1;
    EXPECT_EQ(cudaDevSmResourceSplitByCount(groups, &n, &changed, nullptr, 0, 8),
              cudaErrorInvalidResourceConfiguration)
        << "mask " << low;
    EXPECT_NE(last().find("input is corrupt"), std::string::npos) << last();
    cudaDevResourceDesc_t desc = nullptr;
    if (low != 0) { // a mask of no piece is an empty resource, refused for having no SMs
      EXPECT_NE(cudaDevResourceGenerateDesc(&desc, &changed, 1), cudaSuccess) << "mask " << low;
      EXPECT_EQ(desc, nullptr);
    }
  }
}

// Every query of a device's resource used to keep a new record (about 210 bytes a call, measured
// over 10^6 calls on the fake driver): the same resource now shares one, so the answers are the
// same bytes and a caller who queries in a loop does not grow greenctx's bookkeeping.
TEST(CompatFakeDriver, repeated_queries_share_their_bookkeeping) {
  const cudaDevResource a = device_sms(), b = device_sms();
  EXPECT_EQ(std::memcmp(&a, &b, sizeof a), 0);
  const cudaDevResource other = device_sms(1);
  EXPECT_NE(std::memcmp(&a, &other, sizeof a), 0) << "another device, another record";
  cudaDevResource group[1];
  unsigned n = 1;
  ASSERT_EQ(cudaDevSmResourceSplitByCount(group, &n, &b, nullptr, 0, 8), cudaSuccess) << last();
  EXPECT_EQ(group[0].sm.smCount, 8u);
}

} // namespace
