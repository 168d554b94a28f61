// The CUDA 13.1 runtime-API layer (include/greenctx/cuda_compat.h): its handles and bookkeeping.
#pragma once

#include "greenctx/cuda_compat.h"
#include "greenctx/core/device.hpp"
#include "greenctx/plan/error.hpp"
#include "greenctx/core/execution_context.hpp"
#include "greenctx/plan/resource.hpp"

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

/// An execution context: a device's primary context (one per device, never destroyed) or a green
/// context made by cudaGreenCtxCreate. Objects live for the rest of the process, also after
/// cudaExecutionCtxDestroy (they are small), so that streams of a destroyed context can answer
/// "detached" and stale handles are recognised instead of crashing.
struct cudaExecutionContext_st {
  std::uint32_t magic = 0x45435458; // "ECTX"
  int ordinal = 0;
  greenctx::execution_context_ref ref;
  greenctx::green_context owner; // empty for the primary context and after destroy
  std::uint64_t id = 0;          // greenctx's own counter: unique across primary and green
  bool has_workqueue_config = false;
  cudaDevWorkqueueConfigResource workqueue{};
  bool workqueue_provisioned = false;
  std::atomic<bool> destroyed{false};
};

/// A descriptor: never freed (13.1 has no call to destroy one).
struct cudaDevResourceDesc_st {
  std::uint32_t magic = 0x44455343; // "DESC"
  int ordinal = 0;
  CUdevResourceDesc handle = nullptr; // null when the descriptor holds no SM resource
  unsigned sms = 0;
  unsigned coscheduled = 0;         // promised co-scheduled unit of its groups, 0 if none
  bool needs_cluster_check = false; // made of IgnoreSmCoscheduling pieces: prove on creation
  bool exact = false; // only groups without Backfill: sms / coscheduled clusters must fit
  bool has_workqueue_config = false;
  cudaDevWorkqueueConfigResource workqueue{};
  bool has_workqueue = false;
  bool workqueue_provisioned = false; // handed to a 13.1 driver with the SMs
};

namespace greenctx::compat {

/// Runs `body`, turning what it throws into a cudaError_t (and the thread's last error message).
template <class F> cudaError_t guarded(F &&body) noexcept;

/// Throws request_error(code, api, message): the C API's way to refuse.
[[noreturn]] void refuse(CUresult code, const char *api, const std::string &message);

/// Throws CUDA_ERROR_INVALID_VALUE when `p` is null.
void require_pointer(const void *p, const char *api, const char *name);

/// The device of runtime ordinal `ordinal`, opened once and kept for the process (its primary
/// context stays retained). Throws CUDA_ERROR_INVALID_DEVICE for a bad ordinal.
const device &device_at(int ordinal, const char *api);

/// The ordinal of a driver device handle.
int ordinal_of(CUdevice dev);

/// The primary execution context of `ordinal`.
cudaExecutionContext_t primary_context(int ordinal, const char *api);

/// Checks a context handle: not null, made by greenctx, not destroyed. Throws.
cudaExecutionContext_t checked_context(cudaExecutionContext_t ctx, const char *api);

/// The execution context of a stream (greenctx's, or the one the driver reports); throws
/// cudaErrorStreamDetached (917) for streams of a destroyed context.
cudaExecutionContext_t context_of_stream(cudaStream_t stream, const char *api);

/// A fresh execution-context id.
std::uint64_t next_context_id();

/// The green contexts of `ordinal` that are alive (for the primary context's record, wait and
/// synchronize on drivers that do not cover them).
std::vector<cudaExecutionContext_t> live_green_contexts(int ordinal);
void register_green_context(cudaExecutionContext_t ctx);

/// The CUDA_DEVICE_MAX_CONNECTIONS in force: the environment's value, else the driver's default.
unsigned workqueue_limit();

/// The default WorkqueueConfig resource of a device.
cudaDevWorkqueueConfigResource default_workqueue_config(int ordinal);

/// Fills `out` as an SM resource that can be split (a device's or context's resource).
void export_splittable(const sm_resource &sms, int ordinal, cudaDevResource &out);

// --- implementation of guarded ---------------------------------------------------------------

/// Turns the exception in flight into a cudaError_t and records its explanation as the thread's
/// last error (and in GREENCTX_LOG_FILE): the one place where C API failures are recorded.
cudaError_t translate_current_exception() noexcept;

/// Forgets the calling thread's last error (a C API call that succeeds).
void clear_last_error() noexcept;

/// The calling thread's last recorded explanation ("" when none).
std::string last_error_message();

template <class F> cudaError_t guarded(F &&body) noexcept {
  try {
    clear_last_error();
    body();
    return cudaSuccess;
  } catch (...) {
    return translate_current_exception();
  }
}

} // namespace greenctx::compat
