// Pieces every report of the CLI writes the same way (bench and scale).
#pragma once

#include "stats.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace greenctx::cli {

/// `s` with &, <, > and " escaped, for SVG text and attributes.
std::string xml_escape(const std::string &s);

/// {"count", "min", "p50", "p90", "p99", "max", "mean", "stdev", "noise"}.
nlohmann::json summary_json(const summary &s);

} // namespace greenctx::cli
