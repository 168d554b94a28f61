// SPDX-License-Identifier: Apache-2.0
// How `greenctx bench` (latency) shows its results: its targets, and the run as a record of the
// report model (report/record.hpp), which every format renders and --from reads back.
#pragma once

#include "commands/bench/latency.hpp"
#include "report/record.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <utility>
#include <vector>

namespace greenctx::cli::bench {

/// A target of the benchmark, evaluated on the results.
struct target {
  std::string name, rule; ///< e.g. "isolation", "green p99 / alone-in-green p99 <= 1.05"
  double value = 0, limit = 0;
  bool at_most = true; ///< value must be <= limit (else >=)
  bool available = false;
  bool met() const { return available && (at_most ? value <= limit : value >= limit); }
};

std::vector<target> evaluate_targets(const results &r);

/// The background partition's share of the device's SMs.
double sm_share(const results &r);

/// A background rate as a fraction of the background's rate alone on all SMs (0 when unknown).
double of_full(const results &r, const background_rate &b);

/// The record of a run (kind "bench", schema 2). Config: the workloads and their sizes (those of
/// workloads not run are detail), samples, rounds. Values: the split obtained, the background
/// alone (on all SMs and on its partition, in the background's unit), the SM share, the wave
/// quantization, "targets_met" (yes when every target is met: --check-targets). Tables: "samples"
/// (raw, the first, so the CSV: placement,sample,host_us,gpu_us,start_delay_us, every sample),
/// "placements" (host min, p50, p90, p99, max and noise, GPU p50, start delay p50 and p99, the
/// background's rate, of full and of SM share), "targets" (value, limit, met: yes, NO or n/a) and
/// the detail table "background" (work and seconds of each rate). Two figures: the latency
/// distribution per placement (log scale) and the background's fraction of its full rate.
/// `environment` is the JSON of environment_json.
report::record bench_record(const results &r, const nlohmann::json &environment);

/// The raw samples of named critical series, one row per sample: `name_key` (the series' name),
/// "sample" (from 0), "host_us", "gpu_us" and, with `start_delay`, "start_delay_us" (nothing where
/// a series has fewer samples of a kind). Raw: in the JSON and the CSV only.
report::series samples_table(const char *name_key,
                             const std::vector<std::pair<std::string, const critical_stats *>> &of,
                             bool start_delay);

/// Whether the record says its targets were met ("targets_met" is "yes"): --check-targets.
bool targets_met(const report::record &r);

} // namespace greenctx::cli::bench
