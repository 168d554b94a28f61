// SPDX-License-Identifier: Apache-2.0
/* The CUDA 13.1 execution-context runtime API, on every driver from CUDA 12.4 up.
 *
 *   #include <greenctx/cuda_compat.h>     (after or instead of <cuda_runtime.h>)
 *
 * Code written for the CUDA 13.1 "Green Contexts" chapter compiles with this one include and runs
 * on older drivers: greenctx implements each function over the driver API (natively where the
 * driver has the 13.1 entry points). Link greenctx::greenctx. docs/compat-13.1.md maps every
 * function to what it is built from on 12.4, 12.5-13.0 and 13.1 drivers, and lists what differs.
 *
 * With a toolkit older than 13.1 this header declares the 13.1 types, enums and error code under
 * CUDA's names, and each function as a static inline forwarder to greenctx's exported
 * greenctx_cuda* function: no symbol of CUDA's name is exported, so nothing clashes with a newer
 * cudart. With 13.1+ headers CUDA's own declarations (types, enums) are kept and the CUDA function
 * names become macros for the greenctx_cuda* functions, so the guide's code calls greenctx, which
 * calls the driver's native 13.1 entry points where they exist. This is the default because
 * cudart 13.1+ refuses these calls on an older driver: with the CUDA 13.5 toolkit on driver 580
 * (CUDA 13.0) its cudaDevSmResourceSplit returns cudaErrorCallRequiresNewerDriver (36) and 13 of
 * 17 guide-style programs failed; routed, 15 of 17 passed. To call cudart's own functions instead
 * (a 13.1+ driver everywhere the program runs), define GREENCTX_KEEP_CUDART_API before including
 * this header. GREENCTX_ROUTE_CUDA_API, which used to turn routing on, is still accepted and now
 * changes nothing. Either way the greenctx_cuda* names can be called directly.
 *
 * Names: a function CUDA 13.1 has is greenctx_cudaX (cudaX being CUDA's name for it); greenctx's
 * own additions, which CUDA lacks, are greenctxX (greenctxGetLastErrorMessage,
 * greenctxStreamGetExecutionCtx, greenctxGraphAddKernelNodeToCtx ...). Never mix the two.
 *
 * Every function returns a cudaError_t and leaves an explanation for the calling thread,
 * greenctxGetLastErrorMessage(), also appended to the file named by GREENCTX_LOG_FILE.
 *
 * Handles: cudaExecutionContext_t and cudaDevResourceDesc_t made by greenctx are greenctx's own;
 * do not pass them to a 13.1 cudart, and the reverse. Streams and events are ordinary CUDA
 * streams and events: use them with the runtime (kernel launches, cudaStreamSynchronize,
 * cudaEventRecord ...) as usual. */
#ifndef GREENCTX_CUDA_COMPAT_H
#define GREENCTX_CUDA_COMPAT_H

#include <cuda_runtime_api.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#define GREENCTX_DEFAULT_ZERO = 0
#else
#define GREENCTX_DEFAULT_ZERO
#endif

/* ---- the 13.1 types, for older toolkits ------------------------------------------------------ */
#if CUDART_VERSION < 13010
#define GREENCTX_DECLARES_CUDA_13_1_TYPES 1

typedef struct cudaExecutionContext_st *cudaExecutionContext_t;
typedef struct cudaDevResourceDesc_st *cudaDevResourceDesc_t;

typedef enum cudaDevResourceType {
  cudaDevResourceTypeInvalid = 0,
  cudaDevResourceTypeSm = 1,
  cudaDevResourceTypeWorkqueueConfig = 1000,
  cudaDevResourceTypeWorkqueue = 10000
} cudaDevResourceType;

typedef enum cudaDevSmResourceGroup_flags {
  cudaDevSmResourceGroupDefault = 0,
  cudaDevSmResourceGroupBackfill = 1
} cudaDevSmResourceGroup_flags;

typedef enum cudaDevSmResourceSplitByCount_flags {
  cudaDevSmResourceSplitIgnoreSmCoscheduling = 1,
  cudaDevSmResourceSplitMaxPotentialClusterSize = 2
} cudaDevSmResourceSplitByCount_flags;

typedef enum cudaDevWorkqueueConfigScope {
  cudaDevWorkqueueConfigScopeDeviceCtx = 0,
  cudaDevWorkqueueConfigScopeGreenCtxBalanced = 1
} cudaDevWorkqueueConfigScope;

/* All fields are output only. */
typedef struct cudaDevSmResource {
  unsigned int smCount;
  unsigned int minSmPartitionSize;
  unsigned int smCoscheduledAlignment;
  unsigned int flags;
} cudaDevSmResource;

