// libgreenctx_preload.so: confines an unmodified CUDA program to N SMs (greenctx run).
//
// Loaded with LD_PRELOAD by `greenctx run`, which sets GREENCTX_RUN_SMS, GREENCTX_RUN_DEVICE,
// GREENCTX_RUN_FLAGS (1: IgnoreSmCoscheduling) and GREENCTX_RUN_REPORT (a file for the summary).
//
// How: wherever the program (or the CUDA runtime, cuBLAS, PyTorch ...) makes the primary context
// of the device current, it gets a green context over N SMs instead, one per thread, all made from
// one descriptor so that they share the same SMs (measured on driver 580: each thread may hold its
// own green context over the same SMs, memory is shared, and the runtime, its NULL and legacy
// streams, the streams it creates and graphs captured on them stay on the green context's SMs).
// A green context may be current to one thread at a time, hence one per thread.
//
// The hooks: the context calls (cuCtxSetCurrent, cuCtxPushCurrent, cuCtxCreate, cuCtxDestroy)
// and the launches (to report the per-thread default stream, which the driver refuses while a
// green context is current). They are reached three ways: as symbols (programs linked with
// -lcuda), through cuGetProcAddress (the CUDA runtime fetches every driver function with it), and
// through dlsym (how the runtime finds cuGetProcAddress in libcuda.so.1).
//
// Nothing here throws or allocates on the hot path; a failure to set up is reported once and the
// program then runs unconfined, which the summary says.
#include <cuda.h>
#include <cudaTypedefs.h>

#include <dlfcn.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <vector>

// cuda.h maps the name to cuGetProcAddress_v2; the library exports both, and so does this hook.
#undef cuGetProcAddress

#define GREENCTX_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

// ---- the real functions -------------------------------------------------------------------------

using dlsym_fn = void *(*)(void *, const char *);

