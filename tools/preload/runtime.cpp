// SPDX-License-Identifier: Apache-2.0
// The CUDA 13.1 runtime calls that need a 13.1 driver, answered in place of a shared CUDA 13.1+
// runtime (libcudart.so.13) on older drivers (greenctx run --cuda-13.1).
//
// A CUDA runtime checks at its start that the driver is the version it reports: told 13010 by a
// 13.0 driver, cudart 13.5 refuses every call with cudaErrorSoftwareValidityNotEstablished (103;
// seen on driver 580). So a runtime is always told the driver's own version (caller.hpp), and the
// calls it would then refuse for want of 13.1 entry points are defined here under CUDA's names.
// The library is preloaded, so a program's references to libcudart.so.13 bind here first:
//   cudaDevSmResourceSplit                      greenctx's cuDevSmResourceSplit (provided.hpp)
//   cudaStreamGetDevResource[_ptsz]             greenctx's cuStreamGetDevResource
//   cudaLaunchHostFunc_v2[_ptsz]                the runtime's cudaLaunchHostFunc[_ptsz]
// Everything else the runtime does itself over the driver and greenctx's hooks (work-queue
// resource types, groups of several pieces in cudaDevResourceGenerateDesc, green-context flags).
// Without --cuda-13.1, or on a 13.1+ driver, each call goes to the runtime's own function.
// A runtime linked into a program statically is out of reach: its calls never leave the program.
#include "provided.hpp"
#include "real_driver.hpp"
#include "report.hpp"

#include <dlfcn.h>

#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

namespace greenctx::preload {
namespace {

// The runtime's own `name`: the next definition after this library, else the one of a loaded
// libcudart.so.13 (a runtime opened with RTLD_LOCAL, as Python modules open theirs). Looked up
// once per name (a host function may be launched often); not kept while no runtime has it.
void *runtime_own(const char *name) {
  static std::mutex mutex;
  static auto *found = new std::map<std::string, void *, std::less<>>; // never destroyed
  std::lock_guard lock(mutex);
  if (const auto it = found->find(std::string_view(name)); it != found->end())
    return it->second;
  if (!real_dlsym())
    return nullptr;
  void *f = real_dlsym()(RTLD_NEXT, name);
  if (!f)
    if (void *library = dlopen("libcudart.so.13", RTLD_NOW | RTLD_NOLOAD)) {
      f = real_dlsym()(library, name);
      dlclose(library); // only drops the reference RTLD_NOLOAD took
    }
  if (f)
    found->emplace(name, f);
  return f;
}

// The runtime's cudaError_t for a driver result: the runtime numbers the errors these calls
// return as the driver does (1 invalid value, 101 invalid device, 201, 400, 914, 915 ...).
int as_runtime_error(CUresult rc) {
  return static_cast<int>(rc);
}

constexpr int runtime_error_initialization = 3; // cudaErrorInitializationError

void say_answered() {
  static const bool once = [] {
    warning("--cuda-13.1: the CUDA runtime's 13.1 calls that need a 13.1 driver "
            "(cudaDevSmResourceSplit, cudaStreamGetDevResource, cudaLaunchHostFunc_v2) are "
            "answered by greenctx; the runtime is told the driver's own version, which it checks");
    return true;
  }();
  (void)once;
}

// The runtime makes the device's primary context current before it asks the driver about a
// default stream; so does this, through the runtime, where no context is current.
int make_runtime_context_current() {
  if (current_context())
    return 0;
  using get_fn = int (*)(int *);
  using set_fn = int (*)(int);
  const auto get = reinterpret_cast<get_fn>(runtime_own("cudaGetDevice"));
  const auto set = reinterpret_cast<set_fn>(runtime_own("cudaSetDevice"));
  if (!get || !set)
    return runtime_error_initialization;
  int device = 0;
  if (const int rc = get(&device); rc != 0)
    return rc;
  return set(device);
}

bool is_default_stream(CUstream s) {
  return s == nullptr || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD;
}

template <class Fn, class... A> int runtime_call(const char *name, A... a) {
  if (const auto own = reinterpret_cast<Fn>(runtime_own(name)))
    return own(a...);
  warning(std::string(name) + ": no CUDA runtime (libcudart.so.13) is loaded to run it");
  return runtime_error_initialization;
}

template <bool PerThread> int stream_resource(CUstream stream, CUdevResource *out, int type) {
  const char *name = PerThread ? "cudaStreamGetDevResource_ptsz" : "cudaStreamGetDevResource";
  if (!provides_cuda_13_1())
    return runtime_call<int (*)(CUstream, CUdevResource *, int)>(name, stream, out, type);
  say_answered();
  if (is_default_stream(stream))
    if (const int rc = make_runtime_context_current(); rc != 0)
      return rc;
  const auto provided = reinterpret_cast<stream_resource_fn>(
      provided_entry("cuStreamGetDevResource", cuda_13_1,
                     PerThread ? CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM
                               : CU_GET_PROC_ADDRESS_LEGACY_STREAM));
  return as_runtime_error(provided(stream, out, type));
}

template <bool PerThread> int host_func(CUstream stream, CUhostFn fn, void *data, unsigned mode) {
  const char *name = PerThread ? "cudaLaunchHostFunc_v2_ptsz" : "cudaLaunchHostFunc_v2";
  if (!provides_cuda_13_1())
    return runtime_call<int (*)(CUstream, CUhostFn, void *, unsigned)>(name, stream, fn, data,
                                                                       mode);
  say_answered();
  if (const std::optional<CUresult> refused = check_host_sync_mode(mode))
    return as_runtime_error(*refused);
  return runtime_call<int (*)(CUstream, CUhostFn, void *)>(
      PerThread ? "cudaLaunchHostFunc_ptsz" : "cudaLaunchHostFunc", stream, fn, data);
}

} // namespace
} // namespace greenctx::preload

