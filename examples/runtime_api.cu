// SPDX-License-Identifier: Apache-2.0
// The CUDA 13.1 runtime execution-context API on today's drivers: CUDA code as the 13.1 guide
// writes it, plus one include. Splits the GPU into 16 SMs for latency-critical work and the rest
// for a long kernel, launches on both, and checks with %smid where each kernel ran.
#include <greenctx/cuda_compat.h> // the one line added for drivers older than 13.1

#include <cuda_runtime.h>

#include <cstdio>
#include <set>
#include <vector>

#define CHECK(call)                                                                                \
  do {                                                                                             \
    const cudaError_t rc_ = (call);                                                                \
    if (rc_ != cudaSuccess) {                                                                      \
      std::fprintf(stderr, "%s: %s\n  %s\n", #call, cudaGetErrorName(rc_),                         \
                   greenctxGetLastErrorMessage());                                                 \
      return 1;                                                                                    \
    }                                                                                              \
  } while (0)

__global__ void where_am_i(unsigned *smids) {
  unsigned id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  if (threadIdx.x == 0)
    smids[blockIdx.x] = id;
  for (volatile int i = 0; i < 20000; ++i) {
  }
}

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "no CUDA GPU here\n");
    return 3;
  }
  CHECK(cudaSetDevice(0)); // initialise the primary context first, as the guide advises

  cudaDevResource all{};
  CHECK(cudaDeviceGetDevResource(0, &all, cudaDevResourceTypeSm));
  std::printf("device 0: %u SMs, minimum partition %u, co-scheduling alignment %u\n",
              all.sm.smCount, all.sm.minSmPartitionSize, all.sm.smCoscheduledAlignment);

  // 16 SMs for the critical work, everything else for the background (discovery + backfill).
  cudaDevSmResourceGroupParams params[2] = {};
  params[0].smCount = 16;
  params[1].smCount = 0;
  params[1].flags = cudaDevSmResourceGroupBackfill;
  cudaDevResource groups[2], remainder;
  CHECK(cudaDevSmResourceSplit(groups, 2, &all, &remainder, 0, params));
  std::printf("groups: %u and %u SMs (discovered %u), %u left over\n", groups[0].sm.smCount,
              groups[1].sm.smCount, params[1].smCount, remainder.sm.smCount);

  cudaExecutionContext_t ctx[2];
  cudaStream_t stream[2];
  for (int i = 0; i < 2; ++i) {
    cudaDevResourceDesc_t desc;
    CHECK(cudaDevResourceGenerateDesc(&desc, &groups[i], 1));
    CHECK(cudaGreenCtxCreate(&ctx[i], desc, 0, 0));
    CHECK(cudaExecutionCtxStreamCreate(&stream[i], ctx[i], cudaStreamDefault, 0));
  }

  const unsigned blocks = 4 * all.sm.smCount;
  unsigned *smids[2];
  for (int i = 0; i < 2; ++i) {
    CHECK(cudaMalloc(&smids[i], blocks * sizeof(unsigned)));
    where_am_i<<<blocks, 64, 0, stream[i]>>>(smids[i]);
    CHECK(cudaGetLastError());
  }
  cudaEvent_t done;
  CHECK(cudaEventCreate(&done));
  cudaExecutionContext_t primary;
  CHECK(cudaDeviceGetExecutionCtx(&primary, 0));
  CHECK(cudaExecutionCtxRecordEvent(primary, done)); // covers both green contexts
  CHECK(cudaEventSynchronize(done));

  std::set<unsigned> used[2];
  for (int i = 0; i < 2; ++i) {
    std::vector<unsigned> h(blocks);
    CHECK(cudaMemcpy(h.data(), smids[i], blocks * sizeof(unsigned), cudaMemcpyDeviceToHost));
    used[i].insert(h.begin(), h.end());
  }
  unsigned shared = 0;
  for (unsigned sm : used[0])
    shared += used[1].count(sm);
  std::printf("kernel on the 16-SM context used %zu SMs, on the rest %zu, %u used by both\n",
              used[0].size(), used[1].size(), shared);
  for (int i = 0; i < 2; ++i) {
    CHECK(cudaStreamDestroy(stream[i]));
    CHECK(cudaExecutionCtxDestroy(ctx[i]));
  }
  const bool ok = used[0].size() <= groups[0].sm.smCount &&
                  used[1].size() <= groups[1].sm.smCount && shared == 0;
  std::printf("%s\n", ok ? "OK" : "FAILED");
  return ok ? 0 : 1;
}
