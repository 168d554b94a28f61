// SPDX-License-Identifier: Apache-2.0
// What `greenctx scale` measures in each run (--metric): the program's wall time, its GPU phase
// as the preload library saw it, or a number the program prints on stdout. The option is read and
// checked before anything runs; each run's figure is then taken from what the run left (its wall
// time, its report, its stdout). Pure code: tested on any machine.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace greenctx::cli::scale {

/// Where a run's figure comes from.
enum class metric_kind {
  wall,     ///< wall time of the whole program, start-up included (seconds)
  gpu_time, ///< first kernel launch to last synchronization, from the preload library (seconds)
  regex,    ///< a number the program prints, captured by a regular expression
  json,     ///< a number under a key of a JSON object the program prints on a line of its own
};

/// Which way a figure improves: a time is better lower, a rate (tokens/s) higher.
enum class better { lower, higher };

/// The figure `greenctx scale` measures. A plain value; `source` is kept as typed.
struct metric {
  metric_kind kind = metric_kind::wall;
  std::string source; ///< regex: the expression; json: the key (dots separate nested keys)
  std::string unit = "s";
  better direction = better::lower;

  /// Whether the figure is read from the program's stdout (regex, json): then greenctx tees it.
  bool reads_stdout() const;
  /// Whether the figure is the GPU phase the preload library reports (gpu_time).
  bool reads_report() const;
  /// Whether the unit is a time (s, ms, us, ns): then figures are shown in s, ms or us.
  bool is_time() const;
  /// Seconds per unit (1e-3 for ms), or 0 when the unit is no time.
  double seconds_per_unit() const;
  /// What to give --metric to measure the same: "wall", "gpu-time", "regex:...", "json:...".
  std::string spec() const;
  /// "wall time of the whole program (start-up included)", "GPU phase (first GPU work to last
  /// synchronization)", "printed number 'took ([0-9.]+) s'", "printed JSON key 'timing.seconds'".
  std::string description() const;
  /// A few words for a plot's axis: "wall time", "GPU phase", "printed number", "timing.seconds".
  std::string short_name() const;
};

/// Reads --metric (`spec`), --metric-unit (`unit`: nullopt when not given) and
/// --higher-is-better / --lower-is-better (`direction`: nullopt when neither was given) before
/// anything runs. `spec` is wall, gpu-time, regex:EXPRESSION (ECMAScript, exactly one capture
/// group: the number) or json:KEY (dots separate nested keys; no empty part). The unit of a
/// printed number defaults to s; its direction defaults to lower for a time unit (s, ms, us, ns)
/// and to higher for a unit ending in "/s"; for any other unit it must be given. wall and
/// gpu-time are seconds, lower is better: a unit or direction given with them is refused. Throws
/// request_error (CUDA_ERROR_INVALID_VALUE, exit 2) saying what is wrong and what would work.
metric parse_metric(std::string_view spec, const std::optional<std::string> &unit,
                    std::optional<better> direction);

/// A run's figure, or why it has none.
struct extracted {
  std::optional<double> value; ///< in the metric's unit
  std::string why_not;         ///< when there is no value: what the run lacked, as a phrase
                               ///< ("printed nothing matching 'took ([0-9.]+) s' ...")
};

/// The figure of a regex or json metric in a run's stdout. regex: the expression is searched in
/// each line, and the last match in the output wins; its capture must be a finite number
/// ("1.5", "2e-3", "+4"). json: each line that is a JSON object holding the key counts, the last
/// one wins, and the value must be a number. Lines end at '\n' (a '\r' before it is ignored).
extracted figure_from_stdout(const metric &m, std::string_view out);

/// The GPU phase of a run in seconds: `last_sync_ns` - `first_work_ns` (CLOCK_MONOTONIC
/// nanoseconds: the earliest first work and the latest last synchronization over the run's
/// processes that reported them, 0 when none did), from the `processes` report lines read. None
/// when no line was read, no process submitted GPU work, none synchronized after it, or the
/// synchronization came first; why_not says which.
extracted gpu_phase_figure(unsigned processes, std::uint64_t first_work_ns,
                           std::uint64_t last_sync_ns);

/// How many times better `here` is than `reference` for a figure that improves `direction`:
/// reference / here for a time, here / reference for a rate. Both must be positive.
double speedup(better direction, double reference, double here);

} // namespace greenctx::cli::scale
