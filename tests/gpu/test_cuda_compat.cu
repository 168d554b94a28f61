// SPDX-License-Identifier: Apache-2.0
// The CUDA 13.1 execution-context runtime API (greenctx/cuda_compat.h) used as the 13.1 guide
// uses it: runtime calls, <<<>>> launches on green streams, events, graphs, clusters. Written for
// this project from the guide's descriptions (spec sections 2-5), checked with %smid.
#include <greenctx/cuda_compat.h>

#include <cuda_runtime.h>

#include "compat_check.cuh"
#include "smid_kernels.cuh"
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <set>
#include <string>
#include <climits>
#include <vector>

namespace {

using greenctx_test::record_smid;
using greenctx_test::sms_used;
using greenctx_test::timed_spin;

__global__ void cluster_kernel() {
}

class CudaCompat : public ::testing::Test {
protected:
  void SetUp() override {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0)
      GTEST_SKIP() << "no CUDA GPU or driver: " << cudaGetErrorString(cudaGetDeviceCount(&n));
    CHECK_CUDA(cudaSetDevice(0)); // initialises the primary context, as the guide advises
    CHECK_CUDA(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, 0));
    CHECK_CUDA(cudaDeviceGetDevResource(0, &device_sms, cudaDevResourceTypeSm));
  }

  // Splits the device by group parameters, returning the groups (and the remainder last).
  std::vector<cudaDevResource> split(std::vector<cudaDevSmResourceGroupParams> &params,
                                     cudaError_t expect = cudaSuccess) {
    std::vector<cudaDevResource> out(params.size() + 1);
    const cudaError_t rc = cudaDevSmResourceSplit(out.data(), static_cast<unsigned>(params.size()),
                                                  &device_sms, &out.back(), 0, params.data());
    EXPECT_EQ(rc, expect) << cudaGetErrorName(rc) << ": " << greenctxGetLastErrorMessage();
    return out;
  }

  cudaExecutionContext_t make_context(cudaDevResource *pieces, unsigned n,
                                      cudaError_t expect = cudaSuccess) {
    cudaDevResourceDesc_t desc = nullptr;
    cudaExecutionContext_t ctx = nullptr;
    EXPECT_EQ(cudaDevResourceGenerateDesc(&desc, pieces, n), cudaSuccess)
        << greenctxGetLastErrorMessage();
    const cudaError_t rc = cudaGreenCtxCreate(&ctx, desc, 0, 0);
    EXPECT_EQ(rc, expect) << cudaGetErrorName(rc) << ": " << greenctxGetLastErrorMessage();
    return ctx;
  }

  cudaStream_t make_stream(cudaExecutionContext_t ctx, int priority = 0) {
    cudaStream_t s = nullptr;
    EXPECT_EQ(cudaExecutionCtxStreamCreate(&s, ctx, cudaStreamDefault, priority), cudaSuccess)
        << greenctxGetLastErrorMessage();
    return s;
  }

  unsigned context_sms(cudaExecutionContext_t ctx) {
    cudaDevResource r{};
    EXPECT_EQ(cudaExecutionCtxGetDevResource(ctx, &r, cudaDevResourceTypeSm), cudaSuccess);
    return r.sm.smCount;
  }

  static cudaDevSmResourceGroupParams group(unsigned n, unsigned c, unsigned pref, unsigned flags) {
    cudaDevSmResourceGroupParams p{};
    p.smCount = n;
    p.coscheduledSmCount = c;
    p.preferredCoscheduledSmCount = pref;
    p.flags = flags;
    return p;
  }

  int sm_count = 0;
  cudaDevResource device_sms{};
};

// ---- resources ---------------------------------------------------------------------------------

TEST_F(CudaCompat, device_resources_describe_the_whole_gpu) {
  EXPECT_EQ(device_sms.type, cudaDevResourceTypeSm);
  EXPECT_EQ(device_sms.sm.smCount, static_cast<unsigned>(sm_count));
  int major = 0;
  CHECK_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
  if (major >= 9) {
    EXPECT_EQ(device_sms.sm.minSmPartitionSize, 8u);
    EXPECT_EQ(device_sms.sm.smCoscheduledAlignment, 8u);
  }
  cudaDevResource wq{};
  CHECK_CUDA(cudaDeviceGetDevResource(0, &wq, cudaDevResourceTypeWorkqueueConfig));
  EXPECT_EQ(wq.type, cudaDevResourceTypeWorkqueueConfig);
  const char *env = std::getenv("CUDA_DEVICE_MAX_CONNECTIONS");
  EXPECT_EQ(wq.wqConfig.wqConcurrencyLimit, env ? std::strtoul(env, nullptr, 10) : 8u);
  EXPECT_EQ(wq.wqConfig.sharingScope, cudaDevWorkqueueConfigScopeDeviceCtx);
  EXPECT_EQ(wq.wqConfig.device, 0);
  cudaDevResource queues{};
  CHECK_CUDA(cudaDeviceGetDevResource(0, &queues, cudaDevResourceTypeWorkqueue));
  EXPECT_EQ(queues.type, cudaDevResourceTypeWorkqueue);
  cudaDevResource bad{};
  EXPECT_EQ(cudaDeviceGetDevResource(0, &bad, static_cast<cudaDevResourceType>(7)),
            cudaErrorInvalidResourceType);
  if (greenctx_test::explained())
    EXPECT_NE(std::string(greenctxGetLastErrorMessage()).find("resource type 7"),
              std::string::npos);
  EXPECT_EQ(cudaDeviceGetDevResource(99, &bad, cudaDevResourceTypeSm), cudaErrorInvalidDevice);
}

