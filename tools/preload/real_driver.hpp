// SPDX-License-Identifier: Apache-2.0
// The real CUDA driver under the hooks: libcuda.so.1 opened by hand, its cuGetProcAddress found
// with the real dlsym (the library's own dlsym is a hook), and the functions the preload library
// itself calls, each fetched once at the version that introduced its ABI.
#pragma once

#include <cuda.h>
#include <cudaTypedefs.h>

#undef cuGetProcAddress

namespace greenctx::preload {

using dlsym_fn = void *(*)(void *, const char *);

/// glibc's dlsym (the versioned symbol behind our hook), or null.
dlsym_fn real_dlsym();

/// The driver functions the library calls itself; a pointer is null where the driver lacks it.
struct real_driver {
  void *library = nullptr;
  PFN_cuGetProcAddress_v12000 get_proc_v2 = nullptr;
  PFN_cuGetProcAddress_v11030 get_proc = nullptr;

  PFN_cuDeviceGet_v2000 device_get = nullptr;
  PFN_cuDeviceGetCount_v2000 device_count = nullptr;
  PFN_cuDevicePrimaryCtxRetain_v7000 primary_retain = nullptr;
  PFN_cuDevicePrimaryCtxGetState_v7000 primary_state = nullptr;
  PFN_cuDevicePrimaryCtxRelease_v11000 primary_release = nullptr;
  PFN_cuDevicePrimaryCtxSetFlags_v11000 primary_set_flags = nullptr;
  PFN_cuDeviceGetDevResource_v12040 device_resource = nullptr;
  PFN_cuDevSmResourceSplitByCount_v12040 split = nullptr;
  PFN_cuDevResourceGenerateDesc_v12040 generate_desc = nullptr;
  PFN_cuGreenCtxCreate_v12040 green_create = nullptr;
  PFN_cuGreenCtxDestroy_v12040 green_destroy = nullptr;
  PFN_cuCtxFromGreenCtx_v12040 from_green = nullptr;
  PFN_cuGreenCtxGetDevResource_v12040 green_resource = nullptr;
  PFN_cuCtxGetDevResource_v12040 ctx_resource = nullptr;

  PFN_cuCtxSetCurrent_v4000 set_current = nullptr;
  PFN_cuCtxGetCurrent_v4000 get_current = nullptr;
  PFN_cuCtxPushCurrent_v4000 push_current = nullptr;
  PFN_cuCtxPopCurrent_v4000 pop_current = nullptr;
  PFN_cuCtxSetFlags_v12010 ctx_set_flags = nullptr;
  PFN_cuCtxGetDevice_v2000 ctx_get_device = nullptr;
  PFN_cuCtxCreate_v3020 ctx_create_v2 = nullptr;
  PFN_cuCtxCreate_v11040 ctx_create_v3 = nullptr;
  PFN_cuCtxCreate_v12050 ctx_create_v4 = nullptr;
  PFN_cuCtxDestroy_v4000 ctx_destroy = nullptr;

  PFN_cuStreamCreate_v2000 stream_create = nullptr;
  PFN_cuStreamDestroy_v4000 stream_destroy = nullptr;
  PFN_cuStreamIsCapturing_v10000 stream_is_capturing = nullptr;
  PFN_cuStreamWaitEvent_v3020 stream_wait_event = nullptr;
  PFN_cuEventCreate_v2000 event_create = nullptr;
  PFN_cuEventDestroy_v4000 event_destroy = nullptr;
  PFN_cuEventRecord_v2000 event_record = nullptr;

  PFN_cuDeviceGetAttribute_v2000 device_attribute = nullptr;
  PFN_cuFuncGetAttribute_v2020 func_attribute = nullptr;
  PFN_cuOccupancyMaxPotentialClusterSize_v11070 max_cluster_size = nullptr;

  /// Looks `name` up at ABI `version` with `flags` (CU_GET_PROC_ADDRESS_*); null when absent.
  void *lookup(const char *name, int version, cuuint64_t flags) const;
};

/// Loaded on first use (thread-safe); every field null when libcuda.so.1 cannot be opened.
const real_driver &real();

/// The calling thread's current context (null when none or on error).
inline CUcontext current_context() {
  CUcontext c = nullptr;
  if (real().get_current && real().get_current(&c) != CUDA_SUCCESS)
    c = nullptr;
  return c;
}

/// Makes `ctx` current for the scope when it is not already (a push and a pop of the real driver).
class scoped_current {
public:
  explicit scoped_current(CUcontext ctx) {
    if (current_context() != ctx && real().push_current(ctx) == CUDA_SUCCESS)
      pushed_ = true;
  }
  ~scoped_current() {
    CUcontext popped = nullptr;
    if (pushed_)
      real().pop_current(&popped);
  }
  scoped_current(const scoped_current &) = delete;
  scoped_current &operator=(const scoped_current &) = delete;

private:
  bool pushed_ = false;
};

} // namespace greenctx::preload
