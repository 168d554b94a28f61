// SPDX-License-Identifier: Apache-2.0
// Verifying partitions on the hardware: a probe kernel that records %smid per block, and the
// check of where each partition's kernels ran (the pure checks are greenctx/plan/verify_check.hpp).
#pragma once

#include "greenctx/cxx_standard.hpp"

#include "greenctx/core/device.hpp"
#include "greenctx/core/memory.hpp"
#include "greenctx/core/partition.hpp"
#include "greenctx/core/stream.hpp"
#include "greenctx/plan/verify_check.hpp"

#include <chrono>
#include <string>
#include <vector>

namespace greenctx {

/// Device memory for one SM id per block, and the kernel that fills it. Movable, not copyable.
/// Thread safety: launch() and read() on one probe must not overlap.
class sm_probe {
public:
  /// Allocates room for `blocks` ids on `dev`. Each block of a launch records its SM, then spins
  /// for `spin` so that the launch spreads over every SM its context allows.
  sm_probe(const device &dev, unsigned blocks,
           std::chrono::nanoseconds spin = std::chrono::microseconds(20));
  unsigned blocks() const noexcept { return blocks_; }
  /// Fills the ids with a marker, then launches the probe on `s`.
  void launch(stream_ref s) const;
  /// The SM of each block; call once the launch has completed.
  std::vector<unsigned> block_sms() const;
  /// The distinct SMs the launch used, sorted.
  std::vector<unsigned> sms_used() const;

private:
  device_buffer ids_;
  unsigned blocks_ = 0;
  unsigned long long spin_ns_ = 0;
};

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