// Spec section 3's split-by-count rows (the guide's, on a 132-SM part).
TEST_F(CudaCompat, split_by_count_rows_of_the_guide) {
  if (sm_count != 132)
    GTEST_SKIP() << "the rows are for 132 SMs; this GPU has " << sm_count;
  struct row {
    unsigned groups, min, flags, got, size, left;
  };
  for (const row r : {row{2, 72, 0, 1, 72, 60}, row{6, 11, 0, 6, 16, 36},
                      row{6, 11, cudaDevSmResourceSplitIgnoreSmCoscheduling, 6, 12, 60},
                      row{2, 1, 0, 2, 8, 116}}) {
    SCOPED_TRACE(std::to_string(r.groups) + " groups of >= " + std::to_string(r.min));
    std::vector<cudaDevResource> out(r.groups);
    cudaDevResource rest{};
    unsigned n = r.groups;
    CHECK_CUDA(cudaDevSmResourceSplitByCount(out.data(), &n, &device_sms, &rest, r.flags, r.min));
    EXPECT_EQ(n, r.got);
    EXPECT_EQ(out[0].sm.smCount, r.size);
    EXPECT_EQ(rest.sm.smCount, r.left);
  }
  unsigned count = 0;
  CHECK_CUDA(cudaDevSmResourceSplitByCount(nullptr, &count, &device_sms, nullptr, 0, 8));
  EXPECT_EQ(count, 15u) << "the count-only query (measured: 15 groups of 8, not 16)";
  // *nbGroups is an upper bound: UINT_MAX asks for as many as fit (it used to
  // allocate UINT_MAX descriptors and fail, or be killed without a memory limit).
  std::vector<cudaDevResource> many(sm_count);
  unsigned most = UINT_MAX;
  CHECK_CUDA(cudaDevSmResourceSplitByCount(many.data(), &most, &device_sms, nullptr, 0, 8));
  EXPECT_EQ(most, 15u);
  unsigned n = 1;
  cudaDevResource one{};
  EXPECT_EQ(cudaDevSmResourceSplitByCount(&one, &n, &device_sms, nullptr, 0, 133),
            cudaErrorInvalidResourceConfiguration);
  EXPECT_EQ(cudaDevSmResourceSplitByCount(&one, &n, &device_sms, nullptr, 4, 8),
            cudaErrorInvalidValue);
}

// The guide's 16 + 8 example: two green contexts on disjoint SMs, kernels launched with <<<>>>.
TEST_F(CudaCompat, sixteen_and_eight_sms_run_on_disjoint_sms) {
  std::vector<cudaDevSmResourceGroupParams> params{group(16, 0, 0, 0), group(8, 0, 0, 0)};
  auto res = split(params);
  ASSERT_EQ(res[0].sm.smCount, 16u);
  ASSERT_EQ(res[1].sm.smCount, 8u);
  EXPECT_EQ(res[2].sm.smCount, static_cast<unsigned>(sm_count - 24));
  cudaExecutionContext_t big = make_context(&res[0], 1), small = make_context(&res[1], 1);
  ASSERT_TRUE(big && small);
  EXPECT_EQ(context_sms(big), 16u);
  EXPECT_EQ(context_sms(small), 8u);
  const auto a = sms_used(make_stream(big)), b = sms_used(make_stream(small));
  EXPECT_EQ(a.size(), 16u);
  EXPECT_EQ(b.size(), 8u);
  for (unsigned sm : b)
    EXPECT_EQ(a.count(sm), 0u) << "SM " << sm << " used by both";
  // The two groups of one split make one 24-SM context too.
  cudaExecutionContext_t both = make_context(&res[0], 2);
  EXPECT_EQ(context_sms(both), 24u);
  EXPECT_EQ(sms_used(make_stream(both)).size(), 24u);
}

