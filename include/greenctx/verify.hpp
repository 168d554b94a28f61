// Verifying partitions on the hardware: where did each partition's kernels run?
#pragma once

#include "greenctx/partition.hpp"

#include <chrono>
#include <string>
#include <vector>

namespace greenctx {

/// What one partition's probe saw.
struct partition_usage {
  std::string label;         ///< "16" or "rest"
  unsigned requested = 0;    ///< 0 for rest
  unsigned obtained = 0;     ///< SMs the green context holds
  std::vector<unsigned> sms; ///< distinct SM ids its probe blocks ran on, sorted
};

struct verify_report {
  std::vector<partition_usage> parts;
  unsigned sm_span = 0;                ///< SM ids are below this (the map's width)
  std::vector<std::string> violations; ///< empty when every check passed
  std::vector<std::string> notes;      ///< things worth knowing that are not violations

  bool ok() const noexcept { return violations.empty(); }
};

/// The checks, on usage already measured (pure): each partition ran on at most `obtained` SMs,
/// and no SM was used by two partitions. A partition that used fewer SMs than it holds gets a note.
verify_report check_usage(std::vector<partition_usage> parts, unsigned device_sms);

/// One character per SM id in [0, span): `mark` where `sms` has the id, '.' elsewhere.
std::string sm_map(const std::vector<unsigned> &sms, unsigned span, char mark = '#');

/// Runs the probe on every partition at once (all streams held by a start gate, released
/// together) and checks the result. `blocks_per_sm` blocks per device SM are launched on each
/// partition, each spinning for `spin`. Throws error on driver failures.
verify_report verify_partitions(const device &dev, const partition_set &set,
                                unsigned blocks_per_sm = 8,
                                std::chrono::nanoseconds spin = std::chrono::microseconds(20));

} // namespace greenctx
