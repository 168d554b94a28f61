// SPDX-License-Identifier: Apache-2.0
// The confined contexts: one green context per confined device, shared by every thread of the
// program, standing for the device's primary context; and one green context per cuCtxCreate.
//
// Why one shared context (measured on driver 580, docs/run-design.md): a green context per
// thread gave each thread its own legacy stream, synchronization scope and limits, and PyTorch
// training turned to nan. One green context current on many threads keeps those CUDA semantics;
// the stress test of the GPU tier (tests/run/stress.cu) is the evidence that the driver takes it.
#pragma once

#include "real_driver.hpp"

#include <atomic>
#include <mutex>
#include <vector>

namespace greenctx::preload {

struct blocking_stream;

/// A green context the library made, with the state of its emulated stream semantics.
struct confined_context {
  std::atomic<CUcontext> ctx{nullptr}; ///< null while the slot is free
  CUgreenCtx green = nullptr;
  int device = -1;
  bool shared = false; ///< stands for the device's primary context

  /// Bumped after every operation on this context's legacy stream: a blocking stream that has
  /// not seen the latest value waits for the legacy stream before its next operation.
  std::atomic<unsigned long long> legacy_epoch{0};
  /// Some blocking stream got work since the legacy stream last waited for them.
  std::atomic<bool> any_dirty{false};
  /// Threads inside a join of the legacy stream (see before_legacy).
  std::atomic<int> joining{0};
  CUevent legacy_event = nullptr; ///< recorded on the legacy stream for blocking streams to wait

  std::mutex mutex;                       ///< guards `streams` and the joins of the legacy stream
  std::vector<blocking_stream *> streams; ///< the emulated blocking streams of this context
};

/// The confined context `ctx` is, or null (lock-free; cached per thread).
confined_context *find_context(CUcontext ctx);

/// The confined context current on the calling thread, or null.
inline confined_context *current_confined() {
  return find_context(current_context());
}

/// Records `primary` as device `device`'s primary context (seen in cuDevicePrimaryCtxRetain).
void note_primary(CUcontext primary, CUdevice device);

/// What the program is shown instead of `ctx`: the shared green context of a confined device when
/// `ctx` is that device's real primary context (the program never sees the real one: its primary
/// context *is* the green context), else `ctx`. Lock-free.
CUcontext as_seen(CUcontext ctx);

/// The confined context whose green context is `green`, or null.
confined_context *find_green(CUgreenCtx green);

/// The SM count a confined device reports to the program (its partition's, the split group's
/// count), or 0 when `device` is not confined or GREENCTX_RUN_REAL_SM_COUNT is set.
unsigned confined_sm_count(int device);

/// The SM resource a confined device reports to the program: the shared green context's (which
/// the program may split further and make green contexts of, staying on those SMs). False, with
/// *out untouched, when `device` is not confined or GREENCTX_RUN_REAL_SM_COUNT is set.
bool confined_resource(int device, CUdevResource *out);

/// The context to make current instead of `ctx`: the device's shared green context when `ctx` is
/// the primary context of a confined device (made on first use), else `ctx`.
CUcontext substitute(CUcontext ctx);

/// cuCtxCreate on a confined device: a new green context over the device's SMs, pushed current.
/// Returns false (and touches nothing) when `device` is not confined or the setup failed; the
/// caller then calls the real cuCtxCreate.
bool create_context(CUcontext *pctx, unsigned flags, CUdevice device, CUresult *rc);

/// cuCtxDestroy of a context `create_context` made: true (and *rc) when it was one.
bool destroy_context(CUcontext ctx, CUresult *rc);

/// cuDevicePrimaryCtxSetFlags: the flags go to the device's shared context too.
void primary_flags_changed(CUdevice device, unsigned flags);

} // namespace greenctx::preload