dlsym_fn real_dlsym() {
  static dlsym_fn fn = [] {
    auto *f = reinterpret_cast<dlsym_fn>(dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34"));
    if (!f)
      f = reinterpret_cast<dlsym_fn>(dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5"));
    return f;
  }();
  return fn;
}

struct real_driver {
  PFN_cuGetProcAddress_v12000 get_proc_v2 = nullptr;
  PFN_cuGetProcAddress_v11030 get_proc = nullptr;
  PFN_cuDeviceGet_v2000 device_get = nullptr;
  PFN_cuDevicePrimaryCtxRetain_v7000 primary_retain = nullptr;
  PFN_cuDeviceGetDevResource_v12040 device_resource = nullptr;
  PFN_cuDevSmResourceSplitByCount_v12040 split = nullptr;
  PFN_cuDevResourceGenerateDesc_v12040 generate_desc = nullptr;
  PFN_cuGreenCtxCreate_v12040 green_create = nullptr;
  PFN_cuCtxFromGreenCtx_v12040 from_green = nullptr;
  PFN_cuCtxSetCurrent_v4000 set_current = nullptr;
  PFN_cuCtxPushCurrent_v4000 push_current = nullptr;
  PFN_cuCtxPopCurrent_v4000 pop_current = nullptr;
  PFN_cuCtxGetCurrent_v4000 get_current = nullptr;
  PFN_cuCtxCreate_v3020 ctx_create_v2 = nullptr;
  PFN_cuCtxCreate_v11040 ctx_create_v3 = nullptr;
  PFN_cuCtxCreate_v12050 ctx_create_v4 = nullptr;
  PFN_cuCtxDestroy_v4000 ctx_destroy = nullptr;
  PFN_cuLaunchKernel_v4000 launch = nullptr;
  PFN_cuLaunchKernel_v7000_ptsz launch_ptsz = nullptr;
  PFN_cuLaunchKernelEx_v11060 launch_ex = nullptr;
  PFN_cuLaunchKernelEx_v11060_ptsz launch_ex_ptsz = nullptr;
};

template <class F>
void fetch(const real_driver &d, F &slot, const char *name, int version,
           cuuint64_t flags = CU_GET_PROC_ADDRESS_DEFAULT) {
  void *p = nullptr;
  CUdriverProcAddressQueryResult found{};
  if (d.get_proc_v2 && d.get_proc_v2(name, &p, version, flags, &found) == CUDA_SUCCESS)
    slot = reinterpret_cast<F>(p);
}

const real_driver &real() {
  static const real_driver d = [] {
    real_driver r;
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    if (!lib || !real_dlsym())
      return r;
    r.get_proc_v2 =
        reinterpret_cast<PFN_cuGetProcAddress_v12000>(real_dlsym()(lib, "cuGetProcAddress_v2"));
    r.get_proc =
        reinterpret_cast<PFN_cuGetProcAddress_v11030>(real_dlsym()(lib, "cuGetProcAddress"));
    fetch(r, r.device_get, "cuDeviceGet", 2000);
    fetch(r, r.primary_retain, "cuDevicePrimaryCtxRetain", 7000);
    fetch(r, r.device_resource, "cuDeviceGetDevResource", 12040);
    fetch(r, r.split, "cuDevSmResourceSplitByCount", 12040);
    fetch(r, r.generate_desc, "cuDevResourceGenerateDesc", 12040);
    fetch(r, r.green_create, "cuGreenCtxCreate", 12040);
    fetch(r, r.from_green, "cuCtxFromGreenCtx", 12040);
    fetch(r, r.set_current, "cuCtxSetCurrent", 4000);
    fetch(r, r.push_current, "cuCtxPushCurrent", 4000);
    fetch(r, r.pop_current, "cuCtxPopCurrent", 4000);
    fetch(r, r.get_current, "cuCtxGetCurrent", 4000);
    fetch(r, r.ctx_create_v2, "cuCtxCreate", 3020);
    fetch(r, r.ctx_create_v3, "cuCtxCreate", 11040);
    fetch(r, r.ctx_create_v4, "cuCtxCreate", 12050);
    fetch(r, r.ctx_destroy, "cuCtxDestroy", 4000);
    fetch(r, r.launch, "cuLaunchKernel", 4000);
    fetch(r, r.launch_ptsz, "cuLaunchKernel", 7000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
    fetch(r, r.launch_ex, "cuLaunchKernelEx", 11060);
    fetch(r, r.launch_ex_ptsz, "cuLaunchKernelEx", 11060,
          CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
    return r;
  }();
  return d;
}

// ---- the settings and the report ---------------------------------------------------------------

struct settings {
  unsigned sms = 0;
  int device = 0;
  unsigned flags = 0;
  const char *report = nullptr;
};

const settings &config() {
  static const settings s = [] {
    settings c;
    if (const char *v = std::getenv("GREENCTX_RUN_SMS"))
      c.sms = static_cast<unsigned>(std::strtoul(v, nullptr, 10));
    if (const char *v = std::getenv("GREENCTX_RUN_DEVICE"))
      c.device = static_cast<int>(std::strtol(v, nullptr, 10));
    if (const char *v = std::getenv("GREENCTX_RUN_FLAGS"))
      c.flags = static_cast<unsigned>(std::strtoul(v, nullptr, 10));
    c.report = std::getenv("GREENCTX_RUN_REPORT");
    return c;
  }();
  return s;
}

// GREENCTX_PRELOAD_DEBUG=1: every hooked lookup and context switch on stderr.
bool debug() {
  static const bool on = [] {
    const char *v = std::getenv("GREENCTX_PRELOAD_DEBUG");
    return v && *v && *v != '0';
  }();
  return on;
}

std::atomic<bool> cuda_used{false};

// Called on every hooked call, launches included: read first, so that threads do not keep
// writing one shared cache line.
void mark_cuda_used() {
  if (!cuda_used.load(std::memory_order_relaxed))
    cuda_used.store(true, std::memory_order_relaxed);
}
std::atomic<unsigned> confined_threads{0};
std::atomic<unsigned> per_thread_stream_launches{0};
std::mutex problems_mutex;
std::vector<std::string> &problems() {
  static auto *p = new std::vector<std::string>;
  return *p;
}

void problem(const std::string &what) {
  std::lock_guard lock(problems_mutex);
  for (const auto &p : problems())
    if (p == what)
      return;
  problems().push_back(what);
  std::fprintf(stderr, "greenctx run: %s\n", what.c_str());
}

std::string escaped(const std::string &s) {
  std::string out;
  for (char c : s)
    out += c == '"' || c == '\\' ? std::string("\\") + c : std::string(1, c);
  return out;
}

// One JSON line per process (programs may start others, which inherit LD_PRELOAD).
void write_report() {
  const char *path = config().report;
  if (!path || !*path)
    return;
  std::FILE *f = std::fopen(path, "a");
  if (!f)
    return;
  std::string list;
  {
    std::lock_guard lock(problems_mutex);
    for (const auto &p : problems())
      list += (list.empty() ? "\"" : ",\"") + escaped(p) + "\"";
  }
  std::fprintf(f,
               "{\"pid\":%d,\"cuda_used\":%s,\"confined_threads\":%u,"
               "\"per_thread_stream_launches\":%u,\"problems\":[%s]}\n",
               static_cast<int>(getpid()), cuda_used.load() ? "true" : "false",
               confined_threads.load(), per_thread_stream_launches.load(), list.c_str());
  std::fclose(f);
}

struct reporter {
  ~reporter() { write_report(); }
} report_at_exit;

// ---- the green contexts ------------------------------------------------------------------------

struct partition {
  bool ready = false;
  CUdevice device = 0;
  CUcontext primary = nullptr;
  CUdevResourceDesc desc = nullptr;
};

std::mutex setup_mutex;
std::set<CUcontext> &our_contexts() {
  static auto *s = new std::set<CUcontext>;
  return *s;
}

// The descriptor of N SMs of the device, made once (the driver is initialised by then: every
// caller got here from a context call).
partition make_partition() {
  partition p;
  const real_driver &d = real();
  const settings &c = config();
  if (!d.device_get || !d.primary_retain || !d.device_resource || !d.split || !d.generate_desc ||
      !d.green_create || !d.from_green) {
    problem("this driver lacks the green-context API (CUDA 12.4+): nothing is confined");
    return p;
  }
  CUdevResource all{}, group{};
  unsigned n = 1;
  if (d.device_get(&p.device, c.device) != CUDA_SUCCESS ||
      d.primary_retain(&p.primary, p.device) != CUDA_SUCCESS ||
      d.device_resource(p.device, &all, CU_DEV_RESOURCE_TYPE_SM) != CUDA_SUCCESS ||
      d.split(&group, &n, &all, nullptr, c.flags, c.sms) != CUDA_SUCCESS || n != 1 ||
      group.sm.smCount != c.sms || d.generate_desc(&p.desc, &group, 1) != CUDA_SUCCESS) {
    problem("could not make a group of " + std::to_string(c.sms) + " SMs on device " +
            std::to_string(c.device) + ": nothing is confined");
    return p;
  }
  p.ready = true;
  return p;
}

// Made once, on the first context call (a static: no lock on later calls, which are on the
// program's hot path).
const partition &the_partition() {
  static const partition p = make_partition();
  return p;
}

// The calling thread's green context (its CUcontext), made on first use.
CUcontext thread_context() {
  thread_local CUcontext mine = nullptr;
  if (mine)
    return mine;
  const partition &p = the_partition();
  if (!p.ready)
    return nullptr;
  CUgreenCtx g = nullptr;
  CUcontext c = nullptr;
  if (real().green_create(&g, p.desc, p.device, CU_GREEN_CTX_DEFAULT_STREAM) != CUDA_SUCCESS ||
      real().from_green(&c, g) != CUDA_SUCCESS) {
    problem("could not create a green context for a thread: that thread runs unconfined");
    return nullptr;
  }
  {
    std::lock_guard lock(setup_mutex);
    our_contexts().insert(c);
  }
  ++confined_threads;
  mine = c;
  return mine;
}

// The context to make current instead of `ctx`.
CUcontext substitute(CUcontext ctx) {
  mark_cuda_used();
  if (debug())
    std::fprintf(stderr, "greenctx run [debug]: make current %p\n", static_cast<void *>(ctx));
  if (!ctx)
    return ctx;
  const partition &p = the_partition();
  if (!p.ready || ctx != p.primary)
    return ctx;
  CUcontext mine = thread_context();
  return mine ? mine : ctx;
}

bool is_ours(CUcontext ctx) {
  std::lock_guard lock(setup_mutex);
  return our_contexts().count(ctx) != 0;
}

// A new context on the confined device is the thread's green context, made current.
CUresult create_instead(CUcontext *pctx, CUdevice dev, bool *handled) {
  *handled = false;
  mark_cuda_used();
  const partition &p = the_partition();
  if (!pctx || !p.ready || dev != p.device)
    return CUDA_SUCCESS;
  CUcontext mine = thread_context();
  if (!mine)
    return CUDA_SUCCESS;
  *handled = true;
  *pctx = mine;
  return real().push_current(mine);
}

void note_launch(CUstream stream, bool per_thread_variant) {
  mark_cuda_used();
  if (stream == CU_STREAM_PER_THREAD || (per_thread_variant && stream == nullptr)) {
    ++per_thread_stream_launches;
    problem("a kernel was launched on the per-thread default stream (cudaStreamPerThread, or "
            "nvcc --default-stream per-thread): the driver refuses it while a green context is "
            "current, so greenctx cannot confine it on this driver; use the legacy default stream "
            "or created streams");
  }
}

} // namespace

// ---- the hooks ---------------------------------------------------------------------------------

GREENCTX_EXPORT CUresult cuCtxSetCurrent(CUcontext ctx) {
  return real().set_current ? real().set_current(substitute(ctx)) : CUDA_ERROR_NOT_INITIALIZED;
}

GREENCTX_EXPORT CUresult cuCtxPushCurrent_v2(CUcontext ctx) {
  return real().push_current ? real().push_current(substitute(ctx)) : CUDA_ERROR_NOT_INITIALIZED;
}

GREENCTX_EXPORT CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev) {
  bool handled = false;
  const CUresult rc = create_instead(pctx, dev, &handled);
  return handled ? rc : real().ctx_create_v2(pctx, flags, dev);
}

GREENCTX_EXPORT CUresult cuCtxCreate_v3(CUcontext *pctx, CUexecAffinityParam *params, int n,
                                        unsigned int flags, CUdevice dev) {
  bool handled = false;
  const CUresult rc = create_instead(pctx, dev, &handled);
  return handled ? rc : real().ctx_create_v3(pctx, params, n, flags, dev);
}

GREENCTX_EXPORT CUresult cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *params,
                                        unsigned int flags, CUdevice dev) {
  bool handled = false;
  const CUresult rc = create_instead(pctx, dev, &handled);
  return handled ? rc : real().ctx_create_v4(pctx, params, flags, dev);
}

GREENCTX_EXPORT CUresult cuCtxDestroy_v2(CUcontext ctx) {
  if (is_ours(ctx)) {
    // The thread keeps its green context (re-creating them leaks memory on driver 580); a
    // destroyed context is no longer current.
    CUcontext current = nullptr;
    if (real().get_current(&current) == CUDA_SUCCESS && current == ctx)
      real().pop_current(&current);
    return CUDA_SUCCESS;
  }
  return real().ctx_destroy(ctx);
}

GREENCTX_EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                                        unsigned bx, unsigned by, unsigned bz, unsigned shared,
                                        CUstream stream, void **params, void **extra) {
  note_launch(stream, false);
  return real().launch(f, gx, gy, gz, bx, by, bz, shared, stream, params, extra);
}

