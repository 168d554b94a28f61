// SPDX-License-Identifier: Apache-2.0
#include "commands/scale/scale_record.hpp"

#include "common/process.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

namespace greenctx::cli::scale {
namespace {

using report::cell;
using report::number_format;
using report::quantity;
using report::yes_no;

const number_format count{"", 0}, ratio{"", 2}, percent{"%", 1};

cell maybe(const std::optional<double> &x) {
  return x ? cell{*x} : cell{};
}

// What the preload library could not confine, once per point and problem.
std::vector<std::string> problem_notes(const results &r) {
  std::vector<std::string> notes;
  for (const auto &p : r.points) {
    std::set<std::string> seen;
    for (const auto &run : p.runs)
      for (const auto &problem : run.problems)
        if (seen.insert(problem).second)
          notes.push_back(fmt::format("note: at {}: not confined: {}", p.label(), problem));
  }
  return notes;
}

std::string speedup_rule(const results &r) {
  return r.measure.direction == better::lower
             ? "speed-up: median there / median here"
             : "speed-up: median here / median there (higher is better)";
}

// The SM count of a point as its tables show it: the count, or "unconfined" (not drawn).
cell point_cell(const point &p) {
  return p.baseline ? cell{std::string("unconfined")} : cell{static_cast<double>(p.sms)};
}

// Every run of `runs`, one row each, the figure in the metric's own unit.
report::series run_table(const char *key, const char *title, const results &r,
                         const std::vector<std::pair<cell, const run_record *>> &runs) {
  report::series s{key,
                   title,
                   {{"sms", "SMs", count},
                    {"repeat", "run", count},
                    {"wall_s", "wall", {"s", 3}},
                    {"figure", "figure", {r.measure.unit, 6}},
                    {"end", "end", {}, align::left},
                    {"exit_code", "exit", count},
                    {"signal", "signal", count},
                    {"cuda_used", "CUDA", {}, align::left},
                    {"confined_devices", "confined GPUs", {}, align::left},
                    {"green_contexts", "green contexts", count},
                    {"no_figure", "why no figure", {}, align::left},
                    {"problems", "not confined", {}, align::left}},
                   {}};
  s.detail = true;
  for (const auto &[at, run] : runs) {
    std::string devices, problems;
    for (int d : run->confined_devices)
      devices += (devices.empty() ? "" : ";") + std::to_string(d);
    for (const auto &p : run->problems)
      problems += (problems.empty() ? "" : "; ") + p;
    s.rows.push_back({at, static_cast<double>(run->repeat + 1), run->wall_s, maybe(run->figure),
                      process::describe({run->exit_code, run->signal}),
                      static_cast<double>(run->exit_code), static_cast<double>(run->signal),
                      yes_no(run->cuda_used), devices, static_cast<double>(run->green_contexts),
                      run->no_figure, problems});
  }
  return s;
}

} // namespace

std::string figure_unit::operator()(double figure) const {
  return fmt::format("{:.{}f}", figure * per_figure, decimals);
}

figure_unit unit_for(const metric &m, double largest) {
  if (m.is_time() && largest > 0) {
    const double seconds = m.seconds_per_unit(), longest = largest * seconds;
    if (longest >= 1)
      return {"s", seconds, 3};
    if (longest >= 1e-3)
      return {"ms", seconds * 1e3, 2};
    return {"us", seconds * 1e6, 1};
  }
  const int digits = largest > 0 ? static_cast<int>(std::floor(std::log10(largest))) : 0;
  return {m.unit, 1, std::clamp(3 - digits, 0, 9)};
}

double largest_figure(const std::vector<point_summary> &s) {
  double largest = 0;
  for (const auto &p : s)
    if (p.figure.count)
      largest = std::max(largest, p.figure.max);
  return largest;
}

std::string program_text(const std::vector<std::string> &program) {
  std::string out;
  for (const auto &a : program) {
    const bool quote = a.empty() || a.find_first_of(" \t\"'$\\") != std::string::npos;
    out += (out.empty() ? "" : " ") + (quote ? "'" + a + "'" : a);
  }
  return out;
}

report::record scale_record(const results &r, const nlohmann::json &environment) {
  const auto sums = summarize(r);
  const figure_unit unit = unit_for(r.measure, largest_figure(sums));
  double longest_wall = 0;
  for (const auto &s : sums)
    longest_wall = std::max(longest_wall, s.wall.max);
  const figure_unit wall_unit = unit_for(metric{}, longest_wall);
  const bool wall_column = r.measure.kind != metric_kind::wall;
  const point *smallest = smallest_confined(r);
  const point_summary *baseline = nullptr;
  for (std::size_t i = 0; i < r.points.size(); ++i)
    if (r.points[i].baseline)
      baseline = &sums[i];

  report::record rec;
  rec.kind = "scale";
  rec.title = fmt::format("greenctx scale on GPU {}: {}", r.device, program_text(r.program));
  rec.environment = report::environment_of(environment);
  std::string counts;
  for (const auto &p : r.points)
    if (!p.baseline)
      counts += (counts.empty() ? "" : ",") + std::to_string(p.sms);
  rec.config = {
      {"program", "program", program_text(r.program), {}, true},
      {"device", "GPU", static_cast<double>(r.device), count, true},
      {"device_sms", "its SMs", static_cast<double>(r.device_sms), count, true},
      {"metric", "figure", r.measure.description(), {}},
      {"metric_spec", "--metric", r.measure.spec(), {}, true},
      {"metric_unit", "figure unit", r.measure.unit, {}, true},
      {"better",
       "better",
       std::string(r.measure.direction == better::lower ? "lower" : "higher"),
       {}},
      {"sms", "SM counts", counts, {}},
      {"repeat", "timed runs per SM count", static_cast<double>(r.repeat), count},
      {"warmup", "warm-up runs", static_cast<double>(r.warmup), count},
      {"warmup_sms", "warm-up on", static_cast<double>(r.warmup_sms), {"SMs", 0}, r.warmup == 0},
      {"ignore_coscheduling",
       "split with IgnoreSmCoscheduling",
       yes_no(r.ignore_coscheduling),
       {},
       !r.ignore_coscheduling},
      {"sm_count_told",
       "SM count the program was told",
       std::string(r.real_sm_count ? "device" : "partition"),
       {},
       true}};
  rec.values = {{"complete", "every run ended well", yes_no(r.complete()), {}, true},
                {"failure", "failure", r.complete() ? cell{} : cell{r.failure}, {}, true},
                {"figure_unit", "unit of the table's figures", unit.name, {}, true}};

  const number_format shown{unit.name, unit.decimals};
  const auto in_unit = [&](double v) { return v * unit.per_figure; };
  report::series points{"points",
                        "",
                        {{"sms", "SMs", count},
                         {"median", "median", shown},
                         {"min", "min", shown},
                         {"max", "max", shown},
                         {"rsd", "rsd", percent}},
                        {}};
  if (wall_column)
    points.fields.push_back({"wall", "wall", {wall_unit.name, wall_unit.decimals}});
  const std::string vs = smallest ? fmt::format("vs {} SMs", smallest->sms) : "vs fewest";
  points.fields.insert(points.fields.end(), {{"vs_smallest", vs, ratio},
                                             {"ideal", "ideal", ratio},
                                             {"vs_unconfined", "vs unconfined", ratio},
                                             {"runs", "runs", count},
                                             {"status", "status", {}, align::left}});
  for (std::size_t i = 0; i < r.points.size(); ++i) {
    const point &p = r.points[i];
    const summary &t = sums[i].figure;
    const bool has = t.count > 0;
    std::vector<cell> row = {
        point_cell(p), has ? cell{in_unit(t.p50)} : cell{}, has ? cell{in_unit(t.min)} : cell{},
        has ? cell{in_unit(t.max)} : cell{}, has ? cell{100 * t.noise} : cell{}};
    if (wall_column)
      row.push_back(sums[i].wall.count ? cell{sums[i].wall.p50 * wall_unit.per_figure} : cell{});
    const cell ideal = smallest && !p.baseline
                           ? cell{static_cast<double>(p.sms) / static_cast<double>(smallest->sms)}
                           : cell{};
    row.insert(row.end(), {maybe(sums[i].vs_smallest), ideal, maybe(sums[i].vs_baseline),
                           static_cast<double>(t.count), sums[i].status});
    points.rows.push_back(std::move(row));
  }
  rec.tables.push_back(std::move(points));
  std::vector<std::pair<cell, const run_record *>> runs, warmups;
  for (const auto &p : r.points)
    for (const auto &run : p.runs)
      runs.emplace_back(point_cell(p), &run);
  for (const auto &w : r.warmups)
    warmups.emplace_back(cell{static_cast<double>(r.warmup_sms)}, &w);
  rec.tables.push_back(run_table("runs", "every timed run", r, runs));
  rec.tables.push_back(run_table("warmups", "the warm-up runs", r, warmups));

  rec.notes.push_back(fmt::format("unconfined: all {} SMs, no green context. rsd: relative "
                                  "standard deviation; {}; ideal: SMs / the fewest SMs",
                                  r.device_sms, speedup_rule(r)));
  if (wall_column)
    rec.notes.push_back("wall: median wall time of the whole program, start-up included");
  rec.notes.push_back(
      fmt::format("figure: {}, {}, {} is better; {}", r.measure.description(), unit.name,
                  r.measure.direction == better::lower ? "lower" : "higher", sm_count_note(r)));
  if (const std::string w = startup_warning(r, sums); !w.empty())
    rec.notes.push_back("warning: " + w);
  for (auto &n : problem_notes(r))
    rec.notes.push_back(std::move(n));
  if (!r.complete())
    rec.notes.push_back("FAILED: " + r.failure);

  const bool with_baseline = baseline && baseline->figure.count > 0;
  std::vector<quantity> figure_rules, speedup_rules;
  if (with_baseline) {
    const double median = in_unit(baseline->figure.p50);
    figure_rules.push_back(
        {"unconfined_median", "unconfined " + report::show(median, shown), median, shown});
    if (const auto &x = baseline->vs_smallest)
      speedup_rules.push_back(
          {"unconfined_speedup", fmt::format("unconfined {:.2f}x", *x), *x, ratio});
  }
  rec.figures.push_back(
      {fmt::format("Median {} ({}), min and max, by SMs", r.measure.description(), unit.name),
       "points",
       "sms",
       {"median", "min", "max"},
       unit.name,
       figure_rules});
  rec.figures.push_back(
      {fmt::format("Speed-up against {}",
                   smallest ? fmt::format("{} SMs", smallest->sms) : std::string("the fewest SMs")),
       "points",
       "sms",
       {"vs_smallest", "ideal"},
       "x",
       speedup_rules});
  return rec;
}

} // namespace greenctx::cli::scale
