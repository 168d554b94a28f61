// SPDX-License-Identifier: Apache-2.0
// Choosing a split by measurement: the critical work on N SMs, the background on the rest, for
// the sizes this GPU can make, measured with both running (the contention measurement's green
// placement), and the N that meets an objective with the most background throughput.
#pragma once

#include "greenctx/cxx_standard.hpp"

#include "greenctx/core/device.hpp"
#include "greenctx/measure/contention.hpp"
#include "greenctx/measure/stats.hpp"
#include "greenctx/measure/workloads.hpp"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace greenctx::measure {

enum class tune_goal {
  p99_at_most_us,          ///< the critical p99 at most `value` microseconds
  p99_at_most_times_alone, ///< at most `value` times its p99 alone on the whole GPU
  smallest_within_best,    ///< the smallest partition whose p99 is within `value` (0.1: 10%) of
                           ///< the best p99 of any split
};

struct tune_objective {
  tune_goal goal = tune_goal::p99_at_most_times_alone;
  double value = 1.5;
  std::string describe() const; ///< "critical p99 <= 1.5 x its p99 alone on the whole GPU"
};

enum class tune_search { guided, exhaustive, both };

struct tune_config {
  tune_objective objective;
  tune_search search = tune_search::guided;
  unsigned samples = 300; ///< critical samples per candidate while searching
  unsigned confirm_samples =
      1000;            ///< for the chosen split, its neighbours, and every exhaustive one
  unsigned rounds = 2; ///< of each measurement (contention_config::rounds)
  std::chrono::microseconds gap{100};
  /// Critical partition sizes to consider; empty: every N,rest this GPU can make.
  std::vector<unsigned> sizes;
  /// After the search, the chosen split measured once more (confirm_samples), independently:
  /// whether the answer holds on a second measurement (tune_result::repeat).
  bool repeat = true;
  /// Each critical sample held until all of it is enqueued (contention_config::hold_launch): the
  /// time its launch takes on the host, the same on every split, is left out of the comparison.
  bool hold_launch = true;
};

/// One measurement of one split.
struct tune_point {
  unsigned critical_sms = 0, background_sms = 0;
  summary critical;                     ///< device time of the critical work, us
  std::optional<interval> p99_interval; ///< about 95% confidence for the p99 (quantile_interval)
  double background_rate = 0;           ///< work per second (divide by the unit scale to show it)
  double seconds = 0;                   ///< what measuring it took
};

/// What one search found.
struct tune_answer {
  std::optional<unsigned> chosen;   ///< critical SMs of the chosen split
  std::optional<unsigned> closest;  ///< when none met the objective: the lowest p99 measured
  std::string reason;               ///< for people
  double limit_us = 0;              ///< the p99 bound the objective came to
  std::vector<tune_point> measured; ///< in measuring order
  double seconds = 0;
};

struct tune_result {
  tune_config cfg;
  std::string critical_name, background_name, background_unit;
  double background_unit_scale = 1;
  unsigned device_sms = 0;
  std::vector<unsigned> candidates; ///< the sizes considered
  summary alone;                    ///< the critical work alone on the whole GPU
  std::optional<tune_answer> guided, exhaustive;
  /// Per size, its best-sampled measurement over both searches, by size.
  std::vector<tune_point> curve;
  /// Sizes on the Pareto front of curve (no other has both a lower p99 and a higher rate).
  std::vector<unsigned> pareto;
  /// The chosen split measured again after the search (tune_config::repeat), and whether that
  /// measurement meets the objective's bound too. Not in the curve, nor in either search's time.
  std::optional<tune_point> repeat;
  bool repeat_meets = false;
  /// The answer to use: the exhaustive one when measured, else the guided one.
  const tune_answer &answer() const { return exhaustive ? *exhaustive : *guided; }
  /// "24,rest" for the chosen split (empty when none met the objective).
  std::string split() const;
};

/// The sizes N for which "N,rest" is a valid request on `sms` (no rounding).
std::vector<unsigned> tune_candidates(const sm_resource &sms);

/// Measures `sms` SMs of critical work with the background on the rest, `samples` samples.
using tune_measure_fn = std::function<tune_point(unsigned sms, unsigned samples)>;

/// The search alone, over any measurement (pure: the tests give it synthetic curves). `sizes`
/// increasing; `alone_p99` the critical p99 alone on the whole GPU.
tune_answer search_split(const std::vector<unsigned> &sizes, const tune_config &cfg,
                         double alone_p99, bool exhaustive, const tune_measure_fn &measure);

/// The Pareto front of a curve: sizes of points no other beats on both p99 and rate.
std::vector<unsigned> pareto_front(const std::vector<tune_point> &curve);

/// Throws request_error for an objective value out of range or no samples (tune checks this
/// too; callers may check before they open a device).
void check_tune_config(const tune_config &cfg);

/// The sizes a tune considers: cfg.sizes (sorted, each once), or every one of `valid` when it
/// names none. Throws request_error for a size not in `valid` (naming those that are) or none.
std::vector<unsigned> tune_sizes(const tune_config &cfg, const std::vector<unsigned> &valid);

/// The tune over any measurement, for work tune() cannot launch itself (several processes, as
/// tune --comm's all-reduce over every GPU): `out` holds cfg, candidates and alone; runs the
/// searches cfg asks for, the repeat, and fills the curve and the Pareto front. `measure` fills
/// a point but its time (measured here); `progress` gets a line per measurement as in tune().
void run_tune(tune_result &out, const tune_measure_fn &measure, const progress_fn &progress = {});

/// Chooses the split: measures the critical work alone, then searches as `cfg` says. Throws
/// request_error for an objective value out of range, sizes this GPU cannot make, no samples.
tune_result tune(const device &dev, const critical_workload &critical,
                 const background_workload &background, const tune_config &cfg = {},
                 const progress_fn &progress = {});

} // namespace greenctx::measure
