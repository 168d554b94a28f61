// SPDX-License-Identifier: Apache-2.0
// Recycled green contexts and detached streams through the CUDA 13.1 runtime API
// (greenctx/cuda_compat.h): cudaExecutionCtxDestroy parks the driver's green context and a later
// cudaGreenCtxCreate over the same SMs takes it again; streams of a destroyed
// context answer cudaErrorStreamDetached through greenctx and can still be destroyed. Where kernels
// run is checked with %smid.
#include <greenctx/cuda_compat.h>

#include <cuda.h>
#include <cuda_runtime.h>

#include "compat_check.cuh"
#include "smid_kernels.cuh"
#include <gtest/gtest.h>

#include <cstdio>
#include <set>
#include <utility>
#include <vector>

namespace {

using greenctx_test::sms_used;
using greenctx_test::timed_spin;

__global__ void touch(int *p) {
  *p += 1;
}

// A group of a split and the SMs left over.
struct split_pieces {
  cudaDevResource group{};
  cudaDevResource rest{};
};

class RecycleCompat : public ::testing::Test {
protected:
  void SetUp() override {
    GREENCTX_SKIP_ON_CUDART_API(); // recycling is the compat layer's
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0)
      GTEST_SKIP() << "no CUDA GPU or driver: " << cudaGetErrorString(cudaGetDeviceCount(&n));
    CHECK_CUDA(cudaSetDevice(0));
    CHECK_CUDA(cudaDeviceGetDevResource(0, &device_sms, cudaDevResourceTypeSm));
    // cuStreamGetCtx through cudart: the driver context a stream belongs to is what recycling
    // keeps, so the tests compare it (the test links no libcuda).
    void *fn = nullptr;
    cudaDriverEntryPointQueryResult found{};
#if CUDART_VERSION >= 12050
    CHECK_CUDA(
        cudaGetDriverEntryPointByVersion("cuStreamGetCtx", &fn, 12000, cudaEnableDefault, &found));
#else // 12.4 toolkits have only the unversioned lookup
    CHECK_CUDA(cudaGetDriverEntryPoint("cuStreamGetCtx", &fn, cudaEnableDefault, &found));
#endif
    ASSERT_EQ(found, cudaDriverEntryPointSuccess) << "cuStreamGetCtx not found";
    stream_get_ctx = reinterpret_cast<CUresult (*)(CUstream, CUcontext *)>(fn);
  }

  // One group of at least `sms` SMs and the rest, from a fresh split call.
  split_pieces split(unsigned sms) {
    split_pieces p;
    unsigned n = 1;
    const cudaError_t rc =
        cudaDevSmResourceSplitByCount(&p.group, &n, &device_sms, &p.rest, 0, sms);
    EXPECT_EQ(rc, cudaSuccess) << cudaGetErrorName(rc) << ": " << greenctxGetLastErrorMessage();
    EXPECT_EQ(n, 1u);
    return p;
  }

  cudaExecutionContext_t make_context(cudaDevResource *piece) {
    cudaDevResourceDesc_t desc = nullptr;
    cudaExecutionContext_t ctx = nullptr;
    EXPECT_EQ(cudaDevResourceGenerateDesc(&desc, piece, 1), cudaSuccess)
        << greenctxGetLastErrorMessage();
    const cudaError_t rc = cudaGreenCtxCreate(&ctx, desc, 0, 0);
    EXPECT_EQ(rc, cudaSuccess) << cudaGetErrorName(rc) << ": " << greenctxGetLastErrorMessage();
    return ctx;
  }

  cudaStream_t make_stream(cudaExecutionContext_t ctx) {
    cudaStream_t s = nullptr;
    EXPECT_EQ(cudaExecutionCtxStreamCreate(&s, ctx, cudaStreamDefault, 0), cudaSuccess)
        << greenctxGetLastErrorMessage();
    return s;
  }

