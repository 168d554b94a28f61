// SPDX-License-Identifier: Apache-2.0
#include "greenctx/core/occupancy.hpp"

#include "driver/driver_api.hpp"
#include "greenctx/core/current_context.hpp"
#include "greenctx/core/stream.hpp"
#include "greenctx/plan/error.hpp"
#include "core/kernels.hpp"

namespace greenctx {

unsigned max_active_sm_clusters(const execution_context_ref &ctx, unsigned cluster_size) {
  constexpr const char *api = "greenctx::max_active_sm_clusters";
  if (cluster_size == 0 || cluster_size > 16)
    throw request_error(CUDA_ERROR_INVALID_VALUE, api,
                        "cluster size " + std::to_string(cluster_size) +
                            " is outside 1..16 (8 is portable, 16 the H100/H200 maximum)");
  int per_sm = 0, per_block = 0;
  GREENCTX_CALL(cuDeviceGetAttribute, &per_sm,
                CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, ctx.device());
  GREENCTX_CALL(cuDeviceGetAttribute, &per_block,
                CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, ctx.device());
  // More than half an SM's shared memory: one block per SM.
  const int shared = std::min(per_block, per_sm / 2 + 1024);
  const stream s = ctx.create_stream();
  int clusters = 0;
  {
    scoped_current_context current(ctx); // cuKernelGetFunction works in the current context
    CUfunction f = nullptr;
    GREENCTX_CALL(cuKernelGetFunction, &f, detail::kernel(detail::kernel_id::spin));
    GREENCTX_CALL(cuFuncSetAttribute, f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, shared);
    if (cluster_size > 8)
      GREENCTX_CALL(cuFuncSetAttribute, f, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1);
    CUlaunchAttribute attr{};
    attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attr.value.clusterDim.x = cluster_size;
    attr.value.clusterDim.y = 1;
    attr.value.clusterDim.z = 1;
    CUlaunchConfig config{};
    config.gridDimX = cluster_size;
    config.gridDimY = config.gridDimZ = 1;
    config.blockDimX = 32;
    config.blockDimY = config.blockDimZ = 1;
    config.sharedMemBytes = static_cast<unsigned>(shared);
    config.hStream = s.native_handle();
    config.attrs = &attr;
    config.numAttrs = 1;
    GREENCTX_CALL(cuOccupancyMaxActiveClusters, &clusters, f, &config);
  }
  return static_cast<unsigned>(clusters);
}

} // namespace greenctx
