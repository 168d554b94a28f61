// SPDX-License-Identifier: Apache-2.0
// The measurement layer's bindings (python/measure.cpp, measure_runs.cpp), added to the module by
// bindings.cpp, and what the two files share: numbers from Python checked, results as dicts.
#pragma once

#include <greenctx/measure/contention.hpp>
#include <greenctx/measure/stats.hpp>

#include <nanobind/nanobind.h>

#include <chrono>

void bind_measure(nanobind::module_ &m);
/// The adaptive and scaling measurements (measure_runs.cpp); bind_measure calls it.
void bind_measure_runs(nanobind::module_ &m);

namespace greenctx_py {

/// A whole number of `unit`, at least `least`, from a Python number (no silent rounding). Throws
/// greenctx::request_error naming `what`.
long long whole(double v, const char *what, long long least, const char *unit);
std::chrono::microseconds whole_us(double v, const char *what, long long least = 1);

/// The sampling keywords the measurements share, set on their config (the contention and the
/// adaptive measurements'): the gap and the rate window checked whole.
template <class Config>
void set_sampling(Config &cfg, unsigned samples, unsigned warmup, unsigned rounds, double gap_us,
                  double rate_window_ms) {
  cfg.samples = samples;
  cfg.warmup = warmup;
  cfg.rounds = rounds;
  cfg.gap = whole_us(gap_us, "gap_us", 0);
  cfg.rate_window =
      std::chrono::milliseconds(whole(rate_window_ms, "rate_window_ms", 1, "milliseconds"));
}

nanobind::dict summary_dict(const greenctx::measure::summary &s);
/// work, seconds and rate (in the workload's unit: divided by unit_scale).
nanobind::dict rate_dict(const greenctx::measure::background_rate &r, double unit_scale);
/// The samples (host_us, gpu_us, start_delay_us) and their summaries (host, gpu, start_delay).
nanobind::dict critical_dict(const greenctx::measure::critical_stats &c);

} // namespace greenctx_py
