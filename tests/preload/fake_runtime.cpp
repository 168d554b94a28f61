// SPDX-License-Identifier: Apache-2.0
// A stand-in for a shared CUDA 13.1+ runtime (soname libcudart.so.13) on a 13.0 driver: its 13.1
// calls that need a 13.1 driver refuse with cudaErrorCallRequiresNewerDriver (36), as cudart 13.5
// does on driver 580, and it counts what greenctx's answers call of it. The preload tests show
// that greenctx run --cuda-13.1 answers those calls in its place and that, without the option,
// each call reaches the runtime's own. Declared with the driver's types, which the runtime's
// share by layout, as the preload library calls them (UBSan checks the types of calls).
#include <cuda.h>
namespace {
constexpr int requires_newer_driver = 36;
int set_device_calls = 0;
int host_func_calls = 0;
} // namespace

// The text every CUDA runtime carries for its errors, by which greenctx knows a runtime.
extern "C" __attribute__((visibility("default"))) const char *fake_runtime_error_name() {
  return "cudaErrorSoftwareValidityNotEstablished";
}

extern "C" __attribute__((visibility("default"))) int
cudaDevSmResourceSplit(CUdevResource *, unsigned, const CUdevResource *, CUdevResource *, unsigned,
                       void *) {
  return requires_newer_driver;
}
extern "C" __attribute__((visibility("default"))) int
cudaStreamGetDevResource(CUstream, CUdevResource *, int) {
  return requires_newer_driver;
}
extern "C" __attribute__((visibility("default"))) int cudaLaunchHostFunc_v2(CUstream, CUhostFn,
                                                                            void *, unsigned) {
  return requires_newer_driver;
}
// The older ABI runs the function at once (a stream with nothing queued).
extern "C" __attribute__((visibility("default"))) int cudaLaunchHostFunc(CUstream, CUhostFn fn,
                                                                         void *data) {
  ++host_func_calls;
  fn(data);
  return 0;
}
extern "C" __attribute__((visibility("default"))) int cudaGetDevice(int *device) {
  *device = 0;
  return 0;
}
extern "C" __attribute__((visibility("default"))) int cudaSetDevice(int) {
  ++set_device_calls;
  return 0;
}

extern "C" __attribute__((visibility("default"))) int fake_runtime_set_device_calls() {
  return set_device_calls;
}
extern "C" __attribute__((visibility("default"))) int fake_runtime_host_func_calls() {
  return host_func_calls;
}
