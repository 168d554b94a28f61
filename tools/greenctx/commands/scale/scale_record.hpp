// SPDX-License-Identifier: Apache-2.0
// How `greenctx scale` shows its results: as a record of the report model, which every format
// renders (report/record.hpp).
#pragma once

#include "report/record.hpp"
#include "commands/scale/records.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace greenctx::cli::scale {

/// The record of a run (report::record, kind "scale"): the configuration; a table "points" of
/// each SM count and the unconfined baseline (median, min, max in the unit unit_for picks, rsd,
/// the wall time when the figure is another, the speed-ups, the ideal linear speed-up, the runs
/// with a figure, the status); the detail tables "runs" and "warmups" (every run, its figure in
/// the metric's own unit, how it ended, what the preload library reported); notes and two figures
/// (the median with min and max, and the speed-up against the ideal). `environment` is the JSON
/// of environment_json.
report::record scale_record(const results &r, const nlohmann::json &environment);

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

/// The program and its arguments as typed, quoted where a shell would need it.
std::string program_text(const std::vector<std::string> &program);

} // namespace greenctx::cli::scale
