// SPDX-License-Identifier: Apache-2.0
// `greenctx bench adaptive` (`--adaptive`): the library's adaptive measurement
// (greenctx/measure/adaptive.hpp: the policies, the schedule, the verdicts and the measurement)
// of bench's critical kernel beside the built-in chunked streaming copy, with the options that
// size them, and its reports.
//
// The types keep the names the reports use (policy, config, configuration, results, verdict,
// evaluate) as aliases of the library's or thin additions to them. adaptive_report.cpp is pure
// code (CPU-tested); adaptive_run.cpp calls the library.
#pragma once

#include "commands/bench/latency.hpp"
#include "report/record.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace greenctx::cli::bench::adaptive {

using policy = measure::adaptive_policy;
using measure::name;
using measure::predictive;
using measure::waits;

/// What `greenctx bench adaptive` measures: the library's configuration and the built-in
/// workloads' sizes.
struct config : measure::adaptive_config {
  int device = 0;
  std::size_t chunk_bytes = std::size_t{64} << 20; ///< bytes each background chunk copies
  unsigned critical_blocks = 16;
  std::chrono::microseconds critical_block_time{20};
};

/// Parses --shrink-to: SM counts separated by commas ("8,16,32,64"), each 1..4096, no duplicates.
/// Throws request_error saying which item is wrong and what would work.
std::vector<unsigned> parse_shrink_to(std::string_view text);
/// Parses --policies: names of `policy` separated by commas, no duplicates. Throws request_error.
std::vector<policy> parse_policies(std::string_view text);
/// measure::validate_adaptive with the options' names, and a chunk smaller than one 16-byte word
/// per copy thread (--chunk-mib). Throws request_error.
void validate(const config &cfg, unsigned device_sms);

using step = measure::adaptive_step;
inline step schedule(policy p, std::chrono::duration<double, std::micro> gap,
                     std::chrono::microseconds lead) {
  return measure::adaptive_schedule(p, gap, lead);
}

using configuration = measure::adaptive_configuration;
using alone_rate = measure::adaptive_alone_rate;

/// What the measurement found, with the options it ran with.
struct results : measure::adaptive_findings {
  config cfg;
};

constexpr double isolation_limit = measure::adaptive_isolation_limit;
constexpr double background_limit = measure::adaptive_background_limit;
using verdict = measure::adaptive_verdict;

/// A verdict per configuration with a background (static included, its ratio 1).
inline std::vector<verdict> evaluate(const results &r) {
  return measure::adaptive_verdicts(r);
}

/// The record of a run (kind "bench-adaptive", schema 2). Config: what was asked. Values: the
/// partitions obtained, whether the critical partition is one green context in every layout, the
/// two target limits, "targets_met" (yes when an adaptive configuration meets both:
/// --check-targets) and which do ("met_by"). Tables: "samples" (raw, the first, so the CSV:
/// configuration,sample,host_us,gpu_us, every sample), "configurations" (host p50 and p99, GPU p50,
/// wait p99, isolation, background GB/s, of static, the targets met: yes, NO (isolation) or NO
/// (background)), "waits" (raw: the wait policies' host waits, every sample) and the detail table
/// "background" (bytes and seconds of every rate, the background alone on each partition first).
/// Two figures: isolation and background ratio per configuration, with the target lines.
/// `environment` is the JSON of environment_json.
report::record adaptive_record(const results &r, const nlohmann::json &environment);
/// Measures every configuration of `cfg` on `dev` (adaptive_run.cpp: measure::measure_adaptive of
/// the critical kernel and measure::copy_chunks). Throws request_error for a configuration
/// validate() refuses or a layout the GPU cannot make.
results run(const device &dev, const config &cfg,
            const std::function<void(const std::string &)> &progress);

} // namespace greenctx::cli::bench::adaptive
