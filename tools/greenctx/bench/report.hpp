// Printing and saving `greenctx bench` results: a markdown table, JSON with raw samples, CSV of
// the samples, and an SVG plot.
#pragma once

#include "engine.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace greenctx::bench {

/// A target of the benchmark, evaluated on the results.
struct target {
  std::string name, rule; ///< e.g. "isolation", "green p99 / alone-in-green p99 <= 1.05"
  double value = 0, limit = 0;
  bool at_most = true; ///< value must be <= limit (else >=)
  bool available = false;
  bool met() const { return available && (at_most ? value <= limit : value >= limit); }
};

std::vector<target> evaluate_targets(const results &r);

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

} // namespace greenctx::bench
