// SPDX-License-Identifier: Apache-2.0
#include "explain.hpp"

#include "contexts.hpp"
#include "report.hpp"

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace greenctx::preload {
namespace {

// A kernel that does nothing, for asking the occupancy calculator about clusters in a partition
// the program does not have (its own kernels are loaded in its context only). Compiled by the
// driver from PTX when first needed.
constexpr const char probe_ptx[] = ".version 8.0\n"
                                   ".target sm_90\n"
                                   ".address_size 64\n"
                                   ".visible .entry greenctx_cluster_probe()\n"
                                   "{\n"
                                   "  ret;\n"
                                   "}\n";

struct probe_driver {
  PFN_cuModuleLoadData_v2000 load = nullptr;
  PFN_cuModuleGetFunction_v2000 get_function = nullptr;
  PFN_cuModuleUnload_v2000 unload = nullptr;
  PFN_cuFuncSetAttribute_v9000 set_attribute = nullptr;
  PFN_cuOccupancyMaxActiveClusters_v11070 active_clusters = nullptr;
  bool ok() const { return load && get_function && unload && set_attribute && active_clusters; }
};

const probe_driver &probe_fns() {
  static const probe_driver p = [] {
    probe_driver d;
    const cuuint64_t f = CU_GET_PROC_ADDRESS_LEGACY_STREAM;
    d.load =
        reinterpret_cast<PFN_cuModuleLoadData_v2000>(real().lookup("cuModuleLoadData", 2000, f));
    d.get_function = reinterpret_cast<PFN_cuModuleGetFunction_v2000>(
        real().lookup("cuModuleGetFunction", 2000, f));
    d.unload = reinterpret_cast<PFN_cuModuleUnload_v2000>(real().lookup("cuModuleUnload", 2000, f));
    d.set_attribute = reinterpret_cast<PFN_cuFuncSetAttribute_v9000>(
        real().lookup("cuFuncSetAttribute", 9000, f));
    d.active_clusters = reinterpret_cast<PFN_cuOccupancyMaxActiveClusters_v11070>(
        real().lookup("cuOccupancyMaxActiveClusters", 11070, f));
    return d;
  }();
  return p;
}

// The blocks of one cluster in `config`, or 0 when it names none.
unsigned cluster_in_config(const CUlaunchConfig &launch) {
  for (unsigned i = 0; i < launch.numAttrs; ++i)
    if (launch.attrs[i].id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION) {
      const auto &d = launch.attrs[i].value.clusterDim;
      return d.x * d.y * d.z;
    }
  return 0;
}

// The blocks of one cluster `f` was compiled with (__cluster_dims__), or 0.
unsigned cluster_in_kernel(CUfunction f) {
  int x = 0, y = 0, z = 0;
  if (!real().func_attribute ||
      real().func_attribute(&x, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, f) != CUDA_SUCCESS ||
      x <= 0)
    return 0;
  real().func_attribute(&y, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT, f);
  real().func_attribute(&z, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH, f);
  return static_cast<unsigned>(x * std::max(y, 1) * std::max(z, 1));
}

// Clusters of `cluster` blocks of `block` threads and `shared_bytes` of shared memory each that
// run at once in context `ctx`, by the occupancy calculator over the probe kernel; null when it
// could not be asked.
std::optional<int> active_clusters(CUcontext ctx, unsigned cluster, const unsigned (&block)[3],
                                   unsigned shared_bytes) {
  const real_driver &d = real();
  const probe_driver &p = probe_fns();
  if (!p.ok() || d.push_current(ctx) != CUDA_SUCCESS)
    return std::nullopt;
  std::optional<int> answer;
  CUmodule module = nullptr;
  CUfunction fn = nullptr;
  if (p.load(&module, probe_ptx) == CUDA_SUCCESS) {
    if (p.get_function(&fn, module, "greenctx_cluster_probe") == CUDA_SUCCESS &&
        p.set_attribute(fn, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1) ==
            CUDA_SUCCESS &&
        p.set_attribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                        static_cast<int>(shared_bytes)) == CUDA_SUCCESS) {
      CUlaunchAttribute attr{};
      attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
      attr.value.clusterDim.x = cluster;
      attr.value.clusterDim.y = 1;
      attr.value.clusterDim.z = 1;
      CUlaunchConfig c{};
      c.gridDimX = cluster;
      c.gridDimY = c.gridDimZ = 1;
      c.blockDimX = block[0];
      c.blockDimY = block[1];
      c.blockDimZ = block[2];
      c.sharedMemBytes = shared_bytes;
      c.attrs = &attr;
      c.numAttrs = 1;
      int clusters = 0;
      if (p.active_clusters(&clusters, fn, &c) == CUDA_SUCCESS)
        answer = clusters;
    }
    p.unload(module);
  }
  CUcontext popped = nullptr;
  d.pop_current(&popped);
  return answer;
}

// Whether a cluster of `cluster` blocks of `config`'s shape fits a green context of `sms` SMs of
// `device` (made, asked and destroyed here: each such probe costs the driver's create/destroy
// leak, about 4 MiB of device memory on driver 580). Null when it could not be asked.
std::optional<bool> fits_partition(int device, unsigned sms, unsigned cluster,
                                   const CUlaunchConfig &launch, unsigned shared_bytes) {
  const real_driver &d = real();
  if (!d.device_resource || !d.split || !d.generate_desc || !d.green_create)
    return std::nullopt;
  CUdevResource all{}, group{};
  unsigned n = 1;
  CUdevResourceDesc desc = nullptr;
  if (d.device_resource(device, &all, CU_DEV_RESOURCE_TYPE_SM) != CUDA_SUCCESS ||
      d.split(&group, &n, &all, nullptr, config().split_flags, sms) != CUDA_SUCCESS || n != 1 ||
      group.sm.smCount != sms || d.generate_desc(&desc, &group, 1) != CUDA_SUCCESS)
    return std::nullopt;
  CUgreenCtx green = nullptr;
  CUcontext ctx = nullptr;
  if (d.green_create(&green, desc, device, CU_GREEN_CTX_DEFAULT_STREAM) != CUDA_SUCCESS)
    return std::nullopt;
  std::optional<bool> answer;
  if (d.from_green(&ctx, green) == CUDA_SUCCESS)
    if (const std::optional<int> clusters = active_clusters(
            ctx, cluster, {launch.blockDimX, launch.blockDimY, launch.blockDimZ}, shared_bytes))
      answer = *clusters > 0;
  d.green_destroy(green);
  return answer;
}

// The sizes one split by count gives on `device`, ascending (minCount 1 to every SM).
std::vector<unsigned> partition_sizes(int device) {
  const real_driver &d = real();
  std::vector<unsigned> sizes;
  CUdevResource all{};
  if (!d.device_resource ||
      d.device_resource(device, &all, CU_DEV_RESOURCE_TYPE_SM) != CUDA_SUCCESS)
    return sizes;
  for (unsigned m = 1; m <= all.sm.smCount; ++m) {
    CUdevResource group{};
    unsigned n = 1;
    if (d.split(&group, &n, &all, nullptr, config().split_flags, m) == CUDA_SUCCESS && n == 1 &&
        (sizes.empty() || sizes.back() != group.sm.smCount))
      sizes.push_back(group.sm.smCount);
  }
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return sizes;
}

// The green contexts made to prove groups, by their pieces' bytes, until the program takes one
// (cuGreenCtxCreate of a descriptor of the same pieces): a second context of the same SMs would
// hold another 5 MiB of device memory on driver 580.
struct proof_context {
  CUdevice device = 0;
  CUgreenCtx green = nullptr;
  CUcontext ctx = nullptr;
};
std::mutex proofs_mutex;
std::map<std::string, proof_context> &proofs() {
  static auto *m = new std::map<std::string, proof_context>; // never destroyed
  return *m;
}
std::string pieces_key(const std::vector<CUdevResource> &pieces) {
  return std::string(reinterpret_cast<const char *>(pieces.data()),
                     pieces.size() * sizeof(CUdevResource));
}

} // namespace

