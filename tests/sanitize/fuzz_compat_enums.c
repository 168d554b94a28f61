// SPDX-License-Identifier: Apache-2.0
/* The compat layer's calls that take an enum, made from C: a C caller may pass any int as the enum
 * (C++ may not form such a value, so fuzz_compat.cpp calls these with the input's ints). */
#include <greenctx/cuda_compat.h>

cudaError_t fuzz_device_get_dev_resource(int device, cudaDevResource *resource, int type) {
  return cudaDeviceGetDevResource(device, resource, (enum cudaDevResourceType)type);
}

cudaError_t fuzz_ctx_get_dev_resource(cudaExecutionContext_t ctx, cudaDevResource *resource,
                                      int type) {
  return cudaExecutionCtxGetDevResource(ctx, resource, (enum cudaDevResourceType)type);
}

cudaError_t fuzz_stream_get_dev_resource(cudaStream_t stream, cudaDevResource *resource, int type) {
  return cudaStreamGetDevResource(stream, resource, (enum cudaDevResourceType)type);
}
