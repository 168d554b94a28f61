// How `greenctx scale` shows its record: the table for the terminal, markdown, CSV and the SVG
// plot, laid out by the CLI's shared table and SVG writers.
#pragma once

#include "scale/records.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace greenctx::cli::scale {

/// The table for the terminal, with notes (problems, the failure).
std::string text_table(const results &r, const nlohmann::json &environment);

/// The same as a markdown report.
std::string markdown(const results &r, const nlohmann::json &environment);

/// sms,unconfined,repeat,wall_s,exit_code,signal,cuda_used,confined_devices,green_contexts: one
/// row per timed run; confined_devices is the ordinals separated by ';' ("0"), empty for none.
std::string to_csv(const results &r);

/// Median wall time against SM count with min..max whiskers and the unconfined baseline, and the
/// speed-up against the smallest count with the ideal (linear) speed-up: a self-contained SVG.
std::string to_svg(const results &r, const nlohmann::json &environment);

/// One unit for a whole table or plot, picked from the longest time in it.
struct time_unit {
  const char *name;
  double per_second;
  int decimals;
  std::string operator()(double seconds) const;
};

/// The unit for the longest time of `s`.
time_unit unit_for(const std::vector<point_summary> &s);

/// The program and its arguments as typed, quoted where a shell would need it.
std::string program_text(const std::vector<std::string> &program);

} // namespace greenctx::cli::scale
