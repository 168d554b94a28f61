// SPDX-License-Identifier: Apache-2.0
// A library that asks for cuDriverGetVersion through the cuGetProcAddress it is given and returns
// what it was told, and what a work-queue query is answered. Built three times: naming
// cuDevSmResourceSplit (as code on the driver API built for 13.1 does), not naming it, and naming
// it as a CUDA 13.1+ runtime (which also holds the text of its errors), to show that only the first
// is told 13010 under greenctx run --cuda-13.1.
#include <cuda.h>
#include <cudaTypedefs.h>

#undef cuGetProcAddress

using get_proc_fn = CUresult (*)(const char *, void **, int, cuuint64_t,
                                 CUdriverProcAddressQueryResult *);

#ifdef GREENCTX_PROBE_IS_RUNTIME
// What every CUDA runtime holds: the text of its own errors.
extern "C" __attribute__((visibility("default"))) const char *probe_error_name() {
  return "cudaErrorSoftwareValidityNotEstablished";
}
#endif

#ifdef GREENCTX_PROBE_KNOWS_13_1
// What a 13.1 runtime holds: the name of the entry point it asks the driver for.
extern "C" __attribute__((visibility("default"))) const char *probe_asks_for() {
  return "cuDevSmResourceSplit";
}
#endif

extern "C" __attribute__((visibility("default"))) int probe_version_seen(void *get_proc) {
  void *fn = nullptr;
  if (reinterpret_cast<get_proc_fn>(get_proc)("cuDriverGetVersion", &fn, 2020, 0, nullptr) !=
          CUDA_SUCCESS ||
      !fn)
    return -1;
  int version = 0;
  if (reinterpret_cast<CUresult (*)(int *)>(fn)(&version) != CUDA_SUCCESS)
    return -2;
  return version;
}

// What device 0's work-queue configuration resource (type 1000, CUDA 13.1's) is answered to this
// library: cuDeviceGetDevResource's result.
extern "C" __attribute__((visibility("default"))) int probe_workqueue_query(void *get_proc) {
  void *fn = nullptr;
  if (reinterpret_cast<get_proc_fn>(get_proc)("cuDeviceGetDevResource", &fn, 12040, 0, nullptr) !=
          CUDA_SUCCESS ||
      !fn)
    return -1;
  CUdevResource r{};
  return reinterpret_cast<PFN_cuDeviceGetDevResource_v12040>(fn)(
      0, &r, static_cast<CUdevResourceType>(1000));
}