// Spec section 3's group-parameter examples, on the GPU.
TEST_F(CudaCompat, group_parameter_examples_of_the_guide) {
  if (sm_count != 132)
    GTEST_SKIP() << "the expected sizes are for 132 SMs; this GPU has " << sm_count;
  {
    std::vector<cudaDevSmResourceGroupParams> p{group(16, 0, 0, 0)};
    auto r = split(p);
    EXPECT_EQ(r[0].sm.smCount, 16u);
    EXPECT_EQ(p[0].coscheduledSmCount, 8u) << "the default is written back";
    EXPECT_EQ(p[0].preferredCoscheduledSmCount, 8u);
    EXPECT_EQ(r[1].sm.smCount, 116u);
  }
  {
    std::vector<cudaDevSmResourceGroupParams> p{group(16, 2, 2, 0),
                                                group(0, 2, 2, cudaDevSmResourceGroupBackfill)};
    auto r = split(p);
    EXPECT_EQ(r[0].sm.smCount, 16u);
    EXPECT_EQ(r[1].sm.smCount, 116u);
    EXPECT_EQ(p[1].smCount, 116u) << "discovery writes the count back";
    EXPECT_EQ(r[2].sm.smCount, 0u);
    cudaExecutionContext_t rest = make_context(&r[1], 1);
    EXPECT_EQ(sms_used(make_stream(rest), 8000).size(), 116u);
  }
  {
    std::vector<cudaDevSmResourceGroupParams> p{group(0, 8, 8, 0)};
    auto r = split(p);
    EXPECT_EQ(p[0].smCount, 120u);
    EXPECT_EQ(r[1].sm.smCount, 12u);
  }
  {
    std::vector<cudaDevSmResourceGroupParams> p{group(8, 2, 2, 0), group(0, 4, 4, 0)};
    auto r = split(p);
    EXPECT_EQ(r[0].sm.smCount, 8u);
    EXPECT_EQ(p[1].smCount, 112u);
    EXPECT_EQ(r[2].sm.smCount, 12u);
  }
  {
    // Dry run: result NULL only updates the parameters.
    std::vector<cudaDevSmResourceGroupParams> p{group(0, 8, 8, 0), group(0, 8, 8, 0)};
    CHECK_CUDA(cudaDevSmResourceSplit(nullptr, 2, &device_sms, nullptr, 0, p.data()));
    EXPECT_EQ(p[0].smCount, 120u);
    EXPECT_EQ(p[1].smCount, 0u) << "a dry run may succeed with a 0 count";
    std::vector<cudaDevSmResourceGroupParams> again{group(0, 8, 8, 0), group(0, 8, 8, 0)};
    split(again, cudaErrorInvalidResourceConfiguration); // no group is ever empty
  }
}

// Clusters of 4 from 28 and 32 SMs (the guide's table of use cases): below 13.1 these come from
// IgnoreSmCoscheduling pieces of 4, whose clusters no driver promise backs. 13.1's contract is that
// the split succeeds only when every group meets its requirements, so the split proves them: it
// either succeeds and every group runs its clusters, or it refuses with the
// measured counts and advice. Repeating the split costs no new context (the proof is cached).
TEST_F(CudaCompat, clusters_of_four_are_proved_at_the_split) {
  std::vector<cudaDevSmResourceGroupParams> p{group(28, 4, 4, 0), group(32, 4, 4, 0)};
  std::vector<cudaDevResource> r(3);
  const cudaError_t rc = cudaDevSmResourceSplit(r.data(), 2, &device_sms, &r[2], 0, p.data());
  const std::string why = greenctxGetLastErrorMessage();
  std::printf("[ info     ] {28, 4, 4}, {32, 4, 4}: %s %s\n", cudaGetErrorName(rc), why.c_str());
  if (rc != cudaSuccess) {
    EXPECT_EQ(rc, cudaErrorInvalidResourceConfiguration);
    if (greenctx_test::explained()) {
      EXPECT_NE(why.find("clusters of 4 SMs at once, not the"), std::string::npos) << why;
      EXPECT_NE(why.find("Advice: "), std::string::npos) << why;
    }
    if (sm_count == 132 && greenctx_test::explained())
      EXPECT_NE(why.find("{32 cosched 4, 32 cosched 4}"), std::string::npos) << why;
    size_t free_before = 0, free_after = 0, total = 0;
    CHECK_CUDA(cudaMemGetInfo(&free_before, &total));
    for (int i = 0; i < 20; ++i) {
      std::vector<cudaDevSmResourceGroupParams> again{group(28, 4, 4, 0), group(32, 4, 4, 0)};
      EXPECT_EQ(cudaDevSmResourceSplit(r.data(), 2, &device_sms, &r[2], 0, again.data()),
                cudaErrorInvalidResourceConfiguration);
    }
    CHECK_CUDA(cudaMemGetInfo(&free_after, &total));
    const double grew_mib = (double(free_before) - double(free_after)) / (1 << 20);
    std::printf("[ info     ] 20 more refused splits: device memory grew %.1f MiB\n", grew_mib);
    EXPECT_LT(grew_mib, 4.0) << "a green context per split call";
    return;
  }
  ASSERT_EQ(r[0].sm.smCount, 28u);
  ASSERT_EQ(r[1].sm.smCount, 32u);
  for (int i = 0; i < 2; ++i) {
    // Made: the context is created and the runtime's occupancy calculator agrees.
    cudaExecutionContext_t ctx = make_context(&r[i], 1);
    cudaLaunchConfig_t config{};
    cudaLaunchAttribute attr{};
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = 4;
    attr.val.clusterDim.y = attr.val.clusterDim.z = 1;
    config.gridDim = dim3(4);
    config.blockDim = dim3(32);
    config.stream = make_stream(ctx);
    config.attrs = &attr;
    config.numAttrs = 1;
    int clusters = 0;
    CHECK_CUDA(cudaOccupancyMaxActiveClusters(&clusters, cluster_kernel, &config));
    EXPECT_GE(clusters, 1);
  }
}

// {112, 16} with clusters of 2: 128 SMs in units of 2 fit on the 132-SM H200,
// though 15 co-scheduled units of 8 do not. The groups are disjoint on the hardware.
TEST_F(CudaCompat, groups_of_112_and_16_for_clusters_of_2_are_disjoint) {
  if (sm_count != 132)
    GTEST_SKIP() << "the case is the H200's 132 SMs; this GPU has " << sm_count;
  std::vector<cudaDevSmResourceGroupParams> p{group(112, 2, 2, 0), group(16, 2, 2, 0)};
  auto r = split(p);
  ASSERT_EQ(r[0].sm.smCount, 112u) << greenctxGetLastErrorMessage();
  ASSERT_EQ(r[1].sm.smCount, 16u);
  const auto big = sms_used(make_stream(make_context(&r[0], 1)), 8000);
  const auto small = sms_used(make_stream(make_context(&r[1], 1)), 8000);
  EXPECT_EQ(big.size(), 112u);
  EXPECT_EQ(small.size(), 16u);
  for (unsigned sm : small)
    EXPECT_EQ(big.count(sm), 0u) << "SM " << sm << " is in both groups";
}

