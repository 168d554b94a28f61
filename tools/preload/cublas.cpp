// cuBLAS on cudaStreamPerThread in a confined context.
//
// A cuBLAS handle without a workspace of the program's gets one from cuBLAS's default pool, and
// cuBLAS reaches that pool through a driver path that resolves the stream past the driver's
// public entry points, where the preload library cannot translate cudaStreamPerThread. In a green
// context the driver refuses the per-thread stream there ("CUDA Green Contexts cannot be used
// with stream-per-thread mode"), and the call fails with CUBLAS_STATUS_INTERNAL_ERROR. Seen on
// driver 580 with cuBLAS 13.1 whenever cuBLAS picks a kernel that needs a workspace (split-K, for
// instance, which it picks more often on fewer SMs); a workspace given with cublasSetWorkspace
// never takes that path (tests/run/cublas_threads.cu, docs/run-design.md).
//
// So when the program sets cudaStreamPerThread on a handle while a confined context is current,
// the handle is also given a workspace greenctx allocates there, of the size cuBLAS recommends
// for its default workspace, and freed when the handle is destroyed. The program's own
// cublasSetWorkspace calls still take precedence (they come after its cublasSetStream, which
// resets any workspace in cuBLAS).
#include "contexts.hpp"
#include "report.hpp"

#include <cublas_v2.h>
#include <dlfcn.h>
#include <link.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>

#define GREENCTX_EXPORT extern "C" __attribute__((visibility("default")))

namespace greenctx::preload {
namespace {

using set_stream_fn = cublasStatus_t (*)(cublasHandle_t, cudaStream_t);
using set_workspace_fn = cublasStatus_t (*)(cublasHandle_t, void *, size_t);
using destroy_fn = cublasStatus_t (*)(cublasHandle_t);

// The first loaded library but this one that defines `name` at `version` itself, in load order
// (the order of the global scope: a libcublas the program links or opened with RTLD_GLOBAL comes
// where the dynamic linker finds it; one a Python extension brought in with RTLD_LOCAL is found
// too). Versioned, so that a process holding two cuBLAS majors forwards each to its own.
void *next_definition(const char *name, const char *version) {
  struct search {
    const char *name, *version;
    const void *own_base;
    void *found;
  } s{name, version, nullptr, nullptr};
  Dl_info here{};
  if (dladdr(reinterpret_cast<void *>(&next_definition), &here))
    s.own_base = here.dli_fbase;
  dl_iterate_phdr(
      [](dl_phdr_info *info, size_t, void *data) {
        auto &s = *static_cast<search *>(data);
        if (!info->dlpi_name || !*info->dlpi_name) // the program itself: it binds its own
          return 0;
        void *lib = dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD);
        if (!lib)
          return 0;
        void *p = dlvsym(lib, s.name, s.version);
        Dl_info in{};
        if (p && dladdr(p, &in) && in.dli_fbase != s.own_base &&
            in.dli_fbase == reinterpret_cast<void *>(info->dlpi_addr))
          s.found = p;
        dlclose(lib);
        return s.found ? 1 : 0;
      },
      &s);
  return s.found;
}

// One cuBLAS major's entry points, found on first use (the program has loaded that libcublas
// by the time it calls it).
struct cublas_api {
  set_stream_fn set_stream = nullptr;
  set_workspace_fn set_workspace = nullptr;
  destroy_fn destroy = nullptr;
};

template <int Major> const cublas_api &api() {
  static const cublas_api a = [] {
    const std::string v = "libcublas.so." + std::to_string(Major);
    cublas_api r;
    r.set_stream = reinterpret_cast<set_stream_fn>(next_definition("cublasSetStream_v2", v.c_str()));
    r.set_workspace =
        reinterpret_cast<set_workspace_fn>(next_definition("cublasSetWorkspace_v2", v.c_str()));
    r.destroy = reinterpret_cast<destroy_fn>(next_definition("cublasDestroy_v2", v.c_str()));
    Dl_info in{};
    debug("cuBLAS functions at version %s: %s", v.c_str(),
          r.set_stream && dladdr(reinterpret_cast<void *>(r.set_stream), &in) && in.dli_fname
              ? in.dli_fname
              : "not found");
    return r;
  }();
  return a;
}

struct workspace {
  CUdeviceptr memory = 0;
  size_t bytes = 0;
  CUcontext ctx = nullptr;
};

std::mutex workspace_mutex;
std::unordered_map<cublasHandle_t, workspace> &workspaces() {
  static auto *m = new std::unordered_map<cublasHandle_t, workspace>;
  return *m;
}

/// The size of the workspace a handle is given: the largest chunk of CUBLAS_WORKSPACE_CONFIG
/// (":KiB:count" pairs) when the program sets it, else what cuBLAS's documentation recommends,
/// 32 MiB from compute capability 9.0 on and 4 MiB before. 0: none.
size_t workspace_bytes(int device) {
  if (const char *config = std::getenv("CUBLAS_WORKSPACE_CONFIG"); config && *config) {
    size_t largest = 0;
    const char *p = config;
    while (*p == ':') {
      char *end = nullptr;
      const unsigned long long kib = std::strtoull(p + 1, &end, 10);
      if (end == p + 1 || *end != ':')
        break;
      largest = kib * 1024 > largest ? kib * 1024 : largest;
      p = end + 1;
      std::strtoull(p, &end, 10); // the count
      p = end;
    }
    return largest;
  }
  int major = 0;
  if (!real().device_attribute ||
      real().device_attribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device) !=
          CUDA_SUCCESS)
    major = 9;
  return (major >= 9 ? 32u : 4u) << 20;
}