std::optional<CUgreenCtx> take_proof_context(CUdevice device,
                                             const std::vector<CUdevResource> &pieces) {
  std::lock_guard lock(proofs_mutex);
  const auto it = proofs().find(pieces_key(pieces));
  if (it == proofs().end() || it->second.device != device)
    return std::nullopt;
  const CUgreenCtx green = it->second.green;
  proofs().erase(it); // the program's now: it may destroy it
  return green;
}

std::optional<unsigned> proven_clusters(CUdevice device, const std::vector<CUdevResource> &pieces,
                                        unsigned cluster) {
  const real_driver &d = real();
  if (!d.generate_desc || !d.green_create || !d.from_green || !d.device_attribute)
    return std::nullopt;
  CUcontext ctx = nullptr;
  {
    std::lock_guard lock(proofs_mutex);
    const std::string key = pieces_key(pieces);
    if (auto it = proofs().find(key); it != proofs().end()) {
      ctx = it->second.ctx;
    } else {
      std::vector<CUdevResource> raw = pieces;
      CUdevResourceDesc desc = nullptr;
      CUgreenCtx green = nullptr;
      if (d.generate_desc(&desc, raw.data(), static_cast<unsigned>(raw.size())) != CUDA_SUCCESS ||
          d.green_create(&green, desc, device, CU_GREEN_CTX_DEFAULT_STREAM) != CUDA_SUCCESS ||
          d.from_green(&ctx, green) != CUDA_SUCCESS)
        return std::nullopt;
      proofs().emplace(key, proof_context{device, green, ctx});
    }
  }
  // More than half an SM's shared memory per block: one block per SM, as greenctx's library
  // proves a group (src/core/occupancy.cpp).
  int per_sm = 0, per_block = 0;
  d.device_attribute(&per_sm, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, device);
  d.device_attribute(&per_block, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, device);
  const int shared = std::min(per_block, per_sm / 2 + 1024);
  const std::optional<int> n =
      active_clusters(ctx, cluster, {32, 1, 1}, static_cast<unsigned>(std::max(shared, 0)));
  if (!n)
    return std::nullopt;
  return static_cast<unsigned>(std::max(*n, 0));
}