typedef struct cudaDevWorkqueueConfigResource {
  int device;
  unsigned int wqConcurrencyLimit;
  cudaDevWorkqueueConfigScope sharingScope;
} cudaDevWorkqueueConfigResource;

typedef struct cudaDevWorkqueueResource {
  unsigned char reserved[40];
} cudaDevWorkqueueResource;

/* 16 words; greenctx's C++ API has the same words as greenctx::sm_group_params (asserted). */
typedef struct cudaDevSmResourceGroupParams_st {
  unsigned int smCount;
  unsigned int coscheduledSmCount;
  unsigned int preferredCoscheduledSmCount;
  unsigned int flags;
  unsigned int reserved[12];
} cudaDevSmResourceGroupParams;

/* 144 bytes, the union at byte 96, as in 13.1. greenctx keeps its bookkeeping in the internal
 * padding: copy resources as whole structs. */
typedef struct cudaDevResource_st {
  cudaDevResourceType type;
  unsigned char _internal_padding[92];
  union {
    cudaDevSmResource sm;
    cudaDevWorkqueueConfigResource wqConfig;
    cudaDevWorkqueueResource wq;
    unsigned char _oversize[40];
  };
  struct cudaDevResource_st *nextResource;
} cudaDevResource;

/* New in 13.1: a stream whose execution context was destroyed. */
#define cudaErrorStreamDetached ((cudaError_t)917)

#endif /* CUDART_VERSION < 13010 */

/* ---- greenctx's implementations (exported) --------------------------------------------------- */
cudaError_t greenctx_cudaDeviceGetDevResource(int device, cudaDevResource *resource,
                                              enum cudaDevResourceType type);
cudaError_t greenctx_cudaExecutionCtxGetDevResource(cudaExecutionContext_t ctx,
                                                    cudaDevResource *resource,
                                                    enum cudaDevResourceType type);
cudaError_t greenctx_cudaStreamGetDevResource(cudaStream_t stream, cudaDevResource *resource,
                                              enum cudaDevResourceType type);
cudaError_t greenctx_cudaDevSmResourceSplitByCount(cudaDevResource *result, unsigned int *nbGroups,
                                                   const cudaDevResource *input,
                                                   cudaDevResource *remaining, unsigned int flags,
                                                   unsigned int minCount);
cudaError_t greenctx_cudaDevSmResourceSplit(cudaDevResource *result, unsigned int nbGroups,
                                            const cudaDevResource *input,
                                            cudaDevResource *remainder, unsigned int flags,
                                            cudaDevSmResourceGroupParams *groupParams);
cudaError_t greenctx_cudaDevResourceGenerateDesc(cudaDevResourceDesc_t *desc,
                                                 cudaDevResource *resources,
                                                 unsigned int nbResources);
/* Green contexts are recycled (docs/compat-13.1.md, "Recycling and detached streams"): a driver
 * green context costs about 1.5 ms to create and leaks about 4 MiB when destroyed on driver 580,
 * so greenctx never destroys one. cudaExecutionCtxDestroy marks the execution context destroyed
 * (its handle stays valid and answers cudaErrorInvalidResourceHandle, its streams answer
 * cudaErrorStreamDetached through greenctx and can still be destroyed with cudaStreamDestroy) and
 * parks the driver's green context. cudaGreenCtxCreate takes a parked one made from the same split
 * pieces (same SMs, same work-queue configuration, same device) whose earlier work has finished,
 * under a new execution context with a new id, and makes a new green context otherwise. Contexts
 * of descriptors without identity (a device's or a context's whole resource) are kept until the
 * process ends and never reused. Thread-safe. */
cudaError_t greenctx_cudaGreenCtxCreate(cudaExecutionContext_t *ctx, cudaDevResourceDesc_t desc,
                                        int device, unsigned int flags);
cudaError_t greenctx_cudaExecutionCtxDestroy(cudaExecutionContext_t ctx);
cudaError_t greenctx_cudaExecutionCtxStreamCreate(cudaStream_t *stream, cudaExecutionContext_t ctx,
                                                  unsigned int flags, int priority);
cudaError_t greenctx_cudaExecutionCtxRecordEvent(cudaExecutionContext_t ctx, cudaEvent_t event);
cudaError_t greenctx_cudaExecutionCtxWaitEvent(cudaExecutionContext_t ctx, cudaEvent_t event);
cudaError_t greenctx_cudaExecutionCtxSynchronize(cudaExecutionContext_t ctx);
cudaError_t greenctx_cudaExecutionCtxGetDevice(int *device, cudaExecutionContext_t ctx);
cudaError_t greenctx_cudaExecutionCtxGetId(cudaExecutionContext_t ctx, unsigned long long *ctxId);
cudaError_t greenctx_cudaDeviceGetExecutionCtx(cudaExecutionContext_t *ctx, int device);

