// SPDX-License-Identifier: Apache-2.0
// A persistent kernel with a hand-written grid barrier, as libraries write them without
// cooperative launches: one block per SM the device reports (1024 threads, 116 KB of dynamic
// shared memory each, so that no SM holds two), an ordinary launch, and blocks that wait for each
// other on global atomics between phases. That is only right when every block is resident at
// once: told more SMs than it has, the blocks that run wait for blocks that cannot start. The wait
// is bounded (%globaltimer, and clock64): on timeout a block raises an error flag and every block
// leaves. Each phase steps a ring of integers tile by tile through shared memory; the sum is
// checked against the CPU and does not depend on the grid's size. Knows nothing of greenctx: plain
// and confined stdouts must agree.
//
//   persistent_barrier [--phases N] [--barrier-timeout-ms MS] [--smid-out FILE] [--timeout-s S]
#include <cuda_runtime.h>

#include "run_common.cuh"

#include <string>
#include <vector>

namespace {

using greenctx_test::now_ns;
using run_test::format;
using run_test::recorder;

constexpr unsigned threads = 1024;
constexpr unsigned tile = 24 * 1024;      // values per tile: 96 KB of shared memory
constexpr size_t smem_bytes = 116 * 1024; // the tile and its neighbour; two would not fit an SM
constexpr unsigned tiles = 264;           // fixed: the result must not depend on the grid
constexpr size_t n = size_t(tiles) * tile;

struct barrier_state {
  unsigned count;      // blocks arrived at the current barrier
  unsigned generation; // barriers passed
  int error;           // 1 once a block gave up waiting
};

/// Every block of the grid waits here for all the others. False (for the whole block) when the
/// wait timed out or another block's did: the caller must leave the kernel.
__device__ bool grid_barrier(barrier_state *bar, unsigned blocks, unsigned long long timeout_ns) {
  __shared__ int failed;
  __syncthreads();
  if (threadIdx.x == 0) {
    failed = 0;
    volatile unsigned *generation = &bar->generation;
    volatile int *error = &bar->error;
    const unsigned seen = *generation;
    __threadfence(); // our writes of this phase, and the read above, before our arrival
    if (atomicAdd(&bar->count, 1u) == blocks - 1) {
      atomicExch(&bar->count, 0u);
      __threadfence();
      atomicAdd(&bar->generation, 1u);
    } else {
      const unsigned long long start = now_ns();
      const long long start_clock = clock64();
      const long long max_cycles = static_cast<long long>(timeout_ns) * 4 + 100000;
      while (*generation == seen) {
        if (*error) {
          failed = 1;
          break;
        }
        if (now_ns() - start > timeout_ns || clock64() - start_clock > max_cycles) {
          atomicExch(&bar->error, 1);
          failed = 1;
          break;
        }
      }
    }
    __threadfence();
  }
  __syncthreads();
  return !failed;
}

__host__ __device__ unsigned next_value(unsigned self, unsigned right, unsigned phase) {
  return self * 2654435761u ^ (right + phase);
}

__global__ void __launch_bounds__(threads)
    phases(unsigned *a, unsigned *b, int count, barrier_state *bar, unsigned long long timeout_ns,
           unsigned long long *sum, unsigned *smids) {
  extern __shared__ unsigned staged[]; // tile + 1 values
  if (threadIdx.x == 0) {
    unsigned id;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
    smids[blockIdx.x] = id;
  }
  if (*reinterpret_cast<volatile int *>(&bar->error))
    return; // a block that starts after a timeout: the others are gone
  for (int p = 0; p < count; ++p) {
    const unsigned *src = p % 2 ? b : a;
    unsigned *dst = p % 2 ? a : b;
    for (unsigned t = blockIdx.x; t < tiles; t += gridDim.x) {
      const size_t base = size_t(t) * tile;
      for (unsigned j = threadIdx.x; j <= tile; j += blockDim.x)
        staged[j] = src[(base + j) % n];
      __syncthreads();
      for (unsigned j = threadIdx.x; j < tile; j += blockDim.x)
        dst[base + j] = next_value(staged[j], staged[j + 1], unsigned(p));
      __syncthreads();
    }
    if (!grid_barrier(bar, gridDim.x, timeout_ns))
      return;
  }
  const unsigned *last = count % 2 ? b : a;
  unsigned long long mine = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x)
    mine += last[i];
  atomicAdd(sum, mine);
}

std::vector<unsigned> initial() {
  std::vector<unsigned> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = unsigned(i) * 40503u + 7u;
  return v;
}

unsigned long long cpu_sum(int count) {
  std::vector<unsigned> a = initial(), b(n);
  for (int p = 0; p < count; ++p) {
    auto &src = p % 2 ? b : a;
    auto &dst = p % 2 ? a : b;
    for (size_t i = 0; i < n; ++i)
      dst[i] = next_value(src[i], src[(i + 1) % n], unsigned(p));
  }
  unsigned long long s = 0;
  for (unsigned x : count % 2 ? b : a)
    s += x;
  return s;
}

} // namespace