void explain_cluster_refusal(CUfunction f, const CUlaunchConfig &launch) {
  static std::atomic<bool> said{false};
  confined_context *c = current_confined();
  if (!c || said.exchange(true))
    return;
  const unsigned cluster = std::max(cluster_in_config(launch), cluster_in_kernel(f));
  CUdevResource mine{};
  unsigned unit = 0, sms = 0;
  if (real().ctx_resource &&
      real().ctx_resource(c->ctx.load(), &mine, CU_DEV_RESOURCE_TYPE_SM) == CUDA_SUCCESS) {
    sms = mine.sm.smCount;
    unit = mine.sm.smCoscheduledAlignment;
  }
  int largest = 0;
  if (real().max_cluster_size && real().max_cluster_size(&largest, f, &launch) != CUDA_SUCCESS)
    largest = 0;
  int static_shared = 0;
  if (real().func_attribute)
    real().func_attribute(&static_shared, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f);
  const unsigned shared = launch.sharedMemBytes + static_cast<unsigned>(std::max(static_shared, 0));

  std::string why = "a cluster of " + (cluster ? std::to_string(cluster) + " blocks" : "blocks") +
                    " cannot run in this partition of " + std::to_string(sms) +
                    " SMs (CUDA_ERROR_INVALID_CLUSTER_SIZE): a cluster's blocks must run at once "
                    "on SMs the hardware co-schedules";
  if (unit)
    why += ", and this partition's SMs come in co-scheduled units of " + std::to_string(unit);
  if (largest > 0)
    why += "; the largest cluster of this kernel that fits here has " + std::to_string(largest) +
           " block" + (largest == 1 ? "" : "s");
  // Which --sms would run it: green contexts of larger sizes are probed (a kernel of the same
  // block size and shared memory), largest first, then by bisection: a few probes at most.
  std::string fix;
  if (cluster > 1) {
    std::vector<unsigned> sizes = partition_sizes(c->device);
    sizes.erase(std::remove_if(sizes.begin(), sizes.end(), [&](unsigned s) { return s <= sms; }),
                sizes.end());
    if (!sizes.empty()) {
      const std::optional<bool> at_most =
          fits_partition(c->device, sizes.back(), cluster, launch, shared);
      if (at_most && !*at_most) {
        fix = "; no partition of this GPU runs it (probed: not even " +
              std::to_string(sizes.back()) + " SMs): use clusters of at most " +
              std::to_string(std::max(largest, 1)) + " blocks, or run it unconfined";
      } else if (at_most) {
        std::size_t lo = 0, hi = sizes.size() - 1; // sizes[hi] fits
        while (lo < hi) {
          const std::size_t mid = (lo + hi) / 2;
          const std::optional<bool> ok =
              fits_partition(c->device, sizes[mid], cluster, launch, shared);
          if (!ok)
            break;
          if (*ok)
            hi = mid;
          else
            lo = mid + 1;
        }
        fix = "; --sms " + std::to_string(sizes[hi]) + " runs it (greenctx probed a partition of " +
              std::to_string(sizes[hi]) + " SMs), or use clusters of at most " +
              std::to_string(std::max(largest, 1)) + " blocks";
      }
    }
  }
  if (fix.empty())
    fix = "; use clusters of at most " + std::to_string(std::max(largest, 1)) +
          " blocks, or a larger --sms (greenctx info lists the sizes)";
  warning(why + fix);
}

} // namespace greenctx::preload
