// SPDX-License-Identifier: Apache-2.0
// The checks of a verification run, on SM usage already measured: pure code, tested on the CPU.
// The measurement itself (greenctx/measure/verify.hpp) runs a probe on the GPU.
#pragma once

#include "greenctx/cxx_standard.hpp"

#include <string>
#include <vector>

namespace greenctx {

/// What one partition's probe saw.
struct partition_usage {
  std::string label;         ///< "16" or "rest"
  unsigned requested = 0;    ///< 0 for rest
  unsigned obtained = 0;     ///< SMs the green context holds
  std::vector<unsigned> sms; ///< distinct SM ids its probe blocks ran on, sorted
  double start_us = 0;       ///< when its probe started and ended (device events), relative to
  double end_us = 0;         ///< the first partition's start; both 0 when not timed
};

struct verify_report {
  std::vector<partition_usage> parts;
  unsigned sm_span = 0;                ///< SM ids are below this (the map's width)
  std::vector<std::string> violations; ///< empty when every check passed
  std::vector<std::string> notes;      ///< things worth knowing that are not violations
  /// Shortest overlap in time between any two partitions' probes (negative: a gap), in us;
  /// meaningful only when `timed`.
  double min_overlap_us = 0;
  bool timed = false; ///< probes carried start/end times

  bool ok() const noexcept { return violations.empty(); }
};

/// The checks, on usage already measured (pure): each partition ran on at most `obtained` SMs,
/// and no SM was used by two partitions. A partition that used fewer SMs than it holds gets a
/// note, and so do probes that did not all run at the same time (when timed).
verify_report check_usage(std::vector<partition_usage> parts, unsigned device_sms);

/// One character per SM id in [0, span): `mark` where `sms` has the id, '.' elsewhere.
std::string sm_map(const std::vector<unsigned> &sms, unsigned span, char mark = '#');

} // namespace greenctx
