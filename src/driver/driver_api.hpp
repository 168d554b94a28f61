// SPDX-License-Identifier: Apache-2.0
// The driver's entry points, fetched at run time.
//
// greenctx never links libcuda: it opens libcuda.so.1 with dlopen, takes cuGetProcAddress from it
// and asks for every entry point at the CUDA version that introduced the ABI we call. An entry
// point the driver lacks stays null; `require()` turns that into an unsupported_error.
#pragma once

#include <cuda.h>
#include <cudaTypedefs.h>

#include <atomic>
#include <string>

namespace greenctx::detail {

// X(member, symbol, version): member is called as api.member(...), symbol is the name given to
// cuGetProcAddress, version is the ABI version asked for (and the suffix of its PFN typedef).
#define GREENCTX_DRIVER_ENTRY_POINTS(X)                                                            \
  X(cuGetErrorName, cuGetErrorName, 6000)                                                          \
  X(cuGetErrorString, cuGetErrorString, 6000)                                                      \
  X(cuDriverGetVersion, cuDriverGetVersion, 2020)                                                  \
  X(cuDeviceGet, cuDeviceGet, 2000)                                                                \
  X(cuDeviceGetCount, cuDeviceGetCount, 2000)                                                      \
  X(cuDeviceGetName, cuDeviceGetName, 2000)                                                        \
  X(cuDeviceGetAttribute, cuDeviceGetAttribute, 2000)                                              \
  X(cuDeviceGetPCIBusId, cuDeviceGetPCIBusId, 4010)                                                \
  X(cuDevicePrimaryCtxRetain, cuDevicePrimaryCtxRetain, 7000)                                      \
  X(cuDevicePrimaryCtxRelease, cuDevicePrimaryCtxRelease, 11000)                                   \
  X(cuCtxGetId, cuCtxGetId, 12000)                                                                 \
  X(cuCtxPushCurrent, cuCtxPushCurrent, 4000)                                                      \
  X(cuCtxPopCurrent, cuCtxPopCurrent, 4000)                                                        \
  X(cuCtxGetCurrent, cuCtxGetCurrent, 4000)                                                        \
  X(cuCtxSetCurrent, cuCtxSetCurrent, 4000)                                                        \
  X(cuCtxGetDevice, cuCtxGetDevice, 2000)                                                          \
  X(cuCtxSynchronize, cuCtxSynchronize, 2000)                                                      \
  X(cuCtxGetStreamPriorityRange, cuCtxGetStreamPriorityRange, 5050)                                \
  X(cuMemGetInfo, cuMemGetInfo, 3020)                                                              \
  X(cuMemAlloc, cuMemAlloc, 3020)                                                                  \
  X(cuMemFree, cuMemFree, 3020)                                                                    \
  X(cuMemHostAlloc, cuMemHostAlloc, 2020)                                                          \
  X(cuMemFreeHost, cuMemFreeHost, 2000)                                                            \
  X(cuMemHostGetDevicePointer, cuMemHostGetDevicePointer, 3020)                                    \
  X(cuMemcpyDtoH, cuMemcpyDtoH, 3020)                                                              \
  X(cuMemcpyHtoD, cuMemcpyHtoD, 3020)                                                              \
  X(cuMemcpyDtoHAsync, cuMemcpyDtoHAsync, 3020)                                                    \
  X(cuMemsetD32Async, cuMemsetD32Async, 3020)                                                      \
  X(cuStreamCreateWithPriority, cuStreamCreateWithPriority, 5050)                                  \
  X(cuStreamDestroy, cuStreamDestroy, 4000)                                                        \
  X(cuStreamSynchronize, cuStreamSynchronize, 2000)                                                \
  X(cuStreamQuery, cuStreamQuery, 2000)                                                            \
  X(cuStreamWaitEvent, cuStreamWaitEvent, 3020)                                                    \
  X(cuStreamGetPriority, cuStreamGetPriority, 5050)                                                \
  X(cuStreamGetFlags, cuStreamGetFlags, 5050)                                                      \
  X(cuStreamGetId, cuStreamGetId, 12000)                                                           \
  X(cuStreamGetDevice, cuStreamGetDevice, 12080)                                                   \
  X(cuEventCreate, cuEventCreate, 2000)                                                            \
  X(cuEventDestroy, cuEventDestroy, 4000)                                                          \
  X(cuEventRecord, cuEventRecord, 2000)                                                            \
  X(cuEventQuery, cuEventQuery, 2000)                                                              \
  X(cuEventSynchronize, cuEventSynchronize, 2000)                                                  \
  X(cuEventElapsedTime, cuEventElapsedTime, 2000)                                                  \
  X(cuLibraryLoadData, cuLibraryLoadData, 12000)                                                   \
  X(cuLibraryGetKernel, cuLibraryGetKernel, 12000)                                                 \
  X(cuLaunchKernel, cuLaunchKernel, 4000)                                                          \
  X(cuKernelGetFunction, cuKernelGetFunction, 12000)                                               \
  X(cuFuncSetAttribute, cuFuncSetAttribute, 9000)                                                  \
  X(cuOccupancyMaxActiveClusters, cuOccupancyMaxActiveClusters, 11070)                             \
  X(cuGraphAddKernelNode, cuGraphAddKernelNode, 12000)                                             \
  X(cuGraphKernelNodeGetParams, cuGraphKernelNodeGetParams, 12000)                                 \
  X(cuDeviceGetDevResource, cuDeviceGetDevResource, 12040)                                         \
  X(cuCtxGetDevResource, cuCtxGetDevResource, 12040)                                               \
  X(cuGreenCtxGetDevResource, cuGreenCtxGetDevResource, 12040)                                     \
  X(cuDevSmResourceSplitByCount, cuDevSmResourceSplitByCount, 12040)                               \
  X(cuDevResourceGenerateDesc, cuDevResourceGenerateDesc, 12040)                                   \
  X(cuGreenCtxCreate, cuGreenCtxCreate, 12040)                                                     \
  X(cuGreenCtxDestroy, cuGreenCtxDestroy, 12040)                                                   \
  X(cuCtxFromGreenCtx, cuCtxFromGreenCtx, 12040)                                                   \
  X(cuGreenCtxRecordEvent, cuGreenCtxRecordEvent, 12040)                                           \
  X(cuGreenCtxWaitEvent, cuGreenCtxWaitEvent, 12040)                                               \
  X(cuStreamGetGreenCtx, cuStreamGetGreenCtx, 12040)                                               \
  X(cuGreenCtxStreamCreate, cuGreenCtxStreamCreate, 12050)                                         \
  X(cuStreamGetCtx_v2, cuStreamGetCtx, 12050)                                                      \
  X(cuCtxRecordEvent, cuCtxRecordEvent, 12050)                                                     \
  X(cuCtxWaitEvent, cuCtxWaitEvent, 12050)                                                         \
  X(cuGreenCtxGetId, cuGreenCtxGetId, 12090)

// Entry points of CUDA 13.1 that the 13.0 headers do not declare: only their presence is looked
// up here (the runtime-API compatibility layer gives them types).
#define GREENCTX_DRIVER_13_1_ENTRY_POINTS(X)                                                       \
  X(cuDevSmResourceSplit, 13010)                                                                   \
  X(cuStreamGetDevResource, 13010)

struct driver_api {
#define GREENCTX_DECLARE_MEMBER(member, symbol, version) PFN_##symbol##_v##version member = nullptr;
  GREENCTX_DRIVER_ENTRY_POINTS(GREENCTX_DECLARE_MEMBER)
#undef GREENCTX_DECLARE_MEMBER
#define GREENCTX_DECLARE_RAW(symbol, version) void *symbol = nullptr;
  GREENCTX_DRIVER_13_1_ENTRY_POINTS(GREENCTX_DECLARE_RAW)
#undef GREENCTX_DECLARE_RAW