void give_workspace(const cublas_api &api, cublasHandle_t handle, confined_context &ctx) {
  if (!api.set_workspace || !real().mem_alloc)
    return;
  const size_t bytes = workspace_bytes(ctx.device);
  if (bytes == 0)
    return;
  const CUcontext c = ctx.ctx.load();
  std::lock_guard lock(workspace_mutex);
  workspace &w = workspaces()[handle];
  if (w.memory && (w.ctx != c || w.bytes < bytes)) {
    scoped_current in(w.ctx);
    real().mem_free(w.memory);
    w = {};
  }
  if (!w.memory) {
    if (real().mem_alloc(&w.memory, bytes) != CUDA_SUCCESS) {
      w = {};
      warning("cuBLAS handle on cudaStreamPerThread: no memory for its workspace (" +
              std::to_string(bytes >> 10) + " KiB); a cuBLAS call that needs one may fail");
      return;
    }
    w.bytes = bytes;
    w.ctx = c;
  }
  if (api.set_workspace(handle, reinterpret_cast<void *>(w.memory), w.bytes) != CUBLAS_STATUS_SUCCESS)
    warning("cuBLAS handle on cudaStreamPerThread: cublasSetWorkspace refused greenctx's "
            "workspace; a cuBLAS call that needs one may fail");
  else
    debug("cuBLAS handle %p on cudaStreamPerThread: given a workspace of %zu KiB",
          static_cast<void *>(handle), w.bytes >> 10);
}

cublasStatus_t set_stream(const cublas_api &api, cublasHandle_t handle, cudaStream_t stream) {
  if (!api.set_stream)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  const cublasStatus_t rc = api.set_stream(handle, stream);
  if (rc == CUBLAS_STATUS_SUCCESS && config().active &&
      reinterpret_cast<CUstream>(stream) == CU_STREAM_PER_THREAD)
    if (confined_context *c = current_confined())
      give_workspace(api, handle, *c);
  return rc;
}

cublasStatus_t destroy(const cublas_api &api, cublasHandle_t handle) {
  if (!api.destroy)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  const cublasStatus_t rc = api.destroy(handle); // it waits for the handle's work first
  workspace w;
  {
    std::lock_guard lock(workspace_mutex);
    if (auto it = workspaces().find(handle); it != workspaces().end()) {
      w = it->second;
      workspaces().erase(it);
    }
  }
  if (w.memory) {
    scoped_current in(w.ctx);
    real().mem_free(w.memory);
  }
  return rc;
}

} // namespace
} // namespace greenctx::preload

// The wrappers, one pair per cuBLAS major, each bound only by callers of that major
// (exports.map names the versions; 13 is the default for a lookup without one).
#define GREENCTX_CUBLAS_MAJOR(major, def)                                                          \
  GREENCTX_EXPORT cublasStatus_t greenctx_cublasSetStream_##major(cublasHandle_t h,                \
                                                                  cudaStream_t s) {                \
    return greenctx::preload::set_stream(greenctx::preload::api<major>(), h, s);                   \
  }                                                                                                \
  GREENCTX_EXPORT cublasStatus_t greenctx_cublasDestroy_##major(cublasHandle_t h) {                \
    return greenctx::preload::destroy(greenctx::preload::api<major>(), h);                         \
  }                                                                                                \
  __asm__(".symver greenctx_cublasSetStream_" #major ", cublasSetStream_v2" def                    \
          "libcublas.so." #major);                                                                 \
  __asm__(".symver greenctx_cublasDestroy_" #major ", cublasDestroy_v2" def "libcublas.so." #major)

GREENCTX_CUBLAS_MAJOR(11, "@");
GREENCTX_CUBLAS_MAJOR(12, "@");
GREENCTX_CUBLAS_MAJOR(13, "@@");