GREENCTX_EXPORT CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                                             unsigned bx, unsigned by, unsigned bz, unsigned shared,
                                             CUstream stream, void **params, void **extra) {
  note_launch(stream, true);
  return real().launch_ptsz(f, gx, gy, gz, bx, by, bz, shared, stream, params, extra);
}

GREENCTX_EXPORT CUresult cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f, void **params,
                                          void **extra) {
  note_launch(config ? config->hStream : nullptr, false);
  return real().launch_ex(config, f, params, extra);
}

GREENCTX_EXPORT CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f,
                                               void **params, void **extra) {
  note_launch(config ? config->hStream : nullptr, true);
  return real().launch_ex_ptsz(config, f, params, extra);
}

namespace {

// The hook for `symbol` at ABI `version` (the largest version the caller's request reaches), or
// null when greenctx does not hook it.
CUresult hooked_get_proc_v2(const char *, void **, int, cuuint64_t,
                            CUdriverProcAddressQueryResult *);
CUresult hooked_get_proc(const char *, void **, int, cuuint64_t);

void *hook_for(const char *symbol, int version, bool per_thread) {
  const std::string s = symbol;
  // The runtime asks for cuGetProcAddress itself, then fetches everything with what it got.
  if (s == "cuGetProcAddress")
    return version >= 12000 ? reinterpret_cast<void *>(&hooked_get_proc_v2)
                            : reinterpret_cast<void *>(&hooked_get_proc);
  if (s == "cuCtxSetCurrent")
    return reinterpret_cast<void *>(&cuCtxSetCurrent);
  if (s == "cuCtxPushCurrent")
    return reinterpret_cast<void *>(&cuCtxPushCurrent_v2);
  if (s == "cuCtxDestroy" && version >= 4000)
    return reinterpret_cast<void *>(&cuCtxDestroy_v2);
  if (s == "cuCtxCreate")
    return version >= 12050   ? reinterpret_cast<void *>(&cuCtxCreate_v4)
           : version >= 11040 ? reinterpret_cast<void *>(&cuCtxCreate_v3)
           : version >= 3020  ? reinterpret_cast<void *>(&cuCtxCreate_v2)
                              : nullptr;
  if (s == "cuLaunchKernel")
    return per_thread && version >= 7000 ? reinterpret_cast<void *>(&cuLaunchKernel_ptsz)
                                         : reinterpret_cast<void *>(&cuLaunchKernel);
  if (s == "cuLaunchKernelEx" && version >= 11060)
    return per_thread ? reinterpret_cast<void *>(&cuLaunchKernelEx_ptsz)
                      : reinterpret_cast<void *>(&cuLaunchKernelEx);
  return nullptr;
}

// Replaces what cuGetProcAddress found by the hook, when there is one.
void hook_result(const char *symbol, void **pfn, int version, cuuint64_t flags, CUresult rc) {
  mark_cuda_used();
  if (debug())
    std::fprintf(
        stderr, "greenctx run [debug]: cuGetProcAddress(%s, %d, %llu) = %d%s\n",
        symbol ? symbol : "(null)", version, static_cast<unsigned long long>(flags),
        static_cast<int>(rc),
        symbol && hook_for(symbol, version, flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM)
            ? " (hooked)"
            : "");
  if (rc != CUDA_SUCCESS || !pfn || !*pfn || !symbol)
    return;
  if (void *h = hook_for(symbol, version, flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM))
    *pfn = h;
}

} // namespace