  CUcontext driver_context(cudaStream_t s) {
    CUcontext c = nullptr;
    EXPECT_EQ(stream_get_ctx(reinterpret_cast<CUstream>(s), &c), CUDA_SUCCESS);
    EXPECT_NE(c, nullptr);
    return c;
  }

  unsigned long long id_of(cudaExecutionContext_t ctx) {
    unsigned long long id = 0;
    EXPECT_EQ(cudaExecutionCtxGetId(ctx, &id), cudaSuccess) << greenctxGetLastErrorMessage();
    return id;
  }

  unsigned context_sms(cudaExecutionContext_t ctx) {
    cudaDevResource r{};
    EXPECT_EQ(cudaExecutionCtxGetDevResource(ctx, &r, cudaDevResourceTypeSm), cudaSuccess);
    return r.sm.smCount;
  }

  // One cycle of the guide's flow: split `sms` plus the rest, a green context and a stream on
  // each, one kernel, then everything destroyed.
  void guide_cycle(unsigned sms, int *counter) {
    split_pieces p = split(sms);
    cudaExecutionContext_t a = make_context(&p.group);
    cudaExecutionContext_t b = make_context(&p.rest);
    ASSERT_TRUE(a && b);
    cudaStream_t sa = make_stream(a);
    cudaStream_t sb = make_stream(b);
    touch<<<1, 1, 0, sa>>>(counter);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaStreamSynchronize(sa));
    CHECK_CUDA(cudaStreamDestroy(sa));
    CHECK_CUDA(cudaStreamDestroy(sb));
    CHECK_CUDA(cudaExecutionCtxDestroy(a));
    CHECK_CUDA(cudaExecutionCtxDestroy(b));
  }

  cudaDevResource device_sms{};
  CUresult (*stream_get_ctx)(CUstream, CUcontext *) = nullptr;
};

TEST_F(RecycleCompat, create_after_destroy_over_the_same_sms_reuses_the_driver_context) {
  split_pieces first = split(16);
  cudaExecutionContext_t ctx = make_context(&first.group);
  ASSERT_NE(ctx, nullptr);
  cudaStream_t s = make_stream(ctx);
  const CUcontext before = driver_context(s);
  const std::set<unsigned> sms_before = sms_used(s);
  const unsigned long long id_before = id_of(ctx);
  CHECK_CUDA(cudaStreamDestroy(s));
  CHECK_CUDA(cudaExecutionCtxDestroy(ctx));

  split_pieces second = split(16); // another split call: byte-identical pieces
  cudaExecutionContext_t again = make_context(&second.group);
  ASSERT_NE(again, nullptr);
  EXPECT_NE(again, ctx) << "a new execution context, not the destroyed one";
  cudaStream_t s2 = make_stream(again);
  EXPECT_EQ(driver_context(s2), before) << "the parked driver context was not reused";
  EXPECT_NE(id_of(again), id_before) << "a recycled context needs a new id";
  const std::set<unsigned> sms_after = sms_used(s2);
  EXPECT_LE(sms_after.size(), context_sms(again));
  EXPECT_EQ(sms_after, sms_before) << "the recycled context ran on other SMs";
  CHECK_CUDA(cudaStreamDestroy(s2));
  CHECK_CUDA(cudaExecutionCtxDestroy(again));
}