// A group proved at the split becomes a context without a second green context: the context
// made for the proof is the one cudaGreenCtxCreate hands out (device memory: a green context holds
// about 5 MiB on driver 580, so two new contexts would take about 10 MiB).
TEST_F(CudaCompat, a_proved_group_becomes_its_context_without_another) {
  if (sm_count != 132)
    GTEST_SKIP() << "the case is the H200's 132 SMs; this GPU has " << sm_count;
  // {80, 48} with clusters of 2: pieces of 8 reach 120 SMs only, so the groups are made of pieces
  // of 16 and proved (no other test of this process splits them).
  std::vector<cudaDevSmResourceGroupParams> p{group(80, 2, 2, 0), group(48, 2, 2, 0)};
  auto r = split(p);
  ASSERT_EQ(r[0].sm.smCount, 80u) << greenctxGetLastErrorMessage();
  size_t free_before = 0, free_after = 0, total = 0;
  CHECK_CUDA(cudaMemGetInfo(&free_before, &total));
  cudaExecutionContext_t big = make_context(&r[0], 1);
  cudaExecutionContext_t small = make_context(&r[1], 1);
  CHECK_CUDA(cudaMemGetInfo(&free_after, &total));
  const double grew_mib = (double(free_before) - double(free_after)) / (1 << 20);
  std::printf("[ info     ] two contexts of proved groups took %.1f MiB\n", grew_mib);
  EXPECT_LT(grew_mib, 4.0);
  EXPECT_EQ(sms_used(make_stream(big), 8000).size(), 80u);
  EXPECT_EQ(sms_used(make_stream(small), 8000).size(), 48u);
}

// The guide's {112, 16} with default co-scheduling, written for an H100: on
// the H200 it cannot be made, and the refusal says why and names requests that work here; each
// of them is then made.
TEST_F(CudaCompat, the_guides_h100_split_is_refused_with_advice_that_works) {
  if (sm_count != 132)
    GTEST_SKIP() << "the advice checked is the H200's; this GPU has " << sm_count;
  std::vector<cudaDevSmResourceGroupParams> p{group(112, 0, 0, 0), group(16, 0, 0, 0)};
  split(p, cudaErrorInvalidResourceConfiguration);
  const std::string why = greenctxGetLastErrorMessage();
  std::printf("[ info     ] {112}, {16}: %s\n", why.c_str());
  for (const char *part : {"15 co-scheduled units of 8 SMs (120 SMs) and 12 SMs outside whole",
                           "{104, 16}", "{112 Backfill, 16}", "{112 cosched 2, 16 cosched 2}"})
    if (greenctx_test::explained())
      EXPECT_NE(why.find(part), std::string::npos) << part;
  std::vector<std::vector<cudaDevSmResourceGroupParams>> advised{
      {group(104, 0, 0, 0), group(16, 0, 0, 0)},
      {group(112, 0, 0, cudaDevSmResourceGroupBackfill), group(16, 0, 0, 0)},
      {group(112, 2, 2, 0), group(16, 2, 2, 0)}};
  for (auto &a : advised) {
    auto r = split(a);
    EXPECT_GE(r[0].sm.smCount, a[0].smCount);
    EXPECT_EQ(r[1].sm.smCount, 16u);
  }
}

TEST_F(CudaCompat, each_rule_has_its_error) {
  struct bad {
    const char *why;
    cudaDevSmResourceGroupParams p;
    cudaError_t rc;
  };
  const bad cases[] = {
      {"odd count", group(15, 0, 0, 0), cudaErrorInvalidResourceConfiguration},
      {"not a multiple of the co-scheduled count", group(12, 8, 0, 0),
       cudaErrorInvalidResourceConfiguration},
      {"odd co-scheduled count", group(16, 3, 0, 0), cudaErrorInvalidResourceConfiguration},
      {"co-scheduled count above 32", group(64, 64, 0, 0), cudaErrorInvalidResourceConfiguration},
      {"preferred not a multiple", group(16, 4, 6, 0), cudaErrorInvalidResourceConfiguration},
      {"backfill below the co-scheduled count", group(4, 8, 0, cudaDevSmResourceGroupBackfill),
       cudaErrorInvalidResourceConfiguration},
      {"more than the input", group(200, 0, 0, 0), cudaErrorInvalidResourceConfiguration},
      {"unknown group flag", group(16, 0, 0, 4), cudaErrorInvalidValue},
      {"co-scheduled 16 cannot be guaranteed below 13.1", group(32, 16, 16, 0),
       cudaErrorNotSupported},
  };
  for (const bad &c : cases) {
    SCOPED_TRACE(c.why);
    std::vector<cudaDevSmResourceGroupParams> p{c.p};
    split(p, c.rc);
    if (greenctx_test::explained())
      EXPECT_STRNE(greenctxGetLastErrorMessage(), "") << "every failure explains itself";
  }
  std::vector<cudaDevSmResourceGroupParams> p{group(16, 0, 0, 0)};
  cudaDevResource out[2];
  EXPECT_EQ(cudaDevSmResourceSplit(out, 0, &device_sms, nullptr, 0, p.data()),
            cudaErrorInvalidValue);
  EXPECT_EQ(cudaDevSmResourceSplit(out, 1, &device_sms, nullptr, 1, p.data()),
            cudaErrorInvalidValue);
  // A split output cannot be split again (the driver's rule, kept).
  auto r = split(p);
  EXPECT_EQ(cudaDevSmResourceSplit(out, 1, &r[0], nullptr, 0, p.data()),
            cudaErrorInvalidResourceConfiguration);
}

