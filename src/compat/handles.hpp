// SPDX-License-Identifier: Apache-2.0
// The two handles of the 13.1 API that greenctx makes itself: cudaExecutionContext_t and
// cudaDevResourceDesc_t. Both live for the rest of the process (they are small), so that a stale
// handle is recognised by its magic word and state instead of crashing.
#pragma once

#include "compat/recycle.hpp"
#include "greenctx/core/event.hpp"
#include "greenctx/core/execution_context.hpp"
#include "greenctx/core/descriptor.hpp"
#include "greenctx/cuda_compat.h"

#include <atomic>
#include <cstdint>
#include <optional>

/// An execution context: a device's primary context (one per device, never destroyed) or a green
/// context made by cudaGreenCtxCreate. Kept after cudaExecutionCtxDestroy so that streams of a
/// destroyed context can answer "detached"; the driver's green context it owned is then parked
/// (compat/recycle.hpp) for a later cudaGreenCtxCreate with the same key, under a new struct.
struct cudaExecutionContext_st {
  std::uint32_t magic = 0x45435458; // "ECTX"
  int ordinal = 0;
  greenctx::execution_context_ref ref;
  greenctx::green_context owner; // empty for the primary context and after destroy (parked)
  std::optional<greenctx::compat::recycle_key> recycle; // none: never given out again
  greenctx::event idle; // recorded on destroy; ready: the parked context has no pending work
  std::uint64_t id = 0; // greenctx's own counter: unique across primary and green
  bool has_workqueue_config = false;
  cudaDevWorkqueueConfigResource workqueue{};
  bool workqueue_provisioned = false;
  std::atomic<bool> destroyed{false};
};

/// A descriptor: never freed (13.1 has no call to destroy one). Its handle is a
/// cudaDevResourceDesc_t, which points to greenctx's struct below 13.1 headers and to the driver's
/// CUdevResourceDesc_st with 13.1+ headers: desc_of and handle_of convert, here only.
struct greenctx_resource_desc {
  std::uint32_t magic = 0x44455343; // "DESC"
  int ordinal = 0;
  greenctx::descriptor native;      // the driver's; null when it holds no SM resource
  unsigned coscheduled = 0;         // promised co-scheduled unit of its groups, 0 if none
  bool needs_cluster_check = false; // made of IgnoreSmCoscheduling pieces: prove on creation
  bool exact = false; // only groups without Backfill: sms / coscheduled clusters must fit
  bool has_workqueue_config = false;
  cudaDevWorkqueueConfigResource workqueue{};

  bool has_workqueue = false;
  bool workqueue_provisioned = false; // handed to a 13.1 driver with the SMs
};

inline greenctx_resource_desc *desc_of(cudaDevResourceDesc_t handle) noexcept {
  return reinterpret_cast<greenctx_resource_desc *>(handle);
}

inline cudaDevResourceDesc_t handle_of(greenctx_resource_desc *desc) noexcept {
  return reinterpret_cast<cudaDevResourceDesc_t>(desc);
}
