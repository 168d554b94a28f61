// SPDX-License-Identifier: Apache-2.0
// SM resources: a set of SMs as the driver describes it (the whole device, one piece of a split,
// or what a context holds). A plain value: copy it freely; it owns nothing.
#pragma once

#include "greenctx/cxx_standard.hpp"

#include "greenctx/plan/granularity.hpp"

#include <cuda.h>

#include <cstdint>

namespace greenctx {

/// A set of SMs. `sm_count()`, `min_partition_size()` and `coscheduled_alignment()` are read from
/// the driver; on 12.x drivers, which leave the last two zero, they come from the guide's table for
/// the device's compute capability.
///
/// Resources that came out of one split call share an `origin()`; the driver only combines pieces
/// of the same split into one descriptor, and greenctx checks that before calling it.
class sm_resource {
public:
  sm_resource() = default;

  /// Wraps a resource the driver filled in. `origin` is 0 for a device or context resource and the
  /// split's serial number for split outputs.
  sm_resource(const CUdevResource &raw, CUdevice device, granularity grain, int cc_major,
              std::uint64_t origin = 0) noexcept
      : raw_(raw), device_(device), grain_(grain), cc_major_(cc_major), origin_(origin) {}

  unsigned sm_count() const noexcept {
    return raw_.type == CU_DEV_RESOURCE_TYPE_SM ? raw_.sm.smCount : 0;
  }
  unsigned min_partition_size() const noexcept { return grain_.min_partition; }
  unsigned coscheduled_alignment() const noexcept { return grain_.alignment; }
  granularity grain() const noexcept { return grain_; }
  /// The granularity a split of this resource with `flags` obeys (effective_granularity).
  granularity grain(split_flags flags) const {
    return effective_granularity(grain_, cc_major_, flags);
  }
  int compute_capability_major() const noexcept { return cc_major_; }
  CUdevice device() const noexcept { return device_; }
  std::uint64_t origin() const noexcept { return origin_; }
  bool empty() const noexcept { return sm_count() == 0; }

  const CUdevResource &native() const noexcept { return raw_; }

private:
  CUdevResource raw_{};
  CUdevice device_ = 0;
  granularity grain_{};
  int cc_major_ = 0;
  std::uint64_t origin_ = 0;
};

/// A resource the driver filled in, on device `device` of compute capability `cc_major`: with the
/// granularity it reports, or `documented` where it reports none (12.x drivers leave both zero).
inline sm_resource reported_sm_resource(const CUdevResource &raw, CUdevice device,
                                        granularity documented, int cc_major,
                                        std::uint64_t origin = 0) noexcept {
  granularity g{raw.sm.minSmPartitionSize, raw.sm.smCoscheduledAlignment};
  if (g.min_partition == 0 || g.alignment == 0)
    g = documented;
  return sm_resource(raw, device, g, cc_major, origin);
}

} // namespace greenctx