// ---- descriptors and work queues ---------------------------------------------------------------

TEST_F(CudaCompat, descriptor_rules) {
  cudaDevResource a[3], b[2];
  unsigned n = 2;
  CHECK_CUDA(cudaDevSmResourceSplitByCount(a, &n, &device_sms, &a[2], 0, 8));
  n = 1;
  CHECK_CUDA(cudaDevSmResourceSplitByCount(b, &n, &device_sms, &b[1], 0, 8));
  cudaDevResourceDesc_t desc = nullptr;
  CHECK_CUDA(cudaDevResourceGenerateDesc(&desc, a, 3)); // groups and remainder of one split
  cudaDevResource mixed[2] = {a[0], b[0]};
  EXPECT_EQ(cudaDevResourceGenerateDesc(&desc, mixed, 2), cudaErrorInvalidResourceConfiguration);
  if (greenctx_test::explained())
    EXPECT_NE(std::string(greenctxGetLastErrorMessage()).find("same split call"),
              std::string::npos);
  // Groups of different co-scheduled counts.
  std::vector<cudaDevSmResourceGroupParams> p{group(16, 8, 8, 0), group(16, 2, 2, 0)};
  auto r = split(p);
  EXPECT_EQ(cudaDevResourceGenerateDesc(&desc, r.data(), 2), cudaErrorInvalidResourceConfiguration);
  // Two work-queue resources.
  cudaDevResource wq[3] = {a[0]};
  CHECK_CUDA(cudaDeviceGetDevResource(0, &wq[1], cudaDevResourceTypeWorkqueueConfig));
  CHECK_CUDA(cudaDeviceGetDevResource(0, &wq[2], cudaDevResourceTypeWorkqueue));
  EXPECT_EQ(cudaDevResourceGenerateDesc(&desc, wq, 3), cudaErrorInvalidResourceConfiguration);
  cudaDevResource hand_made{};
  hand_made.type = cudaDevResourceTypeSm;
  hand_made.sm.smCount = 16;
  EXPECT_EQ(cudaDevResourceGenerateDesc(&desc, &hand_made, 1),
            cudaErrorInvalidResourceConfiguration);
}

// The guide's work-queue example: one group plus a balanced work-queue configuration of 4.
TEST_F(CudaCompat, work_queue_configuration_is_kept_and_reported_as_not_provisioned) {
  GREENCTX_SKIP_ON_CUDART_API();
  cudaDevResource res[2] = {};
  unsigned n = 1;
  CHECK_CUDA(cudaDevSmResourceSplitByCount(&res[0], &n, &device_sms, nullptr, 0, 16));
  res[1].type = cudaDevResourceTypeWorkqueueConfig;
  res[1].wqConfig.device = 0;
  res[1].wqConfig.sharingScope = cudaDevWorkqueueConfigScopeGreenCtxBalanced;
  res[1].wqConfig.wqConcurrencyLimit = 4;
  cudaExecutionContext_t ctx = make_context(res, 2);
  ASSERT_NE(ctx, nullptr);
  EXPECT_EQ(context_sms(ctx), 16u);
  cudaDevResource back{};
  CHECK_CUDA(cudaExecutionCtxGetDevResource(ctx, &back, cudaDevResourceTypeWorkqueueConfig));
  EXPECT_EQ(back.wqConfig.wqConcurrencyLimit, 4u);
  EXPECT_EQ(back.wqConfig.sharingScope, cudaDevWorkqueueConfigScopeGreenCtxBalanced);
  cudaDevWorkqueueConfigResource asked{};
  int provisioned = -1;
  CHECK_CUDA(greenctxExecutionCtxGetWorkqueueStatus(ctx, &asked, &provisioned));
  EXPECT_EQ(asked.wqConcurrencyLimit, 4u);
  int driver = 0;
  CHECK_CUDA(cudaDriverGetVersion(&driver));
  if (driver < 13010)
    EXPECT_EQ(provisioned, 0) << "driver " << driver << " cannot provision work queues";
  res[1].wqConfig.sharingScope = static_cast<cudaDevWorkqueueConfigScope>(5);
  cudaDevResourceDesc_t desc = nullptr;
  EXPECT_EQ(cudaDevResourceGenerateDesc(&desc, res, 2), cudaErrorInvalidResourceConfiguration);
}

// ---- streams, events, synchronisation ----------------------------------------------------------

