// SPDX-License-Identifier: Apache-2.0
// A piece of a split ("16,rest" piece 1) for `greenctx run --split S --piece I`: the SMs a process
// confined to that piece runs on, made as greenctx's library makes the partitions of `greenctx
// verify S` (plan_partitions and the heterogeneous-split planner of src/plan/), over raw driver
// calls: the library's own driver layer cannot run inside the preload library, whose dlsym and
// cuGetProcAddress it would reach.
#pragma once

#include <cuda.h>

#include "greenctx/plan/group_plan.hpp"
#include "greenctx/plan/granularity.hpp"

#include <span>
#include <string>
#include <vector>

namespace greenctx::preload {

/// What the planner needs to know of a device: its compute capability and documented granularity.
struct planner_device {
  CUdevice device = 0;
  int cc_major = 0;
  granularity documented;
  /// A resource the driver gave for this device, as the planner reads it.
  sm_resource resource(const CUdevResource &raw) const {
    return reported_sm_resource(raw, device, documented, cc_major);
  }
};
planner_device planner_device_of(CUdevice device);

/// The planner's split and intermediate green contexts (greenctx/plan/group_plan.hpp) over the
/// driver's own calls: what src/core/group_split_driver.cpp's backend does through greenctx's
/// driver layer. Intermediate contexts are kept for the life of the process.
split_backend raw_backend(const planner_device &dev);

/// The driver's resources of planner pieces, in order.
std::vector<CUdevResource> raw_of(std::span<const sm_resource> pieces);

/// The SM resources of piece `index` of split `spec` on `device` (split flags `flags`, CUDA's
/// bits), in the order a descriptor takes them; empty, with *why said, when it cannot be made.
/// Intermediate green contexts it needs stay for the life of the process.
std::vector<CUdevResource> split_piece(int device, const std::string &spec, unsigned index,
                                       unsigned flags, std::string *why);

/// The bytes of `pieces` in hexadecimal (the debug trace shows them, so that the pieces two
/// processes got can be compared).
std::string hex_of(const std::vector<CUdevResource> &pieces);

} // namespace greenctx::preload
