// SPDX-License-Identifier: Apache-2.0
// Resource descriptors: what a green context is made from (pieces of a split, and on 13.1 drivers
// a work-queue configuration), with an id for their content.
#pragma once

#include "greenctx/cxx_standard.hpp"

#include "greenctx/plan/resource.hpp"

#include <cuda.h>

#include <cstdint>
#include <span>

namespace greenctx {

/// A work-queue configuration (CUDA 13.1's WorkqueueConfig resource): how many work queues the
/// streams of a green context made from the descriptor use, and whom they share them with. Only a
/// 13.1 driver takes one; older drivers refuse the descriptor.
struct workqueue_config {
  int device = 0;                 ///< the device's ordinal
  unsigned concurrency_limit = 0; ///< wqConcurrencyLimit: at most this many queues
  unsigned sharing_scope = 0;     ///< 0: the device context's queues; 1: balanced per green context
};

/// A resource descriptor (cuDevResourceGenerateDesc): the input of green_context::create. A plain
/// value: the driver has no call to destroy descriptors.
class descriptor {
public:
  descriptor() = default;
  CUdevResourceDesc native_handle() const noexcept { return handle_; }
  CUdevice device() const noexcept { return device_; }
  /// Total SMs of the pieces it was built from.
  unsigned sm_count() const noexcept { return sm_count_; }
  /// An id for what the descriptor was built from: the device, each piece's resource struct as the
  /// driver filled it in, and the work-queue configuration if any (the bytes are interned for the
  /// process, so equal ids mean equal bytes). Equal ids mean the same SMs and the same queue
  /// settings, so a green context made from one descriptor can stand
  /// for one made from the other (context recycling, pools). Measured on the H200 (driver 580):
  /// two split calls on the same input with the same arguments give byte-identical pieces, and the
  /// pieces' bytes differ where their SMs do (2026-12-01; benchmarks/RESULTS.md, "Pool").
  /// 0 (shares with nothing) unless every piece came out of a split: a resource read back
  /// from a green context or a device carries no SM mask, only a pointer of the driver's that a
  /// later object may reuse. Different ids may still cover the same SMs (pieces of different
  /// splits): a missed share, never a wrong one.
  std::uint64_t content_id() const noexcept { return content_id_; }

  /// Builds a descriptor from one or more pieces. Several SM pieces must come from the same split
  /// call (groups or remainder) and the same device; greenctx checks this first and says which
  /// piece breaks it. Descriptors with the same non-zero content_id() share one driver descriptor
  /// (made by the first call; the driver never frees descriptors). Thread-safe. Throws
  /// request_error, or error when the driver refuses.
  static descriptor from(std::span<const sm_resource> pieces);
  static descriptor from(const sm_resource &piece) { return from(std::span(&piece, 1)); }
  /// The same with a work-queue configuration after the SMs (13.1 drivers).
  static descriptor from(std::span<const sm_resource> pieces, const workqueue_config &queues);

private:
  static descriptor generate(std::span<const sm_resource> pieces, const workqueue_config *queues);

  CUdevResourceDesc handle_ = nullptr;
  CUdevice device_ = 0;
  unsigned sm_count_ = 0;
  std::uint64_t content_id_ = 0;
};

} // namespace greenctx
