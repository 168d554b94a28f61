// SPDX-License-Identifier: Apache-2.0
// The results of one `greenctx scale`: every run of the program, its points (SM counts and the
// unconfined baseline), their summaries and speed-ups.
// Pure code: tested on any machine.
#pragma once

#include "report/stats.hpp"
#include "commands/scale/metric.hpp"

#include <optional>
#include <string>
#include <vector>

namespace greenctx::cli::scale {

/// One run of the program: how long it took, its figure, and how it ended.
struct run_record {
  unsigned repeat = 0; ///< index among the runs of its point (or among the warm-ups)
  double wall_s = 0;   ///< from start to exit
  /// What the metric measured (results::measure), in its unit; the wall time for wall. None when
  /// the run gave none (no_figure says why) or ended before it could.
  std::optional<double> figure;
  std::string no_figure; ///< why a run that exited 0 has no figure, else empty
  int exit_code = 0;     ///< valid when signal == 0
  int signal = 0;
  bool cuda_used = false;            ///< reported by the preload library (confined runs only)
  std::vector<int> confined_devices; ///< GPUs that got a confined context (the preload library's)
  unsigned green_contexts = 0;       ///< green contexts the preload library created
  std::vector<std::string> problems; ///< what the preload library could not confine

  bool ok() const { return signal == 0 && exit_code == 0; }
};

/// One SM count, or the unconfined baseline, and its runs.
struct point {
  unsigned sms = 0;      ///< SMs the program was confined to; the device's SMs for the baseline
  bool baseline = false; ///< unconfined: no preload library, no green context
  std::vector<run_record> runs; ///< in the order they ran

  /// Figures of the runs that exited 0 with one, in the metric's unit.
  std::vector<double> samples() const;
  /// Wall times of the runs that exited 0, in seconds.
  std::vector<double> wall_samples() const;
  /// "8 SMs" or "all 132 SMs, unconfined".
  std::string label() const;
};

/// Everything one `greenctx scale` did.
struct results {
  std::vector<std::string> program; ///< the program and its arguments, as given
  metric measure;                   ///< what each run's figure is (--metric)
  int device = 0;
  unsigned device_sms = 0;
  bool ignore_coscheduling = false;
  /// The program was told the device's SM count (--real-sm-count), not its partition's.
  bool real_sm_count = false;
  unsigned repeat = 0;     ///< timed runs per point asked for
  unsigned warmup = 0;     ///< untimed warm-up runs asked for
  unsigned warmup_sms = 0; ///< SMs the warm-up runs were confined to
  std::vector<run_record> warmups;
  std::vector<point> points; ///< the SM counts ascending, then the baseline
  std::string failure;       ///< empty when every run succeeded, else which run and how it ended

  bool complete() const { return failure.empty(); }
};

/// A point's numbers.
struct point_summary {
  summary figure; ///< the metric's unit, over the runs that exited 0 with one (count 0: none)
  summary wall;   ///< wall times in seconds, over the runs that exited 0
  /// How much better than on the fewest SMs: median there / median here for a time, median here
  /// / median there for a rate (a figure better higher).
  std::optional<double> vs_smallest;
  /// How the median here compares to the unconfined one, the same way round: below 1, worse than
  /// the program on the whole GPU.
  std::optional<double> vs_baseline;
  std::string status; ///< "ok", "not run", or how its failed run ended ("run 2: exit 3")
};

/// One summary per point, in the order of r.points.
std::vector<point_summary> summarize(const results &r);

/// The first confined point (the fewest SMs), or null.
const point *smallest_confined(const results &r);

/// The unconfined point, or null.
const point *baseline_point(const results &r);

/// With --metric wall, one line warning that start-up (imports, loading, context creation) may
/// be what the curve shows, and what to measure instead; else "". The rule: the fewest SMs'
/// median wall time is at most 1.3x the unconfined median while the device has at least 4x as
/// many SMs. A program whose work on the GPU scales would take far longer on a quarter of the
/// SMs, so a curve that flat is mostly time spent off the GPU.
std::string startup_warning(const results &r, const std::vector<point_summary> &s);

/// "the program was told 8 to 132 SMs (the partition's; unconfined, the device's 132)" or "the
/// program was told the device's 132 SMs (--real-sm-count)".
std::string sm_count_note(const results &r);

} // namespace greenctx::cli::scale
