// SPDX-License-Identifier: Apache-2.0
// Device 1: the C++ API and the compat layer (cuda_compat.h) on the second GPU, both
// GPUs partitioned at once, and descriptors that mix pieces of two GPUs refused with a clear
// message. Every test skips, saying so, where the driver sees fewer than 2 GPUs.
#include "gpu_fixture.hpp"

#include <greenctx/cuda_compat.h>
#include <greenctx/greenctx.hpp>
#include <greenctx/measure/verify.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

namespace greenctx::test {
namespace {

class TwoDevices : public ::testing::Test {
protected:
  void SetUp() override {
    try {
      query_driver();
      const int n = device::count();
      if (n < 2)
        GTEST_SKIP() << "needs 2 GPUs: the driver sees " << n;
    } catch (const error &e) {
      GTEST_SKIP() << "needs 2 GPUs: " << e.what();
    }
    context_before_ = current_context();
    gpu0_.emplace(0);
    gpu1_.emplace(1);
  }
  void TearDown() override {
    if (!gpu0_)
      return;
    gpu1_.reset();
    gpu0_.reset();
    EXPECT_EQ(current_context(), context_before_)
        << "the test changed the thread's current context";
  }
  device &gpu0() { return *gpu0_; }
  device &gpu1() { return *gpu1_; }