namespace {

CUresult hooked_get_proc_v2(const char *symbol, void **pfn, int version, cuuint64_t flags,
                            CUdriverProcAddressQueryResult *found) {
  if (!real().get_proc_v2)
    return CUDA_ERROR_NOT_INITIALIZED;
  const CUresult rc = real().get_proc_v2(symbol, pfn, version, flags, found);
  hook_result(symbol, pfn, version, flags, rc);
  return rc;
}

CUresult hooked_get_proc(const char *symbol, void **pfn, int version, cuuint64_t flags) {
  if (!real().get_proc)
    return CUDA_ERROR_NOT_INITIALIZED;
  const CUresult rc = real().get_proc(symbol, pfn, version, flags);
  hook_result(symbol, pfn, version, flags, rc);
  return rc;
}

} // namespace

GREENCTX_EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version,
                                             cuuint64_t flags,
                                             CUdriverProcAddressQueryResult *found) {
  return hooked_get_proc_v2(symbol, pfn, version, flags, found);
}

GREENCTX_EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int version,
                                          cuuint64_t flags) {
  return hooked_get_proc(symbol, pfn, version, flags);
}

// dlsym: the CUDA runtime looks cuGetProcAddress up in libcuda.so.1 by handle, which LD_PRELOAD
// alone does not reach.
GREENCTX_EXPORT void *dlsym(void *handle, const char *name) {
  static const std::pair<const char *, void *> hooks[] = {
      {"cuGetProcAddress_v2", reinterpret_cast<void *>(&cuGetProcAddress_v2)},
      {"cuGetProcAddress", reinterpret_cast<void *>(&cuGetProcAddress)},
      {"cuCtxSetCurrent", reinterpret_cast<void *>(&cuCtxSetCurrent)},
      {"cuCtxPushCurrent_v2", reinterpret_cast<void *>(&cuCtxPushCurrent_v2)},
      {"cuCtxCreate_v2", reinterpret_cast<void *>(&cuCtxCreate_v2)},
      {"cuCtxCreate_v3", reinterpret_cast<void *>(&cuCtxCreate_v3)},
      {"cuCtxCreate_v4", reinterpret_cast<void *>(&cuCtxCreate_v4)},
      {"cuCtxDestroy_v2", reinterpret_cast<void *>(&cuCtxDestroy_v2)},
      {"cuLaunchKernel", reinterpret_cast<void *>(&cuLaunchKernel)},
      {"cuLaunchKernel_ptsz", reinterpret_cast<void *>(&cuLaunchKernel_ptsz)},
      {"cuLaunchKernelEx", reinterpret_cast<void *>(&cuLaunchKernelEx)},
      {"cuLaunchKernelEx_ptsz", reinterpret_cast<void *>(&cuLaunchKernelEx_ptsz)},
  };
  if (reinterpret_cast<std::uintptr_t>(name) != 0 && name[0] == 'c' && name[1] == 'u' && debug())
    std::fprintf(stderr, "greenctx run [debug]: dlsym(%s)\n", name);
  if (reinterpret_cast<std::uintptr_t>(name) != 0 && name[0] == 'c' && name[1] == 'u')
    for (const auto &[hooked, fn] : hooks)
      if (std::strcmp(name, hooked) == 0) {
        void *found = real_dlsym() ? real_dlsym()(handle, name) : nullptr;
        return found ? fn : nullptr; // only where the real symbol exists
      }
  return real_dlsym() ? real_dlsym()(handle, name) : nullptr;
}
