// SPDX-License-Identifier: Apache-2.0
// A cooperative kernel sized as CUDA's samples size one: the occupancy times the SM count the
// device reports, launched with cudaLaunchCooperativeKernel; it steps a ring of integers --steps
// times, each step reading both neighbours of the previous step, with cooperative_groups'
// grid.sync() between steps. The result does not depend on the grid's size and is checked against
// the CPU. Told more SMs than it has, the launch is refused or grid.sync() never returns (the
// watchdog ends it). Knows nothing of greenctx: plain and `greenctx run` stdouts must be equal.
//
//   coop_grid_sync [--steps N] [--smid-out FILE] [--timeout-s S]
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include "run_common.cuh"

#include <string>
#include <vector>

namespace cg = cooperative_groups;

namespace {

using run_test::format;
using run_test::recorder;

constexpr unsigned n = 1u << 18, threads = 256;

__host__ __device__ unsigned next_value(unsigned self, unsigned left, unsigned right, unsigned s) {
  return self * 1664525u + (left ^ (right >> 3)) + s;
}

/// `steps` steps of the ring a <-> b, a grid.sync() after each; then the sum of the last step and
/// each block's SM.
__global__ void ring_steps(unsigned *a, unsigned *b, int steps, unsigned long long *sum,
                           unsigned *smids) {
  cg::grid_group grid = cg::this_grid();
  for (int s = 0; s < steps; ++s) {
    const unsigned *src = s % 2 ? b : a;
    unsigned *dst = s % 2 ? a : b;
    for (unsigned long long i = grid.thread_rank(); i < n; i += grid.size())
      dst[i] = next_value(src[i], src[(i + n - 1) % n], src[(i + 1) % n], unsigned(s));
    grid.sync();
  }
  const unsigned *last = steps % 2 ? b : a;
  unsigned long long mine = 0;
  for (unsigned long long i = grid.thread_rank(); i < n; i += grid.size())
    mine += last[i];
  atomicAdd(sum, mine);
  if (threadIdx.x == 0) {
    unsigned id;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
    smids[blockIdx.x] = id;
  }
}

unsigned long long cpu_sum(int steps) {
  std::vector<unsigned> a(n), b(n);
  for (unsigned i = 0; i < n; ++i)
    a[i] = i * 2654435761u;
  for (int s = 0; s < steps; ++s) {
    auto &src = s % 2 ? b : a;
    auto &dst = s % 2 ? a : b;
    for (unsigned i = 0; i < n; ++i)
      dst[i] = next_value(src[i], src[(i + n - 1) % n], src[(i + 1) % n], unsigned(s));
  }
  unsigned long long sum = 0;
  for (unsigned x : steps % 2 ? b : a)
    sum += x;
  return sum;
}

} // namespace

int main(int argc, char **argv) {
  int steps = 400;
  std::string smid_out;
  double timeout_s = 60;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--steps" && i + 1 < argc)
      steps = std::atoi(argv[++i]);
    else if (a == "--smid-out" && i + 1 < argc)
      smid_out = argv[++i];
    else if (a == "--timeout-s" && i + 1 < argc)
      timeout_s = std::atof(argv[++i]);
    else {
      std::fprintf(stderr, "usage: coop_grid_sync [--steps N] [--smid-out FILE] [--timeout-s S]\n");
      return 2;
    }
  }
  if (steps < 1 || timeout_s <= 0) {
    std::fprintf(stderr, "coop_grid_sync: --steps must be >= 1, --timeout-s positive\n");
    return 2;
  }
  int count = 0;
  const cudaError_t rc = cudaGetDeviceCount(&count);
  if (rc != cudaSuccess || count == 0) {
    std::fprintf(stderr, "coop_grid_sync: no CUDA device (%s): skipped\n",
                 rc == cudaSuccess ? "none found" : cudaGetErrorString(rc));
    return 77;
  }
  run_test::watchdog dog("coop_grid_sync", timeout_s);
  recorder rec("coop_grid_sync");
  int sms = 0, per_sm = 0, coop = 0;
  rec.check(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, 0), "cooperative attr");
  rec.check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), "SM count");
  rec.check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, ring_steps, threads, 0),
            "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
  if (!rec.ok() || !coop || per_sm < 1) {
    std::printf("coop_grid_sync: FAILED (%s)\n",
                rec.ok() ? "no cooperative launch on this device" : rec.summary().c_str());
    return 1;
  }
  const unsigned blocks = unsigned(per_sm) * unsigned(sms);
  std::fprintf(stderr, "coop_grid_sync: %d SMs x %d blocks of %u threads = %u blocks\n", sms,
               per_sm, threads, blocks);
  std::vector<unsigned> init(n);
  for (unsigned i = 0; i < n; ++i)
    init[i] = i * 2654435761u;
  unsigned *a = nullptr, *b = nullptr, *smids = nullptr;
  unsigned long long *sum = nullptr, got = 0;
  std::vector<unsigned> ids(blocks, ~0u);
  const auto start = std::chrono::steady_clock::now();
  if (rec.check(cudaMalloc(&a, n * sizeof(unsigned)), "cudaMalloc") &&
      rec.check(cudaMalloc(&b, n * sizeof(unsigned)), "cudaMalloc") &&
      rec.check(cudaMalloc(&smids, blocks * sizeof(unsigned)), "cudaMalloc") &&
      rec.check(cudaMalloc(&sum, sizeof(*sum)), "cudaMalloc") &&
      rec.check(cudaMemcpy(a, init.data(), n * sizeof(unsigned), cudaMemcpyHostToDevice),
                "cudaMemcpy") &&
      rec.check(cudaMemset(sum, 0, sizeof(*sum)), "cudaMemset")) {
    void *args[] = {&a, &b, &steps, &sum, &smids};
    dog.at("cooperative kernel");
    if (rec.check(cudaLaunchCooperativeKernel(reinterpret_cast<void *>(ring_steps), dim3(blocks),
                                              dim3(threads), args),
                  "cudaLaunchCooperativeKernel") &&
        rec.check(cudaDeviceSynchronize(), "cudaDeviceSynchronize")) {
      rec.check(cudaMemcpy(&got, sum, sizeof got, cudaMemcpyDeviceToHost), "cudaMemcpy (sum)");
      rec.check(cudaMemcpy(ids.data(), smids, blocks * sizeof(unsigned), cudaMemcpyDeviceToHost),
                "cudaMemcpy (smids)");
    }
  }
  std::fprintf(stderr, "coop_grid_sync: GPU %.3f s\n", run_test::seconds_since(start));
  cudaFree(a);
  cudaFree(b);
  cudaFree(smids);
  cudaFree(sum);
  if (!rec.ok()) {
    std::printf("coop_grid_sync: FAILED (%s)\n", rec.summary().c_str());
    return 1;
  }
  const unsigned long long want = cpu_sum(steps);
  std::printf("coop_grid_sync: %u values, %d grid syncs, sum %llu, matches the CPU: %s\n", n, steps,
              got, got == want ? "yes" : "no");
  if (!smid_out.empty()) {
    run_test::smid_log log;
    log.add("coop_grid_sync", 0, std::set<unsigned>(ids.begin(), ids.end()));
    if (!log.write(smid_out))
      return 1;
  }
  return got == want ? 0 : 1;
}
