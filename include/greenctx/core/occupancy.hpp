// SPDX-License-Identifier: Apache-2.0
// What a context's SMs can co-schedule: thread-block clusters, measured with the driver's
// occupancy calculator on a stream of the context (so a green context's SMs are what counts).
#pragma once

#include "greenctx/cxx_standard.hpp"

#include "greenctx/core/execution_context.hpp"

namespace greenctx {

/// How many clusters of `cluster_size` SMs can run at once on `ctx`: clusters of blocks that each
/// fill a whole SM (their shared memory is more than half of an SM's), so that every cluster needs
/// `cluster_size` SMs of one GPC (cuOccupancyMaxActiveClusters). 0 means the context cannot run
/// such a cluster at all. Sizes above 8 are the H100/H200's non-portable sizes (up to 16).
/// Throws request_error for a size of 0 or above 16, error for driver failures.
unsigned max_active_sm_clusters(const execution_context_ref &ctx, unsigned cluster_size);

} // namespace greenctx