TEST_F(CudaCompat, green_streams_confine_kernels_and_report_their_resources) {
  cudaDevResource g{};
  unsigned n = 1;
  CHECK_CUDA(cudaDevSmResourceSplitByCount(&g, &n, &device_sms, nullptr, 0, 16));
  cudaExecutionContext_t ctx = make_context(&g, 1);
  cudaStream_t s = make_stream(ctx, 100); // clamped to the device's range
  int least = 0, greatest = 0, prio = 0;
  CHECK_CUDA(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  CHECK_CUDA(cudaStreamGetPriority(s, &prio));
  EXPECT_EQ(prio, least);
  unsigned flags = 0;
  CHECK_CUDA(cudaStreamGetFlags(s, &flags));
  EXPECT_EQ(flags & cudaStreamNonBlocking, unsigned{cudaStreamNonBlocking})
      << "cudaStreamDefault means non-blocking on a green context";
  EXPECT_EQ(sms_used(s).size(), 16u);
  cudaDevResource r{};
  CHECK_CUDA(cudaStreamGetDevResource(s, &r, cudaDevResourceTypeSm));
  EXPECT_EQ(r.sm.smCount, 16u);
  EXPECT_EQ(cudaStreamGetDevResource(s, &r, cudaDevResourceTypeWorkqueueConfig),
            cudaErrorInvalidResourceType);
  // The resource of a context can be split again (the read-back rule).
  cudaDevResource ctx_sms{}, halves[2];
  CHECK_CUDA(cudaExecutionCtxGetDevResource(ctx, &ctx_sms, cudaDevResourceTypeSm));
  n = 2;
  CHECK_CUDA(cudaDevSmResourceSplitByCount(halves, &n, &ctx_sms, nullptr, 0, 8));
  EXPECT_EQ(n, 2u);
  // A primary-context stream.
  cudaExecutionContext_t primary = nullptr;
  CHECK_CUDA(cudaDeviceGetExecutionCtx(&primary, 0));
  EXPECT_EQ(sms_used(make_stream(primary), 8000).size(), static_cast<size_t>(sm_count));
  int dev = -1;
  CHECK_CUDA(cudaExecutionCtxGetDevice(&dev, ctx));
  EXPECT_EQ(dev, 0);
  unsigned long long id1 = 0, id2 = 0;
  CHECK_CUDA(cudaExecutionCtxGetId(ctx, &id1));
  CHECK_CUDA(cudaExecutionCtxGetId(primary, &id2));
  EXPECT_NE(id1, id2);
}

TEST_F(CudaCompat, events_and_synchronisation_cover_what_the_guide_says) {
  std::vector<cudaDevSmResourceGroupParams> params{group(16, 0, 0, 0), group(16, 0, 0, 0)};
  auto res = split(params);
  cudaExecutionContext_t a = make_context(&res[0], 1), b = make_context(&res[1], 1);
  cudaExecutionContext_t primary = nullptr;
  CHECK_CUDA(cudaDeviceGetExecutionCtx(&primary, 0));
  cudaStream_t sa = make_stream(a), sb = make_stream(b);
  unsigned long long *times = nullptr;
  CHECK_CUDA(cudaMallocManaged(&times, 4 * sizeof(unsigned long long)));
  cudaEvent_t e;
  CHECK_CUDA(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));

  // b's future work waits for everything a had submitted.
  timed_spin<<<1, 32, 0, sa>>>(times, 50'000'000);
  CHECK_CUDA(cudaExecutionCtxRecordEvent(a, e));
  CHECK_CUDA(cudaExecutionCtxWaitEvent(b, e));
  timed_spin<<<1, 32, 0, sb>>>(times + 2, 1000);
  CHECK_CUDA(cudaExecutionCtxSynchronize(b));
  EXPECT_GE(times[2], times[1]) << "b's kernel started before a's ended";

  // The primary context's record covers green contexts.
  timed_spin<<<1, 32, 0, sa>>>(times, 50'000'000);
  CHECK_CUDA(cudaExecutionCtxRecordEvent(primary, e));
  EXPECT_EQ(cudaEventQuery(e), cudaErrorNotReady);
  CHECK_CUDA(cudaEventSynchronize(e));
  EXPECT_EQ(cudaStreamQuery(sa), cudaSuccess);

  // The primary context's synchronize waits for green contexts.
  timed_spin<<<1, 32, 0, sb>>>(times, 50'000'000);
  CHECK_CUDA(cudaExecutionCtxSynchronize(primary));
  EXPECT_EQ(cudaStreamQuery(sb), cudaSuccess);
  cudaFree(times);
}

TEST_F(CudaCompat, two_partitions_run_concurrently) {
  std::vector<cudaDevSmResourceGroupParams> params{group(16, 0, 0, 0),
                                                   group(0, 8, 8, cudaDevSmResourceGroupBackfill)};
  auto res = split(params);
  cudaStream_t s1 = make_stream(make_context(&res[0], 1));
  cudaStream_t s2 = make_stream(make_context(&res[1], 1));
  unsigned long long *t = nullptr;
  CHECK_CUDA(cudaMallocManaged(&t, 4 * sizeof(unsigned long long)));
  timed_spin<<<1, 32, 0, s1>>>(t, 20'000'000);
  timed_spin<<<1, 32, 0, s2>>>(t + 2, 20'000'000);
  CHECK_CUDA(cudaStreamSynchronize(s1));
  CHECK_CUDA(cudaStreamSynchronize(s2));
  EXPECT_LT(t[0], t[3]);
  EXPECT_LT(t[2], t[1]) << "the two kernels did not overlap";
  cudaFree(t);
}

// ---- graphs ------------------------------------------------------------------------------------

