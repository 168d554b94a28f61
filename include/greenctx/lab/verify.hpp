// Verifying partitions on the hardware: where did each partition's kernels run?
#pragma once

#include "greenctx/cxx_standard.hpp"

#include "greenctx/core/partition.hpp"
#include "greenctx/plan/verify_check.hpp"

#include <chrono>
#include <string>
#include <vector>

namespace greenctx {

/// Runs the probe on every partition at once and checks the result. The probes are queued back to
/// back, each `blocks_per_sm` blocks per device SM spinning for `spin`, long enough to overlap;
/// device events time each one so the report shows that they did. Throws error on driver failures.
///
/// (A start gate that holds streams on a host-resolved dependency, a cuStreamWaitValue32 on host
/// memory or an event behind cuLaunchHostFunc, blocked later launches on the host on the H200 with
/// driver 580 until it opened, so verify does without one.)
verify_report verify_partitions(const device &dev, const partition_set &set,
                                unsigned blocks_per_sm = 8,
                                std::chrono::nanoseconds spin = std::chrono::microseconds(100));

} // namespace greenctx
