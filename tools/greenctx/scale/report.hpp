// How `greenctx scale` shows its record: the table for the terminal, markdown, CSV and the SVG
// plot, laid out by the CLI's shared table and SVG writers.
#pragma once

#include "scale/records.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace greenctx::cli::scale {

/// The table for the terminal, with notes (problems, the failure).
std::string text_table(const results &r, const nlohmann::json &environment);

/// The same as a markdown report.
std::string markdown(const results &r, const nlohmann::json &environment);

/// sms,unconfined,repeat,wall_s,exit_code,signal,cuda_used,confined_devices,green_contexts,
/// figure,figure_unit,metric: one row per timed run; confined_devices is the ordinals separated
/// by ';' ("0"), empty for none; figure is empty for a run without one; metric is the figure's
/// description (the same in every row).
std::string to_csv(const results &r);

/// The median figure against SM count with min..max whiskers and the unconfined baseline, and
/// the speed-up against the smallest count with the ideal (linear) speed-up: a self-contained
/// SVG. Its title and lines are cut with an ellipsis to fit its width.
std::string to_svg(const results &r, const nlohmann::json &environment);

/// One unit for a whole table or plot.
struct figure_unit {
  std::string name;  ///< "s", "ms", "us" for a time, else the metric's own unit ("tokens/s")
  double per_figure; ///< shown = figure * per_figure
  int decimals;
  std::string operator()(double figure) const;
};

/// The unit for figures of `m` up to `largest` (in m's unit): for a time, s, ms or us picked from
/// the longest time; else (and when there is no figure) m's unit, with 4 significant digits for
/// the largest.
figure_unit unit_for(const metric &m, double largest);

/// The largest figure of `s` (its max over the points).
double largest_figure(const std::vector<point_summary> &s);

/// `text` cut to at most `max_chars` characters (UTF-8 code points), ending in an ellipsis
/// ("\u2026") when it was cut.
std::string elide(std::string_view text, std::size_t max_chars);

/// The program and its arguments as typed, quoted where a shell would need it.
std::string program_text(const std::vector<std::string> &program);

} // namespace greenctx::cli::scale