TEST_F(CudaCompat, graph_nodes_run_in_the_context_they_were_made_for) {
  GREENCTX_SKIP_ON_CUDART_API();
  std::vector<cudaDevSmResourceGroupParams> params{group(16, 0, 0, 0)};
  auto res = split(params);
  cudaExecutionContext_t ctx = make_context(&res[0], 1);
  cudaExecutionContext_t primary = nullptr;
  CHECK_CUDA(cudaDeviceGetExecutionCtx(&primary, 0));
  cudaStream_t green = make_stream(ctx), plain = make_stream(primary);
  constexpr unsigned blocks = 4000;
  unsigned *d = nullptr;
  CHECK_CUDA(cudaMalloc(&d, blocks * sizeof(unsigned)));
  const auto used = [&](cudaGraph_t g) {
    cudaGraphExec_t exec;
    EXPECT_EQ(cudaGraphInstantiate(&exec, g, 0), cudaSuccess);
    EXPECT_EQ(cudaGraphLaunch(exec, plain), cudaSuccess); // launched on a primary stream
    EXPECT_EQ(cudaStreamSynchronize(plain), cudaSuccess);
    std::vector<unsigned> h(blocks);
    EXPECT_EQ(cudaMemcpy(h.data(), d, blocks * sizeof(unsigned), cudaMemcpyDeviceToHost),
              cudaSuccess);
    cudaGraphExecDestroy(exec);
    return std::set<unsigned>(h.begin(), h.end()).size();
  };

  // Captured on a green stream.
  cudaGraph_t captured;
  CHECK_CUDA(cudaStreamBeginCapture(green, cudaStreamCaptureModeThreadLocal));
  record_smid<<<blocks, 32, 0, green>>>(d, 20000);
  CHECK_CUDA(cudaStreamEndCapture(green, &captured));
  size_t count = 1;
  cudaGraphNode_t node;
  CHECK_CUDA(cudaGraphGetNodes(captured, &node, &count));
  cudaExecutionContext_t of_node = nullptr;
  CHECK_CUDA(greenctxGraphKernelNodeGetExecutionCtx(node, &of_node));
  EXPECT_EQ(of_node, ctx);
  EXPECT_EQ(used(captured), 16u);

  // Built by hand, bound to the green context, then to the primary one.
  unsigned long long spin = 20000;
  void *args[] = {&d, &spin};
  cudaKernelNodeParams p{};
  p.func = reinterpret_cast<void *>(record_smid);
  p.gridDim = dim3(blocks);
  p.blockDim = dim3(32);
  p.kernelParams = args;
  for (cudaExecutionContext_t target : {ctx, primary}) {
    cudaGraph_t g;
    CHECK_CUDA(cudaGraphCreate(&g, 0));
    CHECK_CUDA(greenctxGraphAddKernelNode(&node, g, nullptr, 0, &p, target));
    CHECK_CUDA(greenctxGraphKernelNodeGetExecutionCtx(node, &of_node));
    EXPECT_EQ(of_node, target);
    EXPECT_EQ(used(g), target == ctx ? 16u : static_cast<size_t>(sm_count));
    cudaGraphDestroy(g);
  }
  cudaFree(d);
}

// ---- clusters ----------------------------------------------------------------------------------