/* ---- greenctx additions ---------------------------------------------------------------------- */

/* Why the calling thread's last greenctx call failed ("" after a success). The pointer stays
 * valid until the thread's next greenctx call. */
const char *greenctxGetLastErrorMessage(void);

/* Work queues: whether the driver provisioned the WorkqueueConfig the context was created with
 * (*provisioned = 1 on 13.1 drivers, which get it with the SMs; 0 below 13.1, where greenctx keeps
 * the values and reports them here but all contexts share the CUDA_DEVICE_MAX_CONNECTIONS queues,
 * and for Workqueue resources, which greenctx does not pass on). `config` (may be NULL) receives
 * what was asked, or the device default when nothing was. */
cudaError_t greenctxExecutionCtxGetWorkqueueStatus(cudaExecutionContext_t ctx,
                                                   struct cudaDevWorkqueueConfigResource *config,
                                                   int *provisioned);

/* Streams: the execution context a stream was created on by cudaExecutionCtxStreamCreate, or
 * cudaErrorStreamDetached when that context was destroyed. Streams greenctx did not create give
 * the primary execution context or the green context the driver reports. */
cudaError_t greenctxStreamGetExecutionCtx(cudaStream_t stream, cudaExecutionContext_t *ctx);

/* Graphs. The 13.0 runtime's kernel node parameters have no context field, so these add a kernel
 * node bound to an execution context (the driver's kernel node with `kern` and `ctx`: a node made
 * with `func` ignores `ctx`, measured on driver 580) and report the context of a kernel node.
 * Stream capture on a green-context stream binds the captured nodes to it without help. */
cudaError_t greenctxGraphAddKernelNodeToCtx(cudaGraphNode_t *node, cudaGraph_t graph,
                                            const cudaGraphNode_t *dependencies,
                                            size_t numDependencies, cudaKernel_t kernel,
                                            const struct cudaKernelNodeParams *params,
                                            cudaExecutionContext_t ctx);
cudaError_t greenctxGraphKernelNodeGetExecutionCtx(cudaGraphNode_t node,
                                                   cudaExecutionContext_t *ctx);

/* Adds a kernel node for params->func that runs in `ctx`. */
static inline cudaError_t greenctxGraphAddKernelNode(cudaGraphNode_t *node, cudaGraph_t graph,
                                                     const cudaGraphNode_t *dependencies,
                                                     size_t numDependencies,
                                                     const struct cudaKernelNodeParams *params,
                                                     cudaExecutionContext_t ctx) {
  cudaKernel_t kernel = NULL;
  cudaError_t rc;
  if (params == NULL)
    return greenctxGraphAddKernelNodeToCtx(node, graph, dependencies, numDependencies, NULL, params,
                                           ctx);
  rc = cudaGetKernel(&kernel, params->func);
  if (rc != cudaSuccess)
    return rc;
  return greenctxGraphAddKernelNodeToCtx(node, graph, dependencies, numDependencies, kernel, params,
                                         ctx);
}

/* ---- CUDA's names -----------------------------------------------------------------------------
 */
#if defined(GREENCTX_DECLARES_CUDA_13_1_TYPES)