TEST_F(RecycleCompat, other_sms_get_another_driver_context) {
  split_pieces p16 = split(16);
  cudaExecutionContext_t ctx = make_context(&p16.group);
  ASSERT_NE(ctx, nullptr);
  cudaStream_t s = make_stream(ctx);
  const CUcontext group16 = driver_context(s);
  const std::set<unsigned> sms16 = sms_used(s);
  CHECK_CUDA(cudaStreamDestroy(s));
  CHECK_CUDA(cudaExecutionCtxDestroy(ctx));

  split_pieces again = split(16);
  split_pieces p32 = split(32);
  for (cudaDevResource *other : {&again.rest, &p32.group, &p32.rest}) {
    cudaExecutionContext_t o = make_context(other);
    ASSERT_NE(o, nullptr);
    cudaStream_t os = make_stream(o);
    EXPECT_NE(driver_context(os), group16) << "a context over other SMs got the parked one";
    const std::set<unsigned> used = sms_used(os);
    EXPECT_LE(used.size(), context_sms(o));
    if (other == &again.rest) // the rest of a 16-SM split shares no SM with the group
      for (unsigned sm : used)
        EXPECT_EQ(sms16.count(sm), 0u) << "SM " << sm << " of the 16-SM group";
    CHECK_CUDA(cudaStreamDestroy(os));
    CHECK_CUDA(cudaExecutionCtxDestroy(o));
  }
}

TEST_F(RecycleCompat, guide_flow_cycles_do_not_grow_device_memory) {
  int *counter = nullptr;
  CHECK_CUDA(cudaMalloc(&counter, sizeof(int)));
  CHECK_CUDA(cudaMemset(counter, 0, sizeof(int)));
  for (unsigned sms : {16u, 32u}) // the first cycles make the contexts that are then recycled
    guide_cycle(sms, counter);
  size_t free_before = 0, free_after = 0, total = 0;
  CHECK_CUDA(cudaMemGetInfo(&free_before, &total));
  constexpr int cycles = 1000;
  for (int i = 0; i < cycles && !HasFatalFailure(); ++i)
    guide_cycle(i % 2 ? 32 : 16, counter);
  CHECK_CUDA(cudaMemGetInfo(&free_after, &total));
  int touched = 0;
  CHECK_CUDA(cudaMemcpy(&touched, counter, sizeof(int), cudaMemcpyDeviceToHost));
  EXPECT_EQ(touched, cycles + 2) << "a kernel of the flow did not run";
  const double grown_mib =
      (static_cast<double>(free_before) - static_cast<double>(free_after)) / (1024.0 * 1024.0);
  std::printf("[ info     ] %d cycles of the guide's flow: device memory grew by %.1f MiB\n",
              cycles, grown_mib);
  EXPECT_LE(grown_mib, 64.0) << "without recycling, 1000 cycles lose about 8000 MiB on driver 580";
  cudaFree(counter);
}

TEST_F(RecycleCompat, streams_of_a_destroyed_context_are_detached_and_can_be_destroyed) {
  split_pieces p = split(16);
  cudaExecutionContext_t ctx = make_context(&p.group);
  ASSERT_NE(ctx, nullptr);
  cudaStream_t s = make_stream(ctx);
  EXPECT_FALSE(sms_used(s).empty());
  CHECK_CUDA(cudaExecutionCtxDestroy(ctx));
  cudaExecutionContext_t of = nullptr;
  EXPECT_EQ(greenctxStreamGetExecutionCtx(s, &of), cudaErrorStreamDetached);
  cudaDevResource r{};
  EXPECT_EQ(cudaStreamGetDevResource(s, &r, cudaDevResourceTypeSm), cudaErrorStreamDetached);
  EXPECT_EQ(cudaStreamDestroy(s), cudaSuccess) << "13.1: destroying a detached stream succeeds";
}