TEST_F(CudaCompat, occupancy_calls_see_the_partition) {
  std::vector<cudaDevSmResourceGroupParams> params{group(16, 0, 0, 0)};
  auto res = split(params);
  cudaExecutionContext_t ctx = make_context(&res[0], 1);
  cudaExecutionContext_t primary = nullptr;
  CHECK_CUDA(cudaDeviceGetExecutionCtx(&primary, 0));
  CHECK_CUDA(
      cudaFuncSetAttribute(cluster_kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  const auto potential = [&](cudaStream_t s) {
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(64);
    config.blockDim = dim3(128);
    config.stream = s;
    int size = 0;
    EXPECT_EQ(cudaOccupancyMaxPotentialClusterSize(&size, cluster_kernel, &config), cudaSuccess);
    return size;
  };
  const int on_green = potential(make_stream(ctx)), on_all = potential(make_stream(primary));
  std::printf("[ info     ] max potential cluster size: %d on 16 SMs, %d on the GPU\n", on_green,
              on_all);
  if (sm_count == 132) {
    EXPECT_EQ(on_green, 8) << "measured on the H200 (spec section 5)";
    EXPECT_EQ(on_all, 16);
  } else {
    EXPECT_LE(on_green, on_all);
  }
}

// CUDA_DEVICE_MAX_CONNECTIONS: the device's WorkqueueConfig resource reports it (or the default
// of 8, the documented value), and the test records what the hardware shows. Two ways to see the
// limit failed on the H200 with driver 580 (2026-11-29): 32 single-block kernels on 32 streams all
// ran at once with the default, and a stream blocked on an event held back only itself. Here:
// stream 0 waits for an event that a 50 ms kernel on another stream records; streams 1..31
// launch a short kernel each; the streams whose kernel starts after the 50 ms are counted. With
// queues shared round robin and blocking their followers, that would be 32 / connections.
TEST_F(CudaCompat, workqueue_limit_is_reported_and_its_effect_recorded) {
  constexpr int streams = 32;
  cudaDevResource wq{};
  CHECK_CUDA(cudaDeviceGetDevResource(0, &wq, cudaDevResourceTypeWorkqueueConfig));
  cudaStream_t blocker;
  CHECK_CUDA(cudaStreamCreateWithFlags(&blocker, cudaStreamNonBlocking));
  std::vector<cudaStream_t> s(streams);
  for (auto &x : s)
    CHECK_CUDA(cudaStreamCreateWithFlags(&x, cudaStreamNonBlocking));
  unsigned long long *t = nullptr;
  CHECK_CUDA(cudaMallocManaged(&t, 2 * (streams + 1) * sizeof(unsigned long long)));
  cudaEvent_t gate;
  CHECK_CUDA(cudaEventCreateWithFlags(&gate, cudaEventDisableTiming));
  timed_spin<<<1, 32, 0, blocker>>>(t + 2 * streams, 50'000'000);
  CHECK_CUDA(cudaEventRecord(gate, blocker));
  CHECK_CUDA(cudaStreamWaitEvent(s[0], gate, 0));
  for (int i = 0; i < streams; ++i)
    timed_spin<<<1, 32, 0, s[i]>>>(t + 2 * i, 1000);
  CHECK_CUDA(cudaDeviceSynchronize());
  const unsigned long long gate_end = t[2 * streams + 1];
  int late = 0;
  std::string which;
  for (int i = 0; i < streams; ++i)
    if (t[2 * i] >= gate_end) {
      ++late;
      which += " " + std::to_string(i);
    }
  const unsigned limit = wq.wqConfig.wqConcurrencyLimit;
  std::printf("[ info     ] %d of %d streams were held behind stream 0's wait (streams%s): about "
              "%d connections; reported wqConcurrencyLimit %u (CUDA_DEVICE_MAX_CONNECTIONS=%s)\n",
              late, streams, which.c_str(), late ? streams / late : 0, limit,
              std::getenv("CUDA_DEVICE_MAX_CONNECTIONS")
                  ? std::getenv("CUDA_DEVICE_MAX_CONNECTIONS")
                  : "unset");
  const char *env = std::getenv("CUDA_DEVICE_MAX_CONNECTIONS");
  EXPECT_EQ(limit, env ? std::strtoul(env, nullptr, 10) : 8u);
  EXPECT_GE(late, 1) << "stream 0 waited for the event";
  for (auto x : s)
    cudaStreamDestroy(x);
  cudaStreamDestroy(blocker);
  cudaEventDestroy(gate);
  cudaFree(t);
}

// What IgnoreSmCoscheduling pieces of 4 can co-schedule on this GPU, as the runtime sees it
// (made with split-by-count, which promises nothing about clusters): data for the compat notes.
TEST_F(CudaCompat, ignore_coscheduling_pieces_as_the_runtime_sees_them) {
  for (unsigned size : {2u, 4u, 8u}) {
    std::vector<cudaDevResource> pieces(7);
    unsigned n = 7;
    CHECK_CUDA(cudaDevSmResourceSplitByCount(pieces.data(), &n, &device_sms, nullptr,
                                             cudaDevSmResourceSplitIgnoreSmCoscheduling, size));
    cudaExecutionContext_t ctx = make_context(pieces.data(), n);
    ASSERT_NE(ctx, nullptr);
    cudaStream_t s = make_stream(ctx);
    CHECK_CUDA(
        cudaFuncSetAttribute(cluster_kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(64);
    config.blockDim = dim3(128);
    config.stream = s;
    int potential = 0;
    CHECK_CUDA(cudaOccupancyMaxPotentialClusterSize(&potential, cluster_kernel, &config));
    std::printf("[ info     ] %u IgnoreSmCoscheduling pieces of %u SMs (%u SMs): max potential "
                "cluster size %d; used %zu SMs\n",
                n, size, n * size, potential, sms_used(s).size());
    EXPECT_GE(potential, 1);
  }
}

// Last: destroying a context detaches its streams.
TEST_F(CudaCompat, zz_streams_of_a_destroyed_context_are_detached) {
  GREENCTX_SKIP_ON_CUDART_API();
  cudaDevResource g{};
  unsigned n = 1;
  CHECK_CUDA(cudaDevSmResourceSplitByCount(&g, &n, &device_sms, nullptr, 0, 8));
  cudaExecutionContext_t ctx = make_context(&g, 1);
  cudaStream_t s = make_stream(ctx);
  CHECK_CUDA(cudaStreamSynchronize(s));
  CHECK_CUDA(cudaExecutionCtxDestroy(ctx));
  cudaDevResource r{};
  EXPECT_EQ(cudaStreamGetDevResource(s, &r, cudaDevResourceTypeSm), cudaErrorStreamDetached);
  cudaExecutionContext_t of = nullptr;
  EXPECT_EQ(greenctxStreamGetExecutionCtx(s, &of), cudaErrorStreamDetached);
  EXPECT_EQ(cudaExecutionCtxSynchronize(ctx), cudaErrorInvalidResourceHandle);
  const cudaError_t destroyed = cudaStreamDestroy(s);
  std::printf("[ info     ] cudaStreamDestroy on a detached stream: %s\n",
              cudaGetErrorName(destroyed));
  cudaExecutionContext_t primary = nullptr;
  CHECK_CUDA(cudaDeviceGetExecutionCtx(&primary, 0));
  EXPECT_EQ(cudaExecutionCtxDestroy(primary), cudaErrorInvalidValue);
}

} // namespace
