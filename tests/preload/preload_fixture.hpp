// SPDX-License-Identifier: Apache-2.0
// What the preload library's CPU tests share: the fake driver and the library loaded into the test
// process with the settings `greenctx run` would give, the driver API as the program gets it
// (through the library's cuGetProcAddress), and the fake driver's log.
#pragma once

#include <cuda.h>
#include <cudaTypedefs.h>

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#undef cuGetProcAddress

namespace preload_test {

// Where every process of the test (death-test children too) appends its report line.
inline const std::string &report_path() {
  static const std::string p = "/tmp/greenctx-preload-test-" + std::to_string(getpid()) + ".jsonl";
  return p;
}

// The fake driver first (the library's dlopen("libcuda.so.1") then finds it by its soname), the
// settings `greenctx run` would give (unless the test's environment has them), then the library.
inline void *preload() {
  static void *h = [] {
    if (!dlopen(GREENCTX_FAKE_CUDA_PATH, RTLD_NOW | RTLD_GLOBAL))
      return static_cast<void *>(nullptr);
    // Measuring alone, or the 13.1 API alone (GREENCTX_TEST_UNCONFINED): nothing is confined.
    if (!std::getenv("GREENCTX_RUN_MEASURE") && !std::getenv("GREENCTX_TEST_UNCONFINED"))
      setenv("GREENCTX_RUN_SMS", "16", 0);
    setenv("GREENCTX_RUN_DEVICES", "0", 0);
    setenv("GREENCTX_RUN_REPORT", report_path().c_str(), 0);
    return dlopen(GREENCTX_PRELOAD_PATH, RTLD_NOW | RTLD_GLOBAL);
  }();
  return h;
}

template <class F> F get(const char *name, int version, bool per_thread = false) {
  auto gp = reinterpret_cast<PFN_cuGetProcAddress_v12000>(dlsym(preload(), "cuGetProcAddress_v2"));
  void *p = nullptr;
  CUdriverProcAddressQueryResult found{};
  const cuuint64_t flags = per_thread ? CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM
                                      : CU_GET_PROC_ADDRESS_LEGACY_STREAM;
  if (!gp || gp(name, &p, version, flags, &found) != CUDA_SUCCESS)
    return nullptr;
  return reinterpret_cast<F>(p);
}

inline std::vector<std::string> take_log() {
  using take_fn = std::vector<std::string> *(*)();
  auto take = reinterpret_cast<take_fn>(dlsym(RTLD_DEFAULT, "fake_cuda_take_log"));
  std::vector<std::string> *l = take();
  std::vector<std::string> out = std::move(*l);
  delete l;
  return out;
}

inline std::string h(const void *p) {
  return "h" + std::to_string(reinterpret_cast<std::uintptr_t>(p));
}

struct api {
  PFN_cuCtxSetCurrent_v4000 set_current = get<PFN_cuCtxSetCurrent_v4000>("cuCtxSetCurrent", 4000);
  PFN_cuCtxGetCurrent_v4000 get_current = get<PFN_cuCtxGetCurrent_v4000>("cuCtxGetCurrent", 4000);
  PFN_cuCtxCreate_v3020 ctx_create = get<PFN_cuCtxCreate_v3020>("cuCtxCreate", 3020);
  PFN_cuCtxDestroy_v4000 ctx_destroy = get<PFN_cuCtxDestroy_v4000>("cuCtxDestroy", 4000);
  PFN_cuStreamCreate_v2000 stream_create = get<PFN_cuStreamCreate_v2000>("cuStreamCreate", 2000);
  PFN_cuStreamGetFlags_v5050 get_flags = get<PFN_cuStreamGetFlags_v5050>("cuStreamGetFlags", 5050);
  PFN_cuStreamDestroy_v4000 stream_destroy =
      get<PFN_cuStreamDestroy_v4000>("cuStreamDestroy", 4000);
  PFN_cuLaunchKernel_v4000 launch = get<PFN_cuLaunchKernel_v4000>("cuLaunchKernel", 4000);
  PFN_cuLaunchKernel_v7000_ptsz launch_ptsz =
      get<PFN_cuLaunchKernel_v7000_ptsz>("cuLaunchKernel", 7000, true);
  PFN_cuMemcpyHtoD_v3020 copy = get<PFN_cuMemcpyHtoD_v3020>("cuMemcpyHtoD", 3020);
  PFN_cuMemcpyHtoD_v7000_ptds copy_ptds =
      get<PFN_cuMemcpyHtoD_v7000_ptds>("cuMemcpyHtoD", 7000, true);
  PFN_cuStreamWaitEvent_v3020 wait_event =
      get<PFN_cuStreamWaitEvent_v3020>("cuStreamWaitEvent", 3020);
  PFN_cuStreamSynchronize_v2000 sync =
      get<PFN_cuStreamSynchronize_v2000>("cuStreamSynchronize", 2000);
  PFN_cuCtxSynchronize_v2000 ctx_sync = get<PFN_cuCtxSynchronize_v2000>("cuCtxSynchronize", 2000);
  PFN_cuDeviceGetAttribute_v2000 attribute =
      get<PFN_cuDeviceGetAttribute_v2000>("cuDeviceGetAttribute", 2000);
  PFN_cuDeviceGetDevResource_v12040 resource =
      get<PFN_cuDeviceGetDevResource_v12040>("cuDeviceGetDevResource", 12040);
  PFN_cuDevicePrimaryCtxRetain_v7000 retain =
      get<PFN_cuDevicePrimaryCtxRetain_v7000>("cuDevicePrimaryCtxRetain", 7000);
  PFN_cuCtxPushCurrent_v4000 push = get<PFN_cuCtxPushCurrent_v4000>("cuCtxPushCurrent", 4000);
  PFN_cuCtxPopCurrent_v4000 pop = get<PFN_cuCtxPopCurrent_v4000>("cuCtxPopCurrent", 4000);
  PFN_cuStreamGetCtx_v9020 stream_ctx = get<PFN_cuStreamGetCtx_v9020>("cuStreamGetCtx", 9020);
  PFN_cuStreamGetCtx_v12050 stream_ctx_v2 = get<PFN_cuStreamGetCtx_v12050>("cuStreamGetCtx", 12050);
  PFN_cuStreamGetGreenCtx_v12040 stream_green =
      get<PFN_cuStreamGetGreenCtx_v12040>("cuStreamGetGreenCtx", 12040);
  PFN_cuPointerGetAttribute_v4000 pointer =
      get<PFN_cuPointerGetAttribute_v4000>("cuPointerGetAttribute", 4000);
  PFN_cuPointerGetAttributes_v7000 pointers =
      get<PFN_cuPointerGetAttributes_v7000>("cuPointerGetAttributes", 7000);
  PFN_cuGraphInstantiateWithParams_v12000 instantiate =
      get<PFN_cuGraphInstantiateWithParams_v12000>("cuGraphInstantiateWithParams", 12000);