TEST_F(RecycleCompat, a_detached_stream_stays_detached_when_its_driver_context_is_reused) {
  split_pieces p = split(32);
  cudaExecutionContext_t old_ctx = make_context(&p.group);
  ASSERT_NE(old_ctx, nullptr);
  cudaStream_t old_stream = make_stream(old_ctx);
  const CUcontext driver = driver_context(old_stream);
  const unsigned long long old_id = id_of(old_ctx);
  CHECK_CUDA(cudaExecutionCtxDestroy(old_ctx));

  split_pieces q = split(32);
  cudaExecutionContext_t new_ctx = make_context(&q.group);
  ASSERT_NE(new_ctx, nullptr);
  cudaStream_t new_stream = make_stream(new_ctx);
  ASSERT_EQ(driver_context(new_stream), driver) << "the driver context was not reused";
  EXPECT_NE(id_of(new_ctx), old_id);

  cudaExecutionContext_t of = nullptr;
  EXPECT_EQ(greenctxStreamGetExecutionCtx(old_stream, &of), cudaErrorStreamDetached);
  CHECK_CUDA(greenctxStreamGetExecutionCtx(new_stream, &of));
  EXPECT_EQ(of, new_ctx);
  EXPECT_EQ(cudaStreamDestroy(old_stream), cudaSuccess);
  const std::set<unsigned> used = sms_used(new_stream); // the new context still works
  EXPECT_FALSE(used.empty());
  EXPECT_LE(used.size(), context_sms(new_ctx));
  CHECK_CUDA(greenctxStreamGetExecutionCtx(new_stream, &of));
  EXPECT_EQ(of, new_ctx);
  CHECK_CUDA(cudaStreamDestroy(new_stream));
  CHECK_CUDA(cudaExecutionCtxDestroy(new_ctx));
}

TEST_F(RecycleCompat, a_context_with_pending_work_is_not_reused_while_the_work_runs) {
  split_pieces p = split(16);
  cudaExecutionContext_t ctx = make_context(&p.group);
  ASSERT_NE(ctx, nullptr);
  cudaStream_t s = make_stream(ctx);
  const CUcontext busy = driver_context(s);
  unsigned long long *times = nullptr;
  CHECK_CUDA(cudaMalloc(&times, 2 * sizeof(unsigned long long)));
  CHECK_CUDA(cudaMemset(times, 0, 2 * sizeof(unsigned long long)));
  timed_spin<<<1, 1, 0, s>>>(times, 300'000'000ull); // 300 ms
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaExecutionCtxDestroy(ctx)); // the kernel keeps running where it runs

  split_pieces q = split(16);
  cudaExecutionContext_t other = make_context(&q.group);
  ASSERT_NE(other, nullptr);
  cudaStream_t os = make_stream(other);
  EXPECT_NE(driver_context(os), busy) << "a parked context with running work was given out";
  EXPECT_EQ(cudaStreamSynchronize(s), cudaSuccess); // cudart's own: the driver context lives
  unsigned long long h[2] = {};
  CHECK_CUDA(cudaMemcpy(h, times, sizeof h, cudaMemcpyDeviceToHost));
  EXPECT_GE(h[1] - h[0], 300'000'000ull) << "the destroyed context's kernel did not finish";
  EXPECT_EQ(cudaStreamDestroy(s), cudaSuccess);
  CHECK_CUDA(cudaStreamDestroy(os));
  CHECK_CUDA(cudaExecutionCtxDestroy(other));
  cudaFree(times);
}

TEST_F(RecycleCompat, contexts_without_identity_are_kept_but_never_reused) {
  // A descriptor of the whole device resource has no content id: nothing can match it.
  cudaExecutionContext_t ctx = make_context(&device_sms);
  ASSERT_NE(ctx, nullptr);
  cudaStream_t s = make_stream(ctx);
  const CUcontext first = driver_context(s);
  CHECK_CUDA(cudaExecutionCtxDestroy(ctx));
  cudaExecutionContext_t of = nullptr;
  EXPECT_EQ(greenctxStreamGetExecutionCtx(s, &of), cudaErrorStreamDetached);
  EXPECT_EQ(cudaStreamDestroy(s), cudaSuccess) << "its driver context must still be alive";

  cudaExecutionContext_t again = make_context(&device_sms);
  ASSERT_NE(again, nullptr);
  cudaStream_t s2 = make_stream(again);
  EXPECT_NE(driver_context(s2), first) << "a context without identity was reused";
  CHECK_CUDA(cudaStreamDestroy(s2));
  CHECK_CUDA(cudaExecutionCtxDestroy(again));
}

} // namespace
