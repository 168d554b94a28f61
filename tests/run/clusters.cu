// SPDX-License-Identifier: Apache-2.0
// Thread block clusters of C blocks (C = 8, the portable limit, or 16, which needs
// cudaFuncAttributeNonPortableClusterSizeAllowed), launched by cudaLaunchKernelEx with the
// cluster-dimension attribute. Every block fills its shared memory, and every thread then reads
// the shared memory of each block of its cluster (distributed shared memory, map_shared_rank): the
// sums need the cluster's blocks running together. They are checked against the CPU. The grid is
// fixed (--clusters), so the output does not depend on how many clusters run at once;
// cudaOccupancyMaxActiveClusters is said on stderr. Knows nothing of greenctx.
//
//   clusters C [--clusters K] [--smid-out FILE] [--timeout-s S]
//
// When the launch (or the wait for it) fails, prints "clusters C=..: launch failed: ERROR_NAME"
// on stdout and exits 3.
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include "run_common.cuh"

#include <string>
#include <vector>

namespace cg = cooperative_groups;

namespace {

using run_test::format;
using run_test::recorder;

constexpr unsigned threads = 128;

__host__ __device__ unsigned own_value(unsigned cluster, unsigned rank, unsigned t) {
  return (cluster * 131u + rank) * 1000003u + t * 7u;
}

/// out[block][t] = sum over the cluster's blocks r of (r + 1) * block r's value at (t + r) mod
/// threads; wrong[0] counts blocks whose cluster is not `size` blocks.
__global__ void cluster_sums(unsigned *out, unsigned *wrong, unsigned *smids, unsigned size) {
  __shared__ unsigned values[threads];
  cg::cluster_group cluster = cg::this_cluster();
  const unsigned rank = cluster.block_rank(), blocks = cluster.num_blocks();
  const unsigned id = blockIdx.x / blocks;
  if (threadIdx.x == 0) {
    if (blocks != size)
      atomicAdd(wrong, 1u);
    unsigned sm;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
    smids[blockIdx.x] = sm;
  }
  values[threadIdx.x] = own_value(id, rank, threadIdx.x);
  cluster.sync(); // every block's values are written
  unsigned acc = 0;
  for (unsigned r = 0; r < blocks; ++r) {
    const unsigned *remote = cluster.map_shared_rank(values, r);
    acc += (r + 1) * remote[(threadIdx.x + r) % threads];
  }
  cluster.sync(); // no block leaves (its shared memory) while others still read it
  out[blockIdx.x * threads + threadIdx.x] = acc;
}

} // namespace