  int sm_count(CUdevice d) const {
    int n = -1;
    EXPECT_EQ(attribute(&n, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, d), CUDA_SUCCESS);
    return n;
  }

  CUresult run(CUstream s) const {
    return launch(nullptr, 1, 1, 1, 1, 1, 1, 0, s, nullptr, nullptr);
  }
};

inline const api &cu() {
  static const api a;
  return a;
}

inline const CUcontext primary0 = reinterpret_cast<CUcontext>(0x100);
inline const CUcontext primary1 = reinterpret_cast<CUcontext>(0x110);

// The shared green context, made current where the program makes device 0's primary current.
inline CUcontext confined() {
  EXPECT_EQ(cu().set_current(primary0), CUDA_SUCCESS);
  CUcontext c = nullptr;
  cu().get_current(&c);
  return c;
}

inline bool contains(const std::vector<std::string> &log, const std::string &line) {
  return std::find(log.begin(), log.end(), line) != log.end();
}

// The index of the first line starting with `prefix`, or -1.
inline long find_prefix(const std::vector<std::string> &log, const std::string &prefix) {
  for (std::size_t i = 0; i < log.size(); ++i)
    if (log[i].rfind(prefix, 0) == 0)
      return static_cast<long>(i);
  return -1;
}

} // namespace preload_test
