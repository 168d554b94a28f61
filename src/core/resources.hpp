// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "greenctx/plan/resource.hpp"

#include <cstdint>

namespace greenctx::detail {

/// Wraps a driver-filled SM resource, filling in the granularity from the compute capability
/// where the driver (12.x) leaves it zero.
sm_resource make_sm_resource(const CUdevResource &raw, CUdevice dev, std::uint64_t origin = 0);

/// A fresh serial number for the outputs of one split call.
std::uint64_t next_split_origin() noexcept;

} // namespace greenctx::detail