int main(int argc, char **argv) {
  unsigned size = 0, clusters = 64;
  std::string smid_out;
  double timeout_s = 60;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--clusters" && i + 1 < argc)
      clusters = unsigned(std::atoi(argv[++i]));
    else if (a == "--smid-out" && i + 1 < argc)
      smid_out = argv[++i];
    else if (a == "--timeout-s" && i + 1 < argc)
      timeout_s = std::atof(argv[++i]);
    else if (size == 0 && a.find_first_not_of("0123456789") == std::string::npos && !a.empty())
      size = unsigned(std::atoi(a.c_str()));
    else
      size = ~0u;
  }
  if (size < 1 || size > 16 || clusters < 1 || timeout_s <= 0) {
    std::fprintf(stderr, "usage: clusters C [--clusters K] [--smid-out FILE] [--timeout-s S]   "
                         "(C in 1..16)\n");
    return 2;
  }
  int devices = 0;
  const cudaError_t rc = cudaGetDeviceCount(&devices);
  if (rc != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "clusters: no CUDA device (%s): skipped\n",
                 rc == cudaSuccess ? "none found" : cudaGetErrorString(rc));
    return 77;
  }
  run_test::watchdog dog("clusters", timeout_s);
  recorder rec(format("clusters C=%u", size));
  int major = 0;
  rec.check(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0), "CC");
  if (rec.ok() && major < 9)
    rec.fail(format("compute capability %d.x has no thread block clusters", major));
  if (rec.ok() && size > 8)
    rec.check(cudaFuncSetAttribute(cluster_sums, cudaFuncAttributeNonPortableClusterSizeAllowed, 1),
              "cudaFuncSetAttribute(NonPortableClusterSizeAllowed)");
  if (!rec.ok()) {
    std::printf("clusters C=%u: FAILED (%s)\n", size, rec.summary().c_str());
    return 1;
  }
  const unsigned blocks = clusters * size;
  cudaLaunchAttribute attr[1] = {};
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = size;
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(blocks);
  cfg.blockDim = dim3(threads);
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  int active = -1;
  const cudaError_t occ = cudaOccupancyMaxActiveClusters(&active, cluster_sums, &cfg);
  if (occ == cudaSuccess)
    std::fprintf(stderr, "clusters C=%u: cudaOccupancyMaxActiveClusters = %d\n", size, active);
  else
    std::fprintf(stderr, "clusters C=%u: cudaOccupancyMaxActiveClusters failed: %s\n", size,
                 cudaGetErrorName(occ));
  cudaGetLastError();

  unsigned *out = nullptr, *wrong = nullptr, *smids = nullptr;
  if (!rec.check(cudaMalloc(&out, size_t(blocks) * threads * sizeof(unsigned)), "cudaMalloc") ||
      !rec.check(cudaMalloc(&wrong, sizeof(unsigned)), "cudaMalloc") ||
      !rec.check(cudaMalloc(&smids, blocks * sizeof(unsigned)), "cudaMalloc") ||
      !rec.check(cudaMemset(wrong, 0, sizeof(unsigned)), "cudaMemset") ||
      !rec.check(cudaDeviceSynchronize(), "cudaDeviceSynchronize")) {
    std::printf("clusters C=%u: FAILED (%s)\n", size, rec.summary().c_str());
    return 1;
  }
  dog.at("cluster kernel");
  cudaError_t launch = cudaLaunchKernelEx(&cfg, cluster_sums, out, wrong, smids, size);
  if (launch == cudaSuccess)
    launch = cudaDeviceSynchronize();
  if (launch != cudaSuccess) {
    std::fprintf(stderr, "clusters C=%u: %u clusters: %s (%s)\n", size, clusters,
                 cudaGetErrorName(launch), cudaGetErrorString(launch));
    std::printf("clusters C=%u: launch failed: %s\n", size, cudaGetErrorName(launch));
    return 3;
  }
  std::vector<unsigned> got(size_t(blocks) * threads), ids(blocks);
  unsigned bad = 0;
  rec.check(cudaMemcpy(got.data(), out, got.size() * sizeof(unsigned), cudaMemcpyDeviceToHost),
            "cudaMemcpy");
  rec.check(cudaMemcpy(&bad, wrong, sizeof bad, cudaMemcpyDeviceToHost), "cudaMemcpy");
  rec.check(cudaMemcpy(ids.data(), smids, blocks * sizeof(unsigned), cudaMemcpyDeviceToHost),
            "cudaMemcpy");
  cudaFree(out);
  cudaFree(wrong);
  cudaFree(smids);
  if (!rec.ok()) {
    std::printf("clusters C=%u: FAILED (%s)\n", size, rec.summary().c_str());
    return 1;
  }
  size_t mismatches = 0;
  unsigned long long checksum = 0;
  for (unsigned b = 0; b < blocks; ++b)
    for (unsigned t = 0; t < threads; ++t) {
      unsigned want = 0;
      for (unsigned r = 0; r < size; ++r)
        want += (r + 1) * own_value(b / size, r, (t + r) % threads);
      const unsigned v = got[size_t(b) * threads + t];
      mismatches += v != want;
      checksum += v;
    }
  const bool ok = mismatches == 0 && bad == 0;
  std::printf("clusters C=%u: %u clusters of %u blocks, %u with a wrong cluster size, distributed "
              "shared memory sums %llu, matches the CPU: %s\n",
              size, clusters, size, bad, checksum, mismatches == 0 ? "yes" : "no");
  if (!smid_out.empty()) {
    run_test::smid_log log;
    log.add(format("clusters_%u", size), 0, std::set<unsigned>(ids.begin(), ids.end()));
    if (!log.write(smid_out))
      return 1;
  }
  return ok ? 0 : 1;
}
