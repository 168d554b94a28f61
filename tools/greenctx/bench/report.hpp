// How `greenctx bench` shows and saves its results: the targets, a markdown report, JSON with the
// raw samples (written and read back), CSV of the samples and an SVG plot, laid out by the CLI's
// shared table and SVG writers.
#pragma once

#include "bench/engine.hpp"

#include <nlohmann/json.hpp>

#include <string>

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

/// The markdown report (tables, targets, what the numbers mean).
std::string markdown(const results &r, const nlohmann::json &environment);

/// Everything, raw samples included.
nlohmann::json to_json(const results &r, const nlohmann::json &environment);

/// Reads back what to_json wrote (summaries are recomputed from the raw samples), so that a saved
/// run can be reported and plotted again without a GPU. Throws nlohmann::json::exception on a
/// file of another shape.
results from_json(const nlohmann::json &j);

/// placement,sample,host_us,gpu_us,start_delay_us
std::string to_csv(const results &r);

/// Latency distribution per placement (log scale) and background throughput, for people.
std::string to_svg(const results &r, const nlohmann::json &environment);

} // namespace greenctx::cli::bench