  int version = 0;          // cuDriverGetVersion, e.g. 13000
  std::string library_path; // what dlopen was given
};

/// The table once the driver has loaded successfully (null before, and for ever when it failed):
/// the fast path of driver() reads it without a call.
inline std::atomic<const driver_api *> loaded_table{nullptr};

/// driver()'s first call and its failures: loads the driver once, publishes the table in
/// loaded_table, or throws the remembered failure.
const driver_api &load_driver();

/// The loaded driver, opened and initialised (cuInit) once per process, on first use.
/// Throws greenctx::error when there is no driver or cuInit fails (the message says which, and
/// the failure is remembered: later calls throw the same error without trying again).
inline const driver_api &driver() {
  if (const driver_api *api = loaded_table.load(std::memory_order_acquire)) [[likely]]
    return *api;
  return load_driver();
}

/// The loaded driver, or null when there is none (never throws).
const driver_api *driver_if_loaded() noexcept;

/// Throws unsupported_error naming `name` and `version` (require's slow path).
[[noreturn]] void throw_unsupported(const char *name, int version);

/// Throws unsupported_error naming `name` and `version` when `entry` is null.
inline void require(const void *entry, const char *name, int version) {
  if (!entry) [[unlikely]]
    throw_unsupported(name, version);
}

/// Throws greenctx::error(code, api, driver's description, context) (check's slow path).
[[noreturn]] void throw_driver_error(CUresult code, const char *api, const std::string &context);

/// Throws greenctx::error(code, api, driver's description) when code != CUDA_SUCCESS.
inline void check(CUresult code, const char *api) {
  if (code != CUDA_SUCCESS) [[unlikely]]
    throw_driver_error(code, api, std::string());
}

/// Like check, with extra context appended to the message.
inline void check(CUresult code, const char *api, const std::string &context) {
  if (code != CUDA_SUCCESS) [[unlikely]]
    throw_driver_error(code, api, context);
}

} // namespace greenctx::detail