// ---- CUDA's names ------------------------------------------------------------------------------
// Assembler labels, as for the driver names in provided.cpp; the types are the 13.1 ones by layout
// (cudaDevResource is CUdevResource's 144 bytes, cudaError_t an int).

#define GREENCTX_RUNTIME_SYMBOL(name)                                                              \
  extern "C" __attribute__((visibility("default"), used, noinline)) int greenctx_runtime_##name

using namespace greenctx::preload;

GREENCTX_RUNTIME_SYMBOL(split)
(CUdevResource *, unsigned, const CUdevResource *, CUdevResource *, unsigned,
 void *)__asm__("cudaDevSmResourceSplit");
GREENCTX_RUNTIME_SYMBOL(split)
(CUdevResource *result, unsigned count, const CUdevResource *input, CUdevResource *remainder,
 unsigned flags, void *params) {
  if (!provides_cuda_13_1())
    return runtime_call<int (*)(CUdevResource *, unsigned, const CUdevResource *, CUdevResource *,
                                unsigned, void *)>("cudaDevSmResourceSplit", result, count, input,
                                                   remainder, flags, params);
  say_answered();
  const auto provided =
      reinterpret_cast<split_fn>(provided_entry("cuDevSmResourceSplit", cuda_13_1, 0));
  return as_runtime_error(provided(result, count, input, remainder, flags, params));
}

GREENCTX_RUNTIME_SYMBOL(stream_resource)
(CUstream, CUdevResource *, int)__asm__("cudaStreamGetDevResource");
GREENCTX_RUNTIME_SYMBOL(stream_resource)(CUstream s, CUdevResource *r, int type) {
  return stream_resource<false>(s, r, type);
}
GREENCTX_RUNTIME_SYMBOL(stream_resource_ptsz)
(CUstream, CUdevResource *, int)__asm__("cudaStreamGetDevResource_ptsz");
GREENCTX_RUNTIME_SYMBOL(stream_resource_ptsz)(CUstream s, CUdevResource *r, int type) {
  return stream_resource<true>(s, r, type);
}
GREENCTX_RUNTIME_SYMBOL(host_func)
(CUstream, CUhostFn, void *, unsigned)__asm__("cudaLaunchHostFunc_v2");
GREENCTX_RUNTIME_SYMBOL(host_func)(CUstream s, CUhostFn f, void *data, unsigned mode) {
  return host_func<false>(s, f, data, mode);
}
GREENCTX_RUNTIME_SYMBOL(host_func_ptsz)
(CUstream, CUhostFn, void *, unsigned)__asm__("cudaLaunchHostFunc_v2_ptsz");
GREENCTX_RUNTIME_SYMBOL(host_func_ptsz)(CUstream s, CUhostFn f, void *data, unsigned mode) {
  return host_func<true>(s, f, data, mode);
}
