// SPDX-License-Identifier: Apache-2.0
// Graph helpers: kernel nodes bound to an execution context (greenctx additions; the 13.0
// runtime's kernel node parameters have no context field).
#include "compat/errors.hpp"
#include "compat/registry.hpp"
#include "driver/driver_api.hpp"

using namespace greenctx;
using namespace greenctx::compat;

extern "C" {

cudaError_t greenctxGraphAddKernelNodeToCtx(cudaGraphNode_t *node, cudaGraph_t graph,
                                            const cudaGraphNode_t *dependencies,
                                            size_t numDependencies, cudaKernel_t kernel,
                                            const struct cudaKernelNodeParams *params,
                                            cudaExecutionContext_t ctx) {
  return guarded([&] {
    constexpr const char *api = "greenctxGraphAddKernelNode";
    require_pointer(node, api, "node");
    require_pointer(graph, api, "graph");
    require_pointer(params, api, "params");
    require_pointer(kernel, api, "kernel");
    checked_context(ctx, api);
    CUDA_KERNEL_NODE_PARAMS_v2 p{};
    // `kern` + `ctx`: with `func` set the driver ignores `ctx` (measured on 580).
    p.kern = reinterpret_cast<CUkernel>(kernel);
    p.ctx = ctx->ref.context();
    p.gridDimX = params->gridDim.x;
    p.gridDimY = params->gridDim.y;
    p.gridDimZ = params->gridDim.z;
    p.blockDimX = params->blockDim.x;
    p.blockDimY = params->blockDim.y;
    p.blockDimZ = params->blockDim.z;
    p.sharedMemBytes = params->sharedMemBytes;
    p.kernelParams = params->kernelParams;
    p.extra = params->extra;
    GREENCTX_CALL(cuGraphAddKernelNode, reinterpret_cast<CUgraphNode *>(node),
                  reinterpret_cast<CUgraph>(graph),
                  reinterpret_cast<const CUgraphNode *>(dependencies), numDependencies, &p);
  });
}

cudaError_t greenctxGraphKernelNodeGetExecutionCtx(cudaGraphNode_t node,
                                                   cudaExecutionContext_t *ctx) {
  return guarded([&] {
    constexpr const char *api = "greenctxGraphKernelNodeGetExecutionCtx";
    require_pointer(node, api, "node");
    require_pointer(ctx, api, "ctx");
    CUDA_KERNEL_NODE_PARAMS_v2 p{};
    GREENCTX_CALL(cuGraphKernelNodeGetParams, reinterpret_cast<CUgraphNode>(node), &p);
    if (!p.ctx)
      refuse(CUDA_ERROR_NOT_FOUND, api,
             "the node has no context of its own: it runs in the context current at launch");
    // A green context's driver context is found only when greenctx made or met it.
    cudaExecutionContext_t known = known_context(p.ctx);
    *ctx =
        known ? known : context_for(execution_context_ref::primary(p.ctx, device_of(p.ctx)), api);
  });
}

} // extern "C"