// Calls a required driver entry point and throws on failure: GREENCTX_CALL(cuStreamQuery, s).
#define GREENCTX_CALL(member, ...)                                                                 \
  do {                                                                                             \
    const auto &greenctx_api_ = ::greenctx::detail::driver();                                      \
    ::greenctx::detail::require(reinterpret_cast<const void *>(greenctx_api_.member), #member,     \
                                ::greenctx::detail::introduced_in_##member);                       \
    ::greenctx::detail::check(greenctx_api_.member(__VA_ARGS__), #member);                         \
  } while (0)

// A required driver entry point, to call when its result is read rather than checked (a query
// that may answer CUDA_ERROR_NOT_READY): GREENCTX_ENTRY(cuStreamQuery)(s). Throws
// unsupported_error when the driver lacks it, as GREENCTX_CALL does.
#define GREENCTX_ENTRY(member)                                                                     \
  (::greenctx::detail::required_entry(::greenctx::detail::driver().member, #member,                \
                                      ::greenctx::detail::introduced_in_##member))

namespace greenctx::detail {
#define GREENCTX_DECLARE_VERSION(member, symbol, version)                                          \
  inline constexpr int introduced_in_##member = version;
GREENCTX_DRIVER_ENTRY_POINTS(GREENCTX_DECLARE_VERSION)
#undef GREENCTX_DECLARE_VERSION

/// `entry`, or unsupported_error naming it when it is null (GREENCTX_ENTRY).
template <class Fn> Fn required_entry(Fn entry, const char *name, int version) {
  require(reinterpret_cast<const void *>(entry), name, version);
  return entry;
}

/// Releases in destructors and on error paths, which must not throw: calls `entry` when the driver
/// has it. A stub or incomplete libcuda may lack it (seen with the tests' fake driver); what it
/// would release then stays with the process.
template <class Fn, class... Args> void release_with(Fn entry, Args... args) noexcept {
  if (entry)
    entry(args...);
}
} // namespace greenctx::detail
