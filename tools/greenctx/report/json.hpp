// JSON pieces every result file writes the same way (bench and scale).
#pragma once

#include "report/stats.hpp"

#include <nlohmann/json.hpp>

#include <optional>

namespace greenctx::cli {

/// {"count", "min", "p50", "p90", "p99", "max", "mean", "stdev", "noise"}.
nlohmann::json summary_json(const summary &s);

/// The value, or null.
nlohmann::json optional_json(const std::optional<double> &x);

} // namespace greenctx::cli