static inline cudaError_t cudaDeviceGetDevResource(int device, cudaDevResource *resource,
                                                   cudaDevResourceType type) {
  return greenctx_cudaDeviceGetDevResource(device, resource, type);
}
static inline cudaError_t cudaExecutionCtxGetDevResource(cudaExecutionContext_t ctx,
                                                         cudaDevResource *resource,
                                                         cudaDevResourceType type) {
  return greenctx_cudaExecutionCtxGetDevResource(ctx, resource, type);
}
static inline cudaError_t cudaStreamGetDevResource(cudaStream_t stream, cudaDevResource *resource,
                                                   cudaDevResourceType type) {
  return greenctx_cudaStreamGetDevResource(stream, resource, type);
}
static inline cudaError_t cudaDevSmResourceSplitByCount(cudaDevResource *result,
                                                        unsigned int *nbGroups,
                                                        const cudaDevResource *input,
                                                        cudaDevResource *remaining,
                                                        unsigned int flags, unsigned int minCount) {
  return greenctx_cudaDevSmResourceSplitByCount(result, nbGroups, input, remaining, flags,
                                                minCount);
}
static inline cudaError_t cudaDevSmResourceSplit(cudaDevResource *result, unsigned int nbGroups,
                                                 const cudaDevResource *input,
                                                 cudaDevResource *remainder, unsigned int flags,
                                                 cudaDevSmResourceGroupParams *groupParams) {
  return greenctx_cudaDevSmResourceSplit(result, nbGroups, input, remainder, flags, groupParams);
}
static inline cudaError_t cudaDevResourceGenerateDesc(cudaDevResourceDesc_t *desc,
                                                      cudaDevResource *resources,
                                                      unsigned int nbResources) {
  return greenctx_cudaDevResourceGenerateDesc(desc, resources, nbResources);
}
static inline cudaError_t cudaGreenCtxCreate(cudaExecutionContext_t *ctx,
                                             cudaDevResourceDesc_t desc, int device,
                                             unsigned int flags GREENCTX_DEFAULT_ZERO) {
  return greenctx_cudaGreenCtxCreate(ctx, desc, device, flags);
}
static inline cudaError_t cudaExecutionCtxDestroy(cudaExecutionContext_t ctx) {
  return greenctx_cudaExecutionCtxDestroy(ctx);
}
static inline cudaError_t cudaExecutionCtxStreamCreate(cudaStream_t *stream,
                                                       cudaExecutionContext_t ctx,
                                                       unsigned int flags, int priority) {
  return greenctx_cudaExecutionCtxStreamCreate(stream, ctx, flags, priority);
}
static inline cudaError_t cudaExecutionCtxRecordEvent(cudaExecutionContext_t ctx,
                                                      cudaEvent_t event) {
  return greenctx_cudaExecutionCtxRecordEvent(ctx, event);
}
static inline cudaError_t cudaExecutionCtxWaitEvent(cudaExecutionContext_t ctx, cudaEvent_t event) {
  return greenctx_cudaExecutionCtxWaitEvent(ctx, event);
}
static inline cudaError_t cudaExecutionCtxSynchronize(cudaExecutionContext_t ctx) {
  return greenctx_cudaExecutionCtxSynchronize(ctx);
}
static inline cudaError_t cudaExecutionCtxGetDevice(int *device, cudaExecutionContext_t ctx) {
  return greenctx_cudaExecutionCtxGetDevice(device, ctx);
}
static inline cudaError_t cudaExecutionCtxGetId(cudaExecutionContext_t ctx,
                                                unsigned long long *ctxId) {
  return greenctx_cudaExecutionCtxGetId(ctx, ctxId);
}
static inline cudaError_t cudaDeviceGetExecutionCtx(cudaExecutionContext_t *ctx, int device) {
  return greenctx_cudaDeviceGetExecutionCtx(ctx, device);
}

#elif !defined(GREENCTX_KEEP_CUDART_API)
/* 13.1+ headers: routed to greenctx unless GREENCTX_KEEP_CUDART_API (GREENCTX_ROUTE_CUDA_API, the
 * old opt-in, is accepted and changes nothing). Function-like uses and pointers both see the
 * greenctx_cuda* function. */
#define GREENCTX_ROUTES_CUDA_API 1

#define cudaDeviceGetDevResource greenctx_cudaDeviceGetDevResource
#define cudaExecutionCtxGetDevResource greenctx_cudaExecutionCtxGetDevResource
#define cudaStreamGetDevResource greenctx_cudaStreamGetDevResource
#define cudaDevSmResourceSplitByCount greenctx_cudaDevSmResourceSplitByCount
#define cudaDevSmResourceSplit greenctx_cudaDevSmResourceSplit
#define cudaDevResourceGenerateDesc greenctx_cudaDevResourceGenerateDesc
#define cudaGreenCtxCreate greenctx_cudaGreenCtxCreate
#define cudaExecutionCtxDestroy greenctx_cudaExecutionCtxDestroy
#define cudaExecutionCtxStreamCreate greenctx_cudaExecutionCtxStreamCreate
#define cudaExecutionCtxRecordEvent greenctx_cudaExecutionCtxRecordEvent
#define cudaExecutionCtxWaitEvent greenctx_cudaExecutionCtxWaitEvent
#define cudaExecutionCtxSynchronize greenctx_cudaExecutionCtxSynchronize
#define cudaExecutionCtxGetDevice greenctx_cudaExecutionCtxGetDevice
#define cudaExecutionCtxGetId greenctx_cudaExecutionCtxGetId
#define cudaDeviceGetExecutionCtx greenctx_cudaDeviceGetExecutionCtx

#endif

#ifdef __cplusplus
} /* extern "C" */
#endif
#undef GREENCTX_DEFAULT_ZERO

#endif /* GREENCTX_CUDA_COMPAT_H */
