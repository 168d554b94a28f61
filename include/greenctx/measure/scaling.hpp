// SPDX-License-Identifier: Apache-2.0
// Scaling: how the time of one piece of work changes with the SMs it may use. The caller's
// workload runs alone on a green context of each SM count, with warm-up and samples taken in
// interleaved rounds; per count the result holds the distribution of its time, its speed-up over
// the largest count measured and the ideal (linear) speed-up. `greenctx scale` measures whole
// programs the same way through `greenctx run`; this is the library's runner for work launched
// in-process.
#pragma once

#include "greenctx/cxx_standard.hpp"

#include "greenctx/core/device.hpp"
#include "greenctx/measure/contention.hpp"
#include "greenctx/measure/workloads.hpp"
#include "greenctx/plan/granularity.hpp"

#include <chrono>
#include <string>
#include <vector>

namespace greenctx::measure {

struct scaling_config {
  unsigned samples = 100; ///< timed launches per SM count
  unsigned warmup = 10;   ///< untimed launches before a count's first round (at most 5 later)
  unsigned rounds = 5;    ///< samples are taken in this many rounds over all counts
  std::chrono::microseconds gap{0}; ///< mean host pause before each launch (jittered +-50%)
  /// A count no green context of this GPU has exactly (12 where sizes are multiples of 8):
  /// false, refused with the sizes next to it; true, measured at the size the partition planner
  /// rounds it to, the point saying so (scaling_point::rounding). Never silently.
  bool round_counts = false;
  /// Each timed launch is enqueued behind a hold and starts once all of it is enqueued, so that
  /// its device time leaves out how long the launch took on the host (contention_config's
  /// hold_launch). Off: the device time runs from the event before the launch.
  bool hold_launch = true;
};

/// One SM count to measure: as asked and as the planner makes it.
struct scaling_count {
  unsigned requested = 0; ///< as asked
  unsigned sms = 0;       ///< the green context's size the planner gives it
  std::string rounding;   ///< why sms != requested (the planner's words); empty when equal
};

/// The counts a scaling run measures on a GPU of `device_sms` SMs grouped by `grain`, ascending:
/// every size a green context can have exactly (valid_counts) when `requested` is empty, else
/// each one requested, as the partition planner makes it. Throws request_error for a count of 0
/// or above the GPU's SMs, a count named twice, a count that is not a size a green context has
/// (without `round_counts`: the message names the sizes next to it), or two counts rounded to
/// the same size. Pure code.
std::vector<scaling_count> plan_scaling(const std::vector<unsigned> &requested, unsigned device_sms,
                                        granularity grain, bool round_counts = false);

/// The workload on one SM count.
struct scaling_point {
  unsigned requested = 0; ///< the count as asked
  unsigned sms = 0;       ///< SMs of the green context it ran on (read back from the driver)
  std::string rounding;   ///< why sms != requested; empty when equal
  /// Its times in microseconds: host (launch to completion), gpu (events around the launch) and
  /// start delay (when the workload reports its execution time), each with its summary.
  critical_stats time;
  /// p50 device time at the largest count measured / p50 here: 1 at the largest count, below 1
  /// where fewer SMs make the work slower.
  double speedup = 0;
  double ideal = 0;      ///< sms / the largest count's SMs: the speed-up of perfectly linear work
  double efficiency = 0; ///< speedup / ideal (1: linear; above 1: better than linear)
};

struct scaling_result {
  scaling_config cfg;
  std::string workload_name;
  unsigned device_sms = 0;
  unsigned reference_sms = 0;        ///< the largest count measured: speed-ups are against it
  std::vector<scaling_point> points; ///< by SM count, ascending
};

/// Fills speedup, ideal and efficiency of `points` (ascending by SMs, summaries filled) against
/// the last one; returns its SMs. Points without samples keep 0. Pure code.
unsigned scaling_speedups(std::vector<scaling_point> &points);

/// Runs `workload` alone on a green context of each of `sm_counts` SMs (empty: every size this
/// GPU makes; see plan_scaling), `cfg.samples` launches each after warm-up, one at a time, and
/// returns the time distributions and speed-ups. The green contexts are made once, before the
/// first sample, and kept until the end. `workload.launch` enqueues one instance on the stream
/// it is given (no synchronization). Throws request_error for counts plan_scaling refuses, no
/// samples or a workload without a launch; error for driver failures; what the workload throws.
scaling_result scaling(const device &dev, const critical_workload &workload,
                       const std::vector<unsigned> &sm_counts = {}, const scaling_config &cfg = {},
                       const progress_fn &progress = {});

} // namespace greenctx::measure