  // The SMs a %smid probe of `blocks` blocks used on `s` (a stream of a context of `dev`).
  static std::set<unsigned> probe(const device &dev, stream_ref s, unsigned blocks = 4000) {
    const sm_probe p(dev, blocks);
    p.launch(s);
    s.synchronize();
    const auto used = p.sms_used();
    return {used.begin(), used.end()};
  }

private:
  std::optional<device> gpu0_, gpu1_;
  CUcontext context_before_ = nullptr;
};

bool disjoint(const std::set<unsigned> &a, const std::set<unsigned> &b) {
  return std::none_of(a.begin(), a.end(), [&](unsigned x) { return b.count(x) > 0; });
}

TEST_F(TwoDevices, SplitContextsStreamsAndEventsOnDevice1) {
  EXPECT_EQ(gpu1().ordinal(), 1);
  const auto set = partition_set::create(gpu1(), parse_partition_request("16,rest"));
  ASSERT_EQ(set.parts().size(), 2u);
  const auto &small = set.parts()[0].context;
  const auto &rest = set.parts()[1].context;
  EXPECT_EQ(small.device(), gpu1().primary_context().device());
  EXPECT_GE(set.parts()[0].obtained(), 16u);
  EXPECT_EQ(set.parts()[0].obtained() + set.parts()[1].obtained(), gpu1().sms().sm_count());

  stream a = small.create_stream(stream_flags::non_blocking);
  stream b = rest.create_stream(stream_flags::non_blocking);
  EXPECT_EQ(a.context().device(), gpu1().primary_context().device());
  EXPECT_EQ(a.sms().sm_count(), set.parts()[0].obtained());
  const auto on_small = probe(gpu1(), a, 2000);
  const auto on_rest = probe(gpu1(), b, 8000);
  EXPECT_EQ(on_small.size(), set.parts()[0].obtained()); // as on device 0 (test_confinement)
  EXPECT_EQ(on_rest.size(), set.parts()[1].obtained());
  EXPECT_TRUE(disjoint(on_small, on_rest)) << "the partitions of GPU 1 shared an SM";

  // An event of GPU 1 orders one partition's work after the other's.
  event done(small);
  done.record(a);
  rest.wait(done);
  rest.synchronize();
  EXPECT_TRUE(done.ready());
}

TEST_F(TwoDevices, BothDevicesPartitionedAtOnce) {
  const auto set0 = partition_set::create(gpu0(), parse_partition_request("16,rest"));
  const auto set1 = partition_set::create(gpu1(), parse_partition_request("32,rest"));
  stream s0 = set0.parts()[0].context.create_stream(stream_flags::non_blocking);
  stream s1 = set1.parts()[0].context.create_stream(stream_flags::non_blocking);
  const sm_probe p0(gpu0(), 4000), p1(gpu1(), 4000);
  p0.launch(s0); // both queued before either is waited for
  p1.launch(s1);
  s0.synchronize();
  s1.synchronize();
  const auto used0 = p0.sms_used();
  const auto used1 = p1.sms_used();
  EXPECT_EQ(std::set<unsigned>(used0.begin(), used0.end()).size(), set0.parts()[0].obtained());
  EXPECT_EQ(std::set<unsigned>(used1.begin(), used1.end()).size(), set1.parts()[0].obtained());
  EXPECT_GT(set1.parts()[0].obtained(), set0.parts()[0].obtained());
}

TEST_F(TwoDevices, DescriptorFromTwoDevicesIsRefused) {
  const split_result a = split_by_count(gpu0().sms(), 1, 16);
  const split_result b = split_by_count(gpu1().sms(), 1, 16);
  const std::vector<sm_resource> mixed = {a.groups[0], b.groups[0]};
  try {
    (void)descriptor::from(mixed);
    ADD_FAILURE() << "a descriptor of pieces of GPU 0 and GPU 1 was accepted";
  } catch (const request_error &e) {
    EXPECT_NE(std::string(e.what()).find("another device"), std::string::npos) << e.what();
  }
  // Each device's pieces alone are fine.
  EXPECT_NO_THROW((void)descriptor::from(b.groups[0]));
}

TEST_F(TwoDevices, CompatOnDevice1) {
  cudaDevResource sms{};
  ASSERT_EQ(cudaDeviceGetDevResource(1, &sms, cudaDevResourceTypeSm), cudaSuccess)
      << greenctxGetLastErrorMessage();
  EXPECT_EQ(sms.sm.smCount, gpu1().sms().sm_count());
  cudaDevResource pieces[2]{};
  unsigned n = 1;
  ASSERT_EQ(cudaDevSmResourceSplitByCount(pieces, &n, &sms, &pieces[1], 0, 16), cudaSuccess)
      << greenctxGetLastErrorMessage();
  ASSERT_EQ(n, 1u);
  cudaExecutionContext_t ctx[2]{};
  for (int i = 0; i < 2; ++i) {
    cudaDevResourceDesc_t desc = nullptr;
    ASSERT_EQ(cudaDevResourceGenerateDesc(&desc, &pieces[i], 1), cudaSuccess)
        << greenctxGetLastErrorMessage();
    ASSERT_EQ(cudaGreenCtxCreate(&ctx[i], desc, 1, 0), cudaSuccess)
        << greenctxGetLastErrorMessage();
    int dev = -1;
    EXPECT_EQ(cudaExecutionCtxGetDevice(&dev, ctx[i]), cudaSuccess);
    EXPECT_EQ(dev, 1);
  }
  cudaStream_t s[2]{};
  for (int i = 0; i < 2; ++i)
    ASSERT_EQ(cudaExecutionCtxStreamCreate(&s[i], ctx[i], cudaStreamDefault, 0), cudaSuccess)
        << greenctxGetLastErrorMessage();
  const auto on_small = probe(gpu1(), stream_ref(s[0]), 2000);
  const auto on_rest = probe(gpu1(), stream_ref(s[1]), 8000);
  EXPECT_EQ(on_small.size(), pieces[0].sm.smCount);
  EXPECT_EQ(on_rest.size(), pieces[1].sm.smCount);
  EXPECT_TRUE(disjoint(on_small, on_rest)) << "the compat layer's contexts on GPU 1 shared an SM";

  // Events across the two contexts of GPU 1 (the event is the driver's, as cudart's would be).
  event e(gpu1().primary_context());
  EXPECT_EQ(cudaExecutionCtxRecordEvent(ctx[0], e.native_handle()), cudaSuccess)
      << greenctxGetLastErrorMessage();
  EXPECT_EQ(cudaExecutionCtxWaitEvent(ctx[1], e.native_handle()), cudaSuccess)
      << greenctxGetLastErrorMessage();
  EXPECT_EQ(cudaExecutionCtxSynchronize(ctx[1]), cudaSuccess);
  EXPECT_TRUE(e.ready());
  for (int i = 0; i < 2; ++i) {
    stream::from_native_handle(s[i]); // destroyed here, before its context
    EXPECT_EQ(cudaExecutionCtxDestroy(ctx[i]), cudaSuccess) << greenctxGetLastErrorMessage();
  }
}

TEST_F(TwoDevices, CompatDescriptorFromTwoDevicesIsRefused) {
  cudaDevResource whole[2]{}, piece[2]{};
  for (int d = 0; d < 2; ++d) {
    ASSERT_EQ(cudaDeviceGetDevResource(d, &whole[d], cudaDevResourceTypeSm), cudaSuccess);
    unsigned n = 1;
    ASSERT_EQ(cudaDevSmResourceSplitByCount(&piece[d], &n, &whole[d], nullptr, 0, 16), cudaSuccess)
        << greenctxGetLastErrorMessage();
  }
  cudaDevResourceDesc_t desc = nullptr;
  EXPECT_EQ(cudaDevResourceGenerateDesc(&desc, piece, 2), cudaErrorInvalidResourceConfiguration);
  const std::string why = greenctxGetLastErrorMessage();
  EXPECT_NE(why.find("device 1"), std::string::npos) << why;
  EXPECT_NE(why.find("device 0"), std::string::npos) << why;
  EXPECT_NE(why.find("one device"), std::string::npos) << why;
}

} // namespace
} // namespace greenctx::test
