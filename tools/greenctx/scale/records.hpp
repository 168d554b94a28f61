// The record of one `greenctx scale`: every run of the program, its points (SM counts and the
// unconfined baseline), their summaries and speed-ups, and the JSON file that saves it all.
// Pure code: tested on any machine.
#pragma once

#include "report/stats.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace greenctx::cli::scale {

/// "exit 0", "exit 3", "signal 11 (SIGSEGV)".
std::string describe_end(int exit_code, int signal);

/// One run of the program: how long it took and how it ended.
struct run_record {
  unsigned repeat = 0; ///< index among the runs of its point (or among the warm-ups)
  double wall_s = 0;   ///< from start to exit
  int exit_code = 0;   ///< valid when signal == 0
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

  /// Wall times of the runs that exited 0, in seconds.
  std::vector<double> samples() const;
  /// "8 SMs" or "all 132 SMs, unconfined".
  std::string label() const;
};

/// Everything one `greenctx scale` did.
struct results {
  std::vector<std::string> program; ///< the program and its arguments, as given
  int device = 0;
  unsigned device_sms = 0;
  bool ignore_coscheduling = false;
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
  summary time; ///< seconds, over the runs that exited 0 (count 0: none did)
  /// Median at the smallest SM count / median here: how much faster than on the fewest SMs.
  std::optional<double> vs_smallest;
  /// Median unconfined / median here: below 1, slower than the program on the whole GPU.
  std::optional<double> vs_baseline;
  std::string status; ///< "ok", "not run", or how its failed run ended ("run 2: exit 3")
};

/// One summary per point, in the order of r.points.
std::vector<point_summary> summarize(const results &r);

/// The first confined point (the fewest SMs), or null.
const point *smallest_confined(const results &r);

/// The unconfined point, or null.
const point *baseline_point(const results &r);

/// Everything, raw samples and every run's end included.
nlohmann::json to_json(const results &r, const nlohmann::json &environment);

/// Reads back what to_json wrote. Throws nlohmann::json::exception on a file of another shape.
/// Files of greenctx before the confined_devices report (each run with "confined_threads": the
/// threads that got a green context on the one GPU) read as that GPU confined, with that many
/// green contexts.
results from_json(const nlohmann::json &j);

} // namespace greenctx::cli::scale
