// SPDX-License-Identifier: Apache-2.0
// What the measurements share (private to the measure layer): samples taken in interleaved
// rounds, and one timed launch of a workload at a time on a stream (events around it, optionally
// held until all of it is enqueued), as the contention and scaling measurements take them.
#pragma once

#include "greenctx/core/device.hpp"
#include "greenctx/core/stream.hpp"
#include "greenctx/measure/contention.hpp"
#include "greenctx/measure/workloads.hpp"

#include <chrono>
#include <functional>
#include <random>

namespace greenctx::measure::detail {

using clock = std::chrono::steady_clock;

/// Microseconds from `a` to `b`.
double us_between(clock::time_point a, clock::time_point b);

/// Spins on the host for `d` (sleeping would wake late by tens of microseconds).
void busy_wait(std::chrono::duration<double, std::micro> d);

/// Throws request_error naming `api` when either workload has no launch function.
void require_launches(const critical_workload &critical, const background_workload &background,
                      const char *api);

/// Copies the workloads' names and the background's unit into a result that has them.
template <class Result>
void name_workloads(Result &out, const critical_workload &critical,
                    const background_workload &background) {
  out.critical_name = critical.name;
  out.background_name = background.name;
  out.background_unit = background.unit;
  out.background_unit_scale = background.unit_scale;
}

/// One background unit (a chunk), checked: a rate needs a positive amount of work per unit.
/// Throws request_error naming `api` when the workload reports none.
double launch_unit(const background_workload &work, stream_ref s, const char *api);

/// Samples taken in rounds over everything measured, so that slow drifts of the machine (clocks,
/// host jitter) fall on all alike: `samples` spread over at most `rounds` rounds (at least 1, at
/// most one per sample), each thing measured preceded by the full warm-up in its first round and
/// a short re-warm (at most 5) in later ones.
struct rounds_plan {
  unsigned samples = 0, warmup = 0, rounds = 1;
  rounds_plan(unsigned samples, unsigned warmup, unsigned rounds);
  /// Samples of round `r` (the first ones take one more when they do not divide evenly).
  unsigned count(unsigned r) const;
  /// Untimed samples before round `r`'s.
  unsigned warmup_of(unsigned r) const;
};

/// How timed samples of one workload are taken.
struct sampling {
  std::chrono::microseconds gap{0}; ///< mean host pause before each sample (jittered +-50%)
  bool hold_launch = false;         ///< each timed sample enqueued behind a stream_hold
  const char *api = "";             ///< names the measurement in errors
  const char *role = "workload";    ///< names the work in errors ("critical workload")
};

/// Launches `work` on `s` `warmup + count` times, one at a time (each waited for), and appends the
/// last `count` to `st`: host time from before the launch to completion, device time between
/// events around the launch, and the start delay when the workload reports its execution time.
/// `before_each`, when given, runs before each sample's pause (to keep a background fed).
/// Throws request_error when a held launch waited for its own stream (see contention_config).
void sample(const device &dev, const critical_workload &work, stream_ref s, const sampling &how,
            unsigned warmup, unsigned count, std::mt19937 &rng, critical_stats &st,
            const std::function<void()> &before_each = {});

/// Fills the summaries of `st` from its samples.
void summarize_all(critical_stats &st);

} // namespace greenctx::measure::detail
