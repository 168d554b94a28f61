// SPDX-License-Identifier: Apache-2.0
// A fake libcuda.so.1 for the preload library's CPU tests: just enough of the driver API for
// libgreenctx_preload.so to run (devices, primary and green contexts, streams, events, launches),
// with every operation on a stream written to a log the test reads back. No GPU, no real driver.
#include <cuda.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#undef cuGetProcAddress

namespace {

std::mutex log_mutex;
std::vector<std::string> &log() {
  static std::vector<std::string> l;
  return l;
}
// fake_cuda_set_quiet: nothing is logged (the hook benchmark's launches then cost the fake
// driver nearly nothing, so that what it times is the hooks).
std::atomic<bool> quiet{false};

void note(const std::string &s) {
  if (quiet.load(std::memory_order_relaxed))
    return;
  std::lock_guard lock(log_mutex);
  log().push_back(s);
}

// Handles are small integers cast to pointers: easy to read in the log.
std::mutex handle_mutex;
std::uintptr_t next_handle = 0x1000;
template <class T> T fresh() {
  std::lock_guard lock(handle_mutex);
  return reinterpret_cast<T>(next_handle += 0x10);
}
std::string name(const void *p) {
  const auto v = reinterpret_cast<std::uintptr_t>(p);
  if (v == 0)
    return "null";
  if (v == 1)
    return "legacy";
  if (v == 2)
    return "per-thread";
  return "h" + std::to_string(v);
}

const CUcontext primary = reinterpret_cast<CUcontext>(0x100);
thread_local std::vector<CUcontext> stack;
std::unordered_map<CUstream, unsigned> stream_flags; // by handle: fuzz_compat_fake makes millions

// What greenctx's own driver loader and `greenctx run`'s checks ask (CLI tests): two GPUs like
// the H200 (CC 9.0, 132 SMs, partitions in units of 8, or 2 with IgnoreSmCoscheduling).
CUresult CUDAAPI init(unsigned) {
  return CUDA_SUCCESS;
}
// 13000, or GREENCTX_FAKE_DRIVER_VERSION.
CUresult CUDAAPI driver_version(int *v) {
  const char *env = std::getenv("GREENCTX_FAKE_DRIVER_VERSION");
  *v = env && *env ? std::atoi(env) : 13000;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI error_name(CUresult, const char **s) {
  *s = "CUDA_ERROR_FAKE";
  return CUDA_SUCCESS;
}
CUresult CUDAAPI device_name(char *buf, int len, CUdevice) {
  std::strncpy(buf, "fake H200", static_cast<std::size_t>(len));
  return CUDA_SUCCESS;
}
// MPS is reported enabled when the test's environment has GREENCTX_FAKE_MPS=1.
CUresult CUDAAPI device_attribute(int *v, CUdevice_attribute a, CUdevice) {
  const char *mps = std::getenv("GREENCTX_FAKE_MPS");
  *v = a == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR ? 9
       : a == CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT   ? 132
       : a == CU_DEVICE_ATTRIBUTE_MPS_ENABLED            ? (mps && mps[0] == '1')
                                                         : 0;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI pci_bus_id(char *buf, int len, CUdevice d) {
  std::snprintf(buf, static_cast<std::size_t>(len), "00000000:%02X:00.0", 0x10 + d);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI priority_range(int *least, int *greatest) {
  *least = 0;
  *greatest = -5;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI device_get(CUdevice *d, int ordinal) {
  *d = ordinal;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI device_count(int *n) {
  *n = 2;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI primary_retain(CUcontext *c, CUdevice d) {
  *c = reinterpret_cast<CUcontext>(0x100 + 0x10 * d);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI primary_release(CUdevice) {
  return CUDA_SUCCESS;
}
CUresult CUDAAPI primary_state(CUdevice, unsigned *flags, int *active) {
  *flags = 0;
  *active = 0; // as the runtime's primary context looks when it is first made current
  return CUDA_SUCCESS;
}
CUresult CUDAAPI primary_set_flags(CUdevice, unsigned) {
  return CUDA_SUCCESS;
}
// 13.1's work-queue types (1000, 10000) arrive as values the 13.0 enum lacks: UBSan's enum check is
// off here, as in the preload library's hooks.
__attribute__((no_sanitize("enum"))) CUresult CUDAAPI dev_resource(CUdevice, CUdevResource *r,
                                                                   CUdevResourceType type) {
  if (type != CU_DEV_RESOURCE_TYPE_SM) // as driver 580 answers 13.1's work-queue types
    return CUDA_ERROR_INVALID_RESOURCE_TYPE;
  std::memset(r, 0, sizeof *r);
  r->type = CU_DEV_RESOURCE_TYPE_SM;
  r->sm.smCount = 132;
  r->sm.minSmPartitionSize = 8;
  r->sm.smCoscheduledAlignment = 8;
  return CUDA_SUCCESS;
}
// Which SMs a resource is, as a driver keeps it in the internal bytes: here the first SM's index.
unsigned first_sm(const CUdevResource *r) {
  unsigned at = 0;
  if (r)
    std::memcpy(&at, r->_internal_padding, sizeof at);
  return at;
}
void set_first_sm(CUdevResource &r, unsigned at) {
  std::memcpy(r._internal_padding, &at, sizeof at);
}
// Groups of minCount rounded up to the unit (8, or 2 with IgnoreSmCoscheduling), as many as fit.
CUresult CUDAAPI split(CUdevResource *groups, unsigned *n, const CUdevResource *input,
                       CUdevResource *rest, unsigned flags, unsigned min_count) {
  const unsigned unit = (flags & CU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING) ? 2 : 8;
  const unsigned size = std::max(8u, (min_count + unit - 1) / unit * unit);
  const unsigned total = input ? input->sm.smCount : 132;
  if (size > total)
    return CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION;
  const unsigned fit = std::min(*n ? *n : total / size, total / size);
  *n = fit;
  if (groups)
    for (unsigned i = 0; i < fit; ++i) {
      std::memset(&groups[i], 0, sizeof groups[i]);
      groups[i].type = CU_DEV_RESOURCE_TYPE_SM;
      groups[i].sm.smCount = size;
      set_first_sm(groups[i], first_sm(input) + i * size);
    }
  if (rest) {
    std::memset(rest, 0, sizeof *rest);
    rest->type = CU_DEV_RESOURCE_TYPE_SM;
    rest->sm.smCount = total - fit * size;
    set_first_sm(*rest, first_sm(input) + fit * size);
  }
  return CUDA_SUCCESS;
}
// The SMs of each descriptor and green context (a green context's CUcontext has its value).
std::unordered_map<const void *, unsigned> sm_counts;
unsigned sm_count_of(const void *h, unsigned otherwise) {
  std::lock_guard lock(handle_mutex);
  const auto it = sm_counts.find(h);
  return it == sm_counts.end() ? otherwise : it->second;
}
void set_sm_count(const void *h, unsigned n) {
  std::lock_guard lock(handle_mutex);
  sm_counts[h] = n;
}
CUresult CUDAAPI generate_desc(CUdevResourceDesc *d, CUdevResource *r, unsigned n) {
  *d = fresh<CUdevResourceDesc>();
  unsigned sms = 0;
  for (unsigned i = 0; i < n; ++i)
    sms += r[i].sm.smCount;
  set_sm_count(*d, sms);
  return CUDA_SUCCESS;
}
// Flags without CU_GREEN_CTX_DEFAULT_STREAM are refused below 13.1, as driver 580 refuses them.
CUresult CUDAAPI green_create(CUgreenCtx *g, CUdevResourceDesc desc, CUdevice d, unsigned flags) {
  int version = 0;
  driver_version(&version);
  if (version < 13010 && !(flags & CU_GREEN_CTX_DEFAULT_STREAM))
    return CUDA_ERROR_INVALID_VALUE;
  *g = fresh<CUgreenCtx>();
  set_sm_count(*g, sm_count_of(desc, 0));
  note("green_create " + name(*g) + " device " + std::to_string(d));
  return CUDA_SUCCESS;
}
CUresult CUDAAPI sm_resource_of(const void *h, CUdevResource *r) {
  std::memset(r, 0, sizeof *r);
  r->type = CU_DEV_RESOURCE_TYPE_SM;
  r->sm.smCount = sm_count_of(h, 132);
  r->sm.minSmPartitionSize = 8;
  r->sm.smCoscheduledAlignment = 8;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI green_resource(CUgreenCtx g, CUdevResource *r, CUdevResourceType) {
  return sm_resource_of(g, r);
}
CUresult CUDAAPI ctx_resource(CUcontext c, CUdevResource *r, CUdevResourceType) {
  return sm_resource_of(c, r);
}
CUresult CUDAAPI green_destroy(CUgreenCtx g) {
  note("green_destroy " + name(g));
  return CUDA_SUCCESS;
}
CUresult CUDAAPI from_green(CUcontext *c, CUgreenCtx g) {
  *c = reinterpret_cast<CUcontext>(g); // the same value: the log reads one name for both
  return CUDA_SUCCESS;
}
CUresult CUDAAPI set_current(CUcontext c) {
  if (stack.empty())
    stack.push_back(c);
  else
    stack.back() = c;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI get_current(CUcontext *c) {
  *c = stack.empty() ? nullptr : stack.back();
  return CUDA_SUCCESS;
}
CUresult CUDAAPI push_current(CUcontext c) {
  stack.push_back(c);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI pop_current(CUcontext *c) {
  if (stack.empty())
    return CUDA_ERROR_INVALID_CONTEXT;
  if (c)
    *c = stack.back();
  stack.pop_back();
  return CUDA_SUCCESS;
}
CUresult CUDAAPI ctx_get_device(CUdevice *d) {
  if (stack.empty())
    return CUDA_ERROR_INVALID_CONTEXT;
  *d = static_cast<CUdevice>((reinterpret_cast<std::uintptr_t>(stack.back()) - 0x100) / 0x10);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI ctx_set_flags(unsigned) {
  return CUDA_SUCCESS;
}
CUresult CUDAAPI ctx_create(CUcontext *c, unsigned, CUdevice) {
  *c = fresh<CUcontext>();
  note("real ctx_create " + name(*c));
  return push_current(*c);
}
CUresult CUDAAPI ctx_destroy(CUcontext c) {
  note("real ctx_destroy " + name(c));
  return CUDA_SUCCESS;
}
std::unordered_map<CUstream, CUcontext> stream_contexts;
CUresult CUDAAPI stream_create(CUstream *s, unsigned flags) {
  *s = fresh<CUstream>();
  std::lock_guard lock(log_mutex);
  stream_flags[*s] = flags | CU_STREAM_NON_BLOCKING; // as inside a green context
  stream_contexts[*s] = stack.empty() ? nullptr : stack.back();
  return CUDA_SUCCESS;
}
CUresult CUDAAPI green_stream_create(CUstream *s, CUgreenCtx g, unsigned flags, int) {
  *s = fresh<CUstream>();
  std::lock_guard lock(log_mutex);
  stream_flags[*s] = flags | CU_STREAM_NON_BLOCKING;
  stream_contexts[*s] = reinterpret_cast<CUcontext>(g); // a green context's CUcontext is itself
  return CUDA_SUCCESS;
}
CUcontext context_of(CUstream s) {
  std::lock_guard lock(log_mutex);
  if (const auto it = stream_contexts.find(s); it != stream_contexts.end())
    return it->second;
  return stack.empty() ? nullptr : stack.back();
}
bool is_green(CUcontext c) {
  return sm_count_of(c, 0) != 0;
}
// The driver's answers for a stream of a green context: its context as cuStreamGetCtx gives it,
// and cuStreamGetCtx_v2 / cuStreamGetGreenCtx naming the green context.
CUresult CUDAAPI stream_get_ctx(CUstream s, CUcontext *c) {
  *c = context_of(s);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI stream_get_ctx_v2(CUstream s, CUcontext *c, CUgreenCtx *g) {
  const CUcontext ctx = context_of(s);
  *c = is_green(ctx) ? nullptr : ctx;
  *g = is_green(ctx) ? reinterpret_cast<CUgreenCtx>(ctx) : nullptr;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI stream_get_green(CUstream s, CUgreenCtx *g) {
  const CUcontext ctx = context_of(s);
  *g = is_green(ctx) ? reinterpret_cast<CUgreenCtx>(ctx) : nullptr;
  return CUDA_SUCCESS;
}
// Memory answers with device 0's primary context (the real one), whatever is current: what the
// preload library must never hand out.
CUresult CUDAAPI pointer_attribute(void *data, CUpointer_attribute a, CUdeviceptr) {
  if (a != CU_POINTER_ATTRIBUTE_CONTEXT)
    return CUDA_ERROR_NOT_SUPPORTED;
  *static_cast<CUcontext *>(data) = primary;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI pointer_attributes(unsigned n, CUpointer_attribute *a, void **data,
                                    CUdeviceptr p) {
  for (unsigned i = 0; i < n; ++i)
    if (a[i] == CU_POINTER_ATTRIBUTE_CONTEXT)
      pointer_attribute(data[i], a[i], p);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI ctx_sync() {
  note("ctx_sync");
  return CUDA_SUCCESS;
}
CUresult CUDAAPI stream_create_priority(CUstream *s, unsigned flags, int) {
  return stream_create(s, flags);
}
CUresult CUDAAPI stream_get_flags(CUstream s, unsigned *flags) {
  std::lock_guard lock(log_mutex);
  const auto it = stream_flags.find(s);
  if (it == stream_flags.end())
    return CUDA_ERROR_INVALID_HANDLE;
  *flags = it->second;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI stream_get_id(CUstream s, unsigned long long *id) {
  *id = reinterpret_cast<std::uintptr_t>(s);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI stream_destroy(CUstream s) {
  note("stream_destroy " + name(s));
  return CUDA_SUCCESS;
}
CUresult CUDAAPI stream_sync(CUstream s) {
  note("sync " + name(s));
  return CUDA_SUCCESS;
}
std::vector<CUstream> capturing; // set by the test (fake_cuda_set_capturing)
CUresult CUDAAPI stream_is_capturing(CUstream s, CUstreamCaptureStatus *st) {
  std::lock_guard lock(log_mutex);
  *st = std::find(capturing.begin(), capturing.end(), s) != capturing.end()
            ? CU_STREAM_CAPTURE_STATUS_ACTIVE
            : CU_STREAM_CAPTURE_STATUS_NONE;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI stream_wait_event(CUstream s, CUevent e, unsigned) {
  note("wait " + name(s) + " " + name(e));
  return CUDA_SUCCESS;
}
CUresult CUDAAPI event_create(CUevent *e, unsigned) {
  *e = fresh<CUevent>();
  return CUDA_SUCCESS;
}
CUresult CUDAAPI event_destroy(CUevent) {
  return CUDA_SUCCESS;
}
CUresult CUDAAPI event_sync(CUevent) {
  return CUDA_SUCCESS; // the fake runs nothing: every event has happened
}
CUresult CUDAAPI green_record(CUgreenCtx g, CUevent e) {
  note("green_record " + name(g) + " " + name(e));
  return CUDA_SUCCESS;
}
CUresult CUDAAPI green_wait(CUgreenCtx g, CUevent e) {
  note("green_wait " + name(g) + " " + name(e));
  return CUDA_SUCCESS;
}
CUresult CUDAAPI event_record(CUevent e, CUstream s) {
  note("record " + name(e) + " " + name(s));
  return CUDA_SUCCESS;
}
CUresult CUDAAPI launch(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                        unsigned, CUstream s, void **, void **) {
  if (quiet.load(std::memory_order_relaxed))
    return CUDA_SUCCESS;
  note("launch " + name(s));
  return CUDA_SUCCESS;
}
CUresult CUDAAPI launch_ptsz(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                             unsigned, CUstream s, void **, void **) {
  note("launch_ptsz " + name(s));
  return CUDA_SUCCESS;
}
CUresult CUDAAPI memcpy_htod(CUdeviceptr, const void *, size_t) {
  note("copy");
  return CUDA_SUCCESS;
}
CUresult CUDAAPI memcpy_htod_ptds(CUdeviceptr, const void *, size_t) {
  note("copy_ptds");
  return CUDA_SUCCESS;
}

CUresult CUDAAPI host_func(CUstream s, CUhostFn fn, void *data) {
  note("host_func " + name(s));
  if (fn)
    fn(data); // the fake runs nothing on a GPU: the stream's earlier work has "finished"
  return CUDA_SUCCESS;
}

// Logs the upload stream (when the parameters ask for an upload) and answers both outputs.
CUresult CUDAAPI graph_instantiate(CUgraphExec *exec, CUgraph, CUDA_GRAPH_INSTANTIATE_PARAMS *p) {
  if (!p)
    return CUDA_ERROR_INVALID_VALUE;
  if (p->flags & CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD)
    note("graph_instantiate upload " + name(p->hUploadStream));
  else
    note("graph_instantiate");
  *exec = fresh<CUgraphExec>();
  p->hErrNode_out = reinterpret_cast<CUgraphNode>(0x77);
  p->result_out = CUDA_GRAPH_INSTANTIATE_SUCCESS;
  return CUDA_SUCCESS;
}

} // namespace

extern "C" CUresult CUDAAPI cuGetProcAddress_v2(const char *, void **, int, cuuint64_t,
                                                CUdriverProcAddressQueryResult *);
extern "C" CUresult CUDAAPI cuGetProcAddress(const char *, void **, int, cuuint64_t);

namespace {

struct fn {
  const char *name;
  void *legacy;
  void *per_thread;
  int version = 0; ///< the ABI's first CUDA version: asked for at a lower one, an older entry
};
const fn table[] = {
    {"cuInit", (void *)&init, nullptr},
    {"cuDriverGetVersion", (void *)&driver_version, nullptr},
    {"cuGetErrorName", (void *)&error_name, nullptr},
    {"cuDeviceGetName", (void *)&device_name, nullptr},
    {"cuDeviceGetAttribute", (void *)&device_attribute, nullptr},
    {"cuDeviceGetPCIBusId", (void *)&pci_bus_id, nullptr},
    {"cuCtxGetStreamPriorityRange", (void *)&priority_range, nullptr},
    {"cuDeviceGet", (void *)&device_get, nullptr},
    {"cuDeviceGetCount", (void *)&device_count, nullptr},
    {"cuDevicePrimaryCtxRetain", (void *)&primary_retain, nullptr},
    {"cuDevicePrimaryCtxRelease", (void *)&primary_release, nullptr},
    {"cuDevicePrimaryCtxGetState", (void *)&primary_state, nullptr},
    {"cuDevicePrimaryCtxSetFlags", (void *)&primary_set_flags, nullptr},
    {"cuDeviceGetDevResource", (void *)&dev_resource, nullptr},
    {"cuDevSmResourceSplitByCount", (void *)&split, nullptr},
    {"cuDevResourceGenerateDesc", (void *)&generate_desc, nullptr},
    {"cuGreenCtxCreate", (void *)&green_create, nullptr},
    {"cuGreenCtxDestroy", (void *)&green_destroy, nullptr},
    {"cuCtxFromGreenCtx", (void *)&from_green, nullptr},
    {"cuGreenCtxGetDevResource", (void *)&green_resource, nullptr},
    {"cuCtxGetDevResource", (void *)&ctx_resource, nullptr},
    {"cuStreamGetCtx", (void *)&stream_get_ctx_v2, nullptr, 12050},
    {"cuStreamGetCtx", (void *)&stream_get_ctx, nullptr},
    {"cuStreamGetGreenCtx", (void *)&stream_get_green, nullptr},
    {"cuStreamGetId", (void *)&stream_get_id, nullptr},
    {"cuEventSynchronize", (void *)&event_sync, nullptr},
    {"cuEventQuery", (void *)&event_sync, nullptr},
    {"cuGreenCtxRecordEvent", (void *)&green_record, nullptr},
    {"cuGreenCtxWaitEvent", (void *)&green_wait, nullptr},
    {"cuPointerGetAttribute", (void *)&pointer_attribute, nullptr},
    {"cuPointerGetAttributes", (void *)&pointer_attributes, nullptr},
    {"cuCtxSynchronize", (void *)&ctx_sync, nullptr},
    {"cuCtxSetCurrent", (void *)&set_current, nullptr},
    {"cuCtxGetCurrent", (void *)&get_current, nullptr},
    {"cuCtxPushCurrent", (void *)&push_current, nullptr},
    {"cuCtxPopCurrent", (void *)&pop_current, nullptr},
    {"cuCtxGetDevice", (void *)&ctx_get_device, nullptr},
    {"cuCtxSetFlags", (void *)&ctx_set_flags, nullptr},
    {"cuCtxCreate", (void *)&ctx_create, nullptr},
    {"cuCtxDestroy", (void *)&ctx_destroy, nullptr},
    {"cuStreamCreate", (void *)&stream_create, nullptr},
    {"cuStreamCreateWithPriority", (void *)&stream_create_priority, nullptr},
    {"cuStreamGetFlags", (void *)&stream_get_flags, nullptr},
    {"cuStreamDestroy", (void *)&stream_destroy, nullptr},
    {"cuStreamSynchronize", (void *)&stream_sync, nullptr},
    {"cuStreamIsCapturing", (void *)&stream_is_capturing, nullptr},
    {"cuStreamWaitEvent", (void *)&stream_wait_event, nullptr},
    {"cuEventCreate", (void *)&event_create, nullptr},
    {"cuEventDestroy", (void *)&event_destroy, nullptr},
    {"cuEventRecord", (void *)&event_record, nullptr},
    {"cuLaunchKernel", (void *)&launch, (void *)&launch_ptsz},
    {"cuMemcpyHtoD", (void *)&memcpy_htod, (void *)&memcpy_htod_ptds},
    {"cuGraphInstantiateWithParams", (void *)&graph_instantiate, nullptr},
    {"cuLaunchHostFunc", (void *)&host_func, nullptr},
    {"cuGreenCtxStreamCreate", (void *)&green_stream_create, nullptr},
    {"cuGetProcAddress", (void *)&cuGetProcAddress_v2, nullptr, 12000},
    {"cuGetProcAddress", (void *)&cuGetProcAddress, nullptr},
};

// GREENCTX_FAKE_LOOKUP_LOG=FILE: every cuGetProcAddress request is appended to FILE as
// "NAME VERSION FLAGS PROCESS" (what a CUDA runtime asks of a driver of the version the fake
// reports; PROCESS tells a program from the greenctx that runs it).
void log_lookup(const char *symbol, int version, cuuint64_t flags) {
  static const char *path = std::getenv("GREENCTX_FAKE_LOOKUP_LOG");
  if (!path || !*path)
    return;
  std::lock_guard lock(log_mutex);
  if (FILE *f = std::fopen(path, "a")) {
    std::fprintf(f, "%s %d %llu %s\n", symbol, version, static_cast<unsigned long long>(flags),
                 program_invocation_short_name);
    std::fclose(f);
  }
}

} // namespace

extern "C" __attribute__((visibility("default"))) CUresult
cuGetProcAddress_v2(const char *symbol, void **pfn, int version, cuuint64_t flags,
                    CUdriverProcAddressQueryResult *found) {
  log_lookup(symbol, version, flags);
  int driver = 0;
  driver_version(&driver);
  if (version > driver) { // as real drivers answer an ABI newer than themselves
    *pfn = nullptr;
    if (found)
      *found = CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
    return CUDA_ERROR_INVALID_VALUE;
  }
  for (const fn &f : table) // newest ABI first where there are several
    if (std::strcmp(f.name, symbol) == 0 && f.version <= version) {
      *pfn = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) && f.per_thread ? f.per_thread
                                                                                     : f.legacy;
      if (found)
        *found = CU_GET_PROC_ADDRESS_SUCCESS;
      return CUDA_SUCCESS;
    }
  *pfn = nullptr;
  if (found)
    *found = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  return CUDA_ERROR_NOT_FOUND;
}

extern "C" __attribute__((visibility("default"))) CUresult
cuGetProcAddress(const char *symbol, void **pfn, int version, cuuint64_t flags) {
  return cuGetProcAddress_v2(symbol, pfn, version, flags, nullptr);
}

/// The log so far, taken (the test reads it between steps).
extern "C" __attribute__((visibility("default"))) std::vector<std::string> *fake_cuda_take_log() {
  std::lock_guard lock(log_mutex);
  auto *out = new std::vector<std::string>(std::move(log()));
  log().clear();
  return out;
}

/// Logs nothing from now on (`on`), or again.
extern "C" __attribute__((visibility("default"))) void fake_cuda_set_quiet(bool on) {
  quiet.store(on);
}

/// Makes the fake report `s` as being captured into a graph, or not.
extern "C" __attribute__((visibility("default"))) void fake_cuda_set_capturing(CUstream s,
                                                                               bool on) {
  std::lock_guard lock(log_mutex);
  if (on)
    capturing.push_back(s);
  else
    capturing.erase(std::remove(capturing.begin(), capturing.end(), s), capturing.end());
}

// Symbols: the two a CUDA runtime looks up by name before it asks cuGetProcAddress for the rest,
// and what tests/toolkit/driver_13_1.cpp links to (a program on the driver API).
extern "C" __attribute__((visibility("default"))) CUresult CUDAAPI cuDriverGetVersion(int *v) {
  return driver_version(v);
}
extern "C" __attribute__((visibility("default"))) CUresult CUDAAPI cuInit(unsigned flags) {
  return init(flags);
}
extern "C" __attribute__((visibility("default"))) CUresult CUDAAPI cuDeviceGet(CUdevice *d,
                                                                               int ordinal) {
  return device_get(d, ordinal);
}
extern "C" __attribute__((visibility("default"))) CUresult CUDAAPI
cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d) {
  return primary_retain(c, d);
}
extern "C" __attribute__((visibility("default"))) CUresult CUDAAPI cuCtxSetCurrent(CUcontext c) {
  return set_current(c);
}
extern "C" __attribute__((visibility("default"))) CUresult CUDAAPI
cuDeviceGetDevResource(CUdevice d, CUdevResource *r, CUdevResourceType t) {
  return dev_resource(d, r, t);
}
extern "C" __attribute__((visibility("default"))) CUresult CUDAAPI
cuDevResourceGenerateDesc(CUdevResourceDesc *d, CUdevResource *r, unsigned n) {
  return generate_desc(d, r, n);
}
extern "C" __attribute__((visibility("default"))) CUresult CUDAAPI
cuGreenCtxCreate(CUgreenCtx *g, CUdevResourceDesc desc, CUdevice d, unsigned flags) {
  return green_create(g, desc, d, flags);
}
extern "C" __attribute__((visibility("default"))) CUresult CUDAAPI
cuGreenCtxStreamCreate(CUstream *s, CUgreenCtx g, unsigned flags, int priority) {
  return green_stream_create(s, g, flags, priority);
}
extern "C" __attribute__((visibility("default"))) CUresult CUDAAPI cuGetErrorName(CUresult e,
                                                                                  const char **s) {
  return error_name(e, s);
}
