// SPDX-License-Identifier: Apache-2.0
#include "real_driver.hpp"

#include "report.hpp"

#include <dlfcn.h>
#include <execinfo.h>

#include <cstdio>
#include <string>

namespace greenctx::preload {

dlsym_fn real_dlsym() {
  static const dlsym_fn fn = [] {
    auto *f = reinterpret_cast<dlsym_fn>(dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34"));
    if (!f)
      f = reinterpret_cast<dlsym_fn>(dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5"));
    return f;
  }();
  return fn;
}

void *real_driver::lookup(const char *name, int version, cuuint64_t flags) const {
  void *p = nullptr;
  CUdriverProcAddressQueryResult found{};
  if (get_proc_v2 && get_proc_v2(name, &p, version, flags, &found) == CUDA_SUCCESS &&
      found == CU_GET_PROC_ADDRESS_SUCCESS)
    return p;
  return nullptr;
}

namespace {

template <class F> void fetch(const real_driver &d, F &slot, const char *name, int version) {
  slot = reinterpret_cast<F>(d.lookup(name, version, CU_GET_PROC_ADDRESS_LEGACY_STREAM));
}

#if CUDA_VERSION >= 12090
// What the driver logs (CUDA 12.9's error log: why a call failed), while confining. The driver
// refuses cudaStreamPerThread in a green context wherever a library hands it the per-thread
// stream through a path past the public entry points, which the hooks cannot translate: that is
// said (once, and under --strict it ends the program), with the one case known and its way out.
// With GREENCTX_PRELOAD_DEBUG every message is traced, with the stack that led to it, so that a
// failure inside a library the hooks never see still names its caller.
void CUDA_CB driver_logged(void *, CUlogLevel, char *message, std::size_t length) {
  const std::string text(message, length);
  if (text.find("stream-per-thread") != std::string::npos)
    problem("a library handed the driver cudaStreamPerThread past greenctx's hooks, and the driver "
            "refuses it in a green context (\"" +
            text +
            "\"); cuBLAS does this for a handle's "
            "default workspace on cudaStreamPerThread: give the handle a workspace "
            "(cublasSetWorkspace) or a stream of the program's own (docs/run-design.md)");
  if (!config().debug)
    return;
  debug("the driver logged: %s", text.c_str());
  void *frames[48];
  const int n = backtrace(frames, 48);
  backtrace_symbols_fd(frames, n, 2);
}

void watch_driver_log(const real_driver &r) {
  if (!config().active && !config().debug)
    return;
  auto reg = reinterpret_cast<PFN_cuLogsRegisterCallback_v12090>(
      r.lookup("cuLogsRegisterCallback", 12090, CU_GET_PROC_ADDRESS_DEFAULT));
  CUlogsCallbackHandle handle = nullptr;
  if (!reg || reg(&driver_logged, nullptr, &handle) != CUDA_SUCCESS)
    debug("the driver's error log cannot be read (cuLogsRegisterCallback: a driver before 12.9?)");
}
#else
void watch_driver_log(const real_driver &) {
}
#endif

real_driver load() {
  real_driver r;
  r.library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
  if (!r.library || !real_dlsym())
    return r;
  r.get_proc_v2 =
      reinterpret_cast<PFN_cuGetProcAddress_v12000>(real_dlsym()(r.library, "cuGetProcAddress_v2"));
  r.get_proc =
      reinterpret_cast<PFN_cuGetProcAddress_v11030>(real_dlsym()(r.library, "cuGetProcAddress"));
  fetch(r, r.device_get, "cuDeviceGet", 2000);
  fetch(r, r.device_count, "cuDeviceGetCount", 2000);
  fetch(r, r.primary_retain, "cuDevicePrimaryCtxRetain", 7000);
  fetch(r, r.primary_state, "cuDevicePrimaryCtxGetState", 7000);
  fetch(r, r.primary_release, "cuDevicePrimaryCtxRelease", 11000);
  fetch(r, r.primary_set_flags, "cuDevicePrimaryCtxSetFlags", 11000);
  fetch(r, r.device_resource, "cuDeviceGetDevResource", 12040);
  fetch(r, r.split, "cuDevSmResourceSplitByCount", 12040);
  fetch(r, r.generate_desc, "cuDevResourceGenerateDesc", 12040);
  fetch(r, r.green_create, "cuGreenCtxCreate", 12040);
  fetch(r, r.green_destroy, "cuGreenCtxDestroy", 12040);
  fetch(r, r.from_green, "cuCtxFromGreenCtx", 12040);
  fetch(r, r.green_resource, "cuGreenCtxGetDevResource", 12040);
  fetch(r, r.ctx_resource, "cuCtxGetDevResource", 12040);
  fetch(r, r.set_current, "cuCtxSetCurrent", 4000);
  fetch(r, r.get_current, "cuCtxGetCurrent", 4000);
  fetch(r, r.push_current, "cuCtxPushCurrent", 4000);
  fetch(r, r.pop_current, "cuCtxPopCurrent", 4000);
  fetch(r, r.ctx_set_flags, "cuCtxSetFlags", 12010);
  fetch(r, r.ctx_get_device, "cuCtxGetDevice", 2000);
  fetch(r, r.ctx_create_v2, "cuCtxCreate", 3020);
  fetch(r, r.ctx_create_v3, "cuCtxCreate", 11040);
  fetch(r, r.ctx_create_v4, "cuCtxCreate", 12050);
  fetch(r, r.ctx_destroy, "cuCtxDestroy", 4000);
  fetch(r, r.stream_create, "cuStreamCreate", 2000);
  fetch(r, r.stream_destroy, "cuStreamDestroy", 4000);
  fetch(r, r.stream_is_capturing, "cuStreamIsCapturing", 10000);
  fetch(r, r.stream_wait_event, "cuStreamWaitEvent", 3020);
  fetch(r, r.event_create, "cuEventCreate", 2000);
  fetch(r, r.event_destroy, "cuEventDestroy", 4000);
  fetch(r, r.event_record, "cuEventRecord", 2000);
  fetch(r, r.device_attribute, "cuDeviceGetAttribute", 2000);
  fetch(r, r.func_attribute, "cuFuncGetAttribute", 2020);
  fetch(r, r.max_cluster_size, "cuOccupancyMaxPotentialClusterSize", 11070);
  watch_driver_log(r);
  return r;
}

} // namespace

const real_driver &real() {
  static const real_driver d = load();
  return d;
}

} // namespace greenctx::preload