int main(int argc, char **argv) {
  int count = 8;
  double barrier_ms = 3000, timeout_s = 60;
  std::string smid_out;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--phases" && i + 1 < argc)
      count = std::atoi(argv[++i]);
    else if (a == "--barrier-timeout-ms" && i + 1 < argc)
      barrier_ms = std::atof(argv[++i]);
    else if (a == "--smid-out" && i + 1 < argc)
      smid_out = argv[++i];
    else if (a == "--timeout-s" && i + 1 < argc)
      timeout_s = std::atof(argv[++i]);
    else {
      std::fprintf(stderr, "usage: persistent_barrier [--phases N] [--barrier-timeout-ms MS] "
                           "[--smid-out FILE] [--timeout-s S]\n");
      return 2;
    }
  }
  if (count < 1 || barrier_ms <= 0 || timeout_s <= 0) {
    std::fprintf(stderr, "persistent_barrier: --phases >= 1, the timeouts positive\n");
    return 2;
  }
  int devices = 0;
  const cudaError_t rc = cudaGetDeviceCount(&devices);
  if (rc != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "persistent_barrier: no CUDA device (%s): skipped\n",
                 rc == cudaSuccess ? "none found" : cudaGetErrorString(rc));
    return 77;
  }
  run_test::watchdog dog("persistent_barrier", timeout_s);
  recorder rec("persistent_barrier");
  int sms = 0, per_sm = 0;
  rec.check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), "SM count");
  rec.check(
      cudaFuncSetAttribute(phases, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem_bytes)),
      "cudaFuncSetAttribute(MaxDynamicSharedMemorySize)");
  rec.check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, phases, threads, smem_bytes),
            "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
  if (rec.ok() && per_sm < 1)
    rec.fail(format("a block of %u threads and %zu bytes of shared memory does not fit an SM",
                    threads, smem_bytes));
  if (!rec.ok()) {
    std::printf("persistent_barrier: FAILED (%s)\n", rec.summary().c_str());
    return 1;
  }
  const unsigned blocks = unsigned(sms);
  std::fprintf(stderr,
               "persistent_barrier: %u blocks (one per SM; %d fit an SM), %zu bytes of "
               "shared memory each\n",
               blocks, per_sm, smem_bytes);
  const std::vector<unsigned> init = initial();
  unsigned *a = nullptr, *b = nullptr, *smids = nullptr;
  barrier_state *bar = nullptr;
  unsigned long long *sum = nullptr, got = 0;
  barrier_state state{};
  std::vector<unsigned> ids(blocks, ~0u);
  const auto start = std::chrono::steady_clock::now();
  if (rec.check(cudaMalloc(&a, n * sizeof(unsigned)), "cudaMalloc") &&
      rec.check(cudaMalloc(&b, n * sizeof(unsigned)), "cudaMalloc") &&
      rec.check(cudaMalloc(&smids, blocks * sizeof(unsigned)), "cudaMalloc") &&
      rec.check(cudaMalloc(&bar, sizeof *bar), "cudaMalloc") &&
      rec.check(cudaMalloc(&sum, sizeof *sum), "cudaMalloc") &&
      rec.check(cudaMemcpy(a, init.data(), n * sizeof(unsigned), cudaMemcpyHostToDevice),
                "cudaMemcpy") &&
      rec.check(cudaMemset(bar, 0, sizeof *bar), "cudaMemset") &&
      rec.check(cudaMemset(sum, 0, sizeof *sum), "cudaMemset") &&
      rec.check(cudaMemset(smids, 0xff, blocks * sizeof(unsigned)), "cudaMemset")) {
    dog.at("persistent kernel");
    phases<<<blocks, threads, smem_bytes>>>(a, b, count, bar,
                                            (unsigned long long)(barrier_ms * 1e6), sum, smids);
    if (rec.launched("phases") && rec.check(cudaDeviceSynchronize(), "cudaDeviceSynchronize")) {
      rec.check(cudaMemcpy(&state, bar, sizeof state, cudaMemcpyDeviceToHost), "cudaMemcpy");
      rec.check(cudaMemcpy(&got, sum, sizeof got, cudaMemcpyDeviceToHost), "cudaMemcpy");
      rec.check(cudaMemcpy(ids.data(), smids, blocks * sizeof(unsigned), cudaMemcpyDeviceToHost),
                "cudaMemcpy");
    }
  }
  std::fprintf(stderr, "persistent_barrier: GPU %.3f s\n", run_test::seconds_since(start));
  cudaFree(a);
  cudaFree(b);
  cudaFree(smids);
  cudaFree(bar);
  cudaFree(sum);
  if (rec.ok() && state.error)
    rec.fail(format("a grid barrier timed out after %.0f ms: the %u blocks were not all resident "
                    "at once (%u barriers passed)",
                    barrier_ms, blocks, state.generation));
  if (!rec.ok()) {
    std::printf("persistent_barrier: FAILED (%s)\n", rec.summary().c_str());
    return 1;
  }
  const unsigned long long want = cpu_sum(count);
  std::printf("persistent_barrier: %zu values, %d phases, %u barriers passed, sum %llu, matches "
              "the CPU: %s\n",
              n, count, state.generation, got, got == want ? "yes" : "no");
  if (!smid_out.empty()) {
    run_test::smid_log log;
    std::set<unsigned> seen;
    for (unsigned id : ids)
      if (id != ~0u)
        seen.insert(id);
    log.add("persistent_barrier", 0, seen);
    if (!log.write(smid_out))
      return 1;
  }
  return got == want ? 0 : 1;
}
