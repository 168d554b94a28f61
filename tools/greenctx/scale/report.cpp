#include "scale/report.hpp"

#include "report/table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace greenctx::cli::scale {
namespace {

std::string speedup_text(const std::optional<double> &x) {
  return x ? fmt::format("{:.2f}x", *x) : "-";
}

// What the preload library could not confine, once per point and problem.
std::vector<std::string> problem_notes(const results &r) {
  std::vector<std::string> notes;
  for (const auto &p : r.points) {
    std::set<std::string> seen;
    for (const auto &run : p.runs)
      for (const auto &problem : run.problems)
        if (seen.insert(problem).second)
          notes.push_back(fmt::format("at {}: not confined: {}", p.label(), problem));
  }
  return notes;
}

std::string setup_line(const results &r, const nlohmann::json &env) {
  std::string warm = r.warmup ? fmt::format(" after {} warm-up run{} on {} SMs", r.warmup,
                                            r.warmup == 1 ? "" : "s", r.warmup_sms)
                              : "";
  return fmt::format("{} ({} SMs), driver CUDA {}, {}; {} timed run{} per SM count{}, taken in "
                     "rounds over all counts{}",
                     env.value("gpu", "?"), r.device_sms, env.value("driver_version", "?"),
                     env.value("date", "?"), r.repeat, r.repeat == 1 ? "" : "s", warm,
                     r.ignore_coscheduling ? "; split with IgnoreSmCoscheduling" : "");
}

// One row of the text and markdown tables, as text ("-" where there is no time).
struct row_cells {
  bool has_time = false;
  std::string sms, median, min, max, rsd, vs_smallest, vs_baseline, status;
};

row_cells cells(const point &p, const point_summary &sum, const time_unit &unit) {
  const auto &t = sum.time;
  row_cells c;
  c.has_time = t.count > 0;
  c.sms = p.baseline ? p.label() : std::to_string(p.sms);
  c.median = c.has_time ? unit(t.p50) : "-";
  c.min = c.has_time ? unit(t.min) : "-";
  c.max = c.has_time ? unit(t.max) : "-";
  c.rsd = c.has_time ? fmt::format("{:.1f}%", 100 * t.noise) : "-";
  c.vs_smallest = speedup_text(sum.vs_smallest);
  c.vs_baseline = speedup_text(sum.vs_baseline);
  c.status = sum.status;
  return c;
}

} // namespace

std::string time_unit::operator()(double seconds) const {
  return fmt::format("{:.{}f}", seconds * per_second, decimals);
}

time_unit unit_for(const std::vector<point_summary> &s) {
  double longest = 0;
  for (const auto &p : s)
    longest = std::max(longest, p.time.max);
  if (longest >= 1)
    return {"s", 1, 3};
  if (longest >= 1e-3)
    return {"ms", 1e3, 2};
  return {"us", 1e6, 1};
}

std::string program_text(const std::vector<std::string> &program) {
  std::string out;
  for (const auto &a : program) {
    const bool quote = a.empty() || a.find_first_of(" \t\"'$\\") != std::string::npos;
    out += (out.empty() ? "" : " ") + (quote ? "'" + a + "'" : a);
  }
  return out;
}

std::string text_table(const results &r, const nlohmann::json &env) {
  const auto sums = summarize(r);
  const time_unit unit = unit_for(sums);
  const point *smallest = smallest_confined(r);
  const std::vector<column> columns = {
      {"SMs", align::right, 10},
      {fmt::format("median ({})", unit.name), align::right, 10},
      {fmt::format("min .. max ({})", unit.name), align::right, 18},
      {"rsd", align::right, 6},
      {smallest ? fmt::format("vs {} SMs", smallest->sms) : "vs fewest", align::right, 10},
      {"vs unconfined", align::right, 13},
      {"status", align::left, 0}};
  std::vector<row> rows;
  for (std::size_t i = 0; i < r.points.size(); ++i) {
    const row_cells c = cells(r.points[i], sums[i], unit);
    rows.push_back({r.points[i].baseline ? "unconfined" : c.sms, c.median,
                    c.has_time ? c.min + " .. " + c.max : "-", c.rsd, c.vs_smallest, c.vs_baseline,
                    c.status});
  }
  std::string s = fmt::format("greenctx scale on GPU {}: {}\n{}\n\n", r.device,
                              program_text(r.program), setup_line(r, env));
  s += cli::text_table(columns, rows);
  s += fmt::format("\nunconfined: all {} SMs, no green context. Wall time from start to exit of "
                   "the whole program;\nrsd: relative standard deviation; speed-up: median there "
                   "/ median here\n",
                   r.device_sms);
  for (const auto &n : problem_notes(r))
    s += "note: " + n + "\n";
  if (!r.complete())
    s += "FAILED: " + r.failure + "\n";
  return s;
}

std::string markdown(const results &r, const nlohmann::json &env) {
  const auto sums = summarize(r);
  const time_unit unit = unit_for(sums);
  const point *smallest = smallest_confined(r);
  const std::string u = unit.name;
  const std::vector<column> columns = {
      {"SMs", align::left},
      {"median (" + u + ")"},
      {"min (" + u + ")"},
      {"max (" + u + ")"},
      {"rsd"},
      {"speed-up vs " + (smallest ? fmt::format("{} SMs", smallest->sms) : "fewest SMs")},
      {"speed-up vs unconfined"},
      {"status", align::left}};
  std::vector<row> rows;
  for (std::size_t i = 0; i < r.points.size(); ++i) {
    const row_cells c = cells(r.points[i], sums[i], unit);
    rows.push_back({c.sms, c.median, c.min, c.max, c.rsd, c.vs_smallest, c.vs_baseline, c.status});
  }
  std::string s =
      fmt::format("## greenctx scale: `{}`\n\n{}\n\n", program_text(r.program), setup_line(r, env));
  s += markdown_table(columns, rows);
  s += "\nWall time from start to exit of the whole program (start-up included); rsd: relative "
       "standard deviation; speed-up: median there / median here.\n";
  const auto notes = problem_notes(r);
  if (!notes.empty()) {
    s += "\n";
    for (const auto &n : notes)
      s += "- " + n + "\n";
  }
  if (!r.complete())
    s += "\n**FAILED:** " + r.failure + "\n";
  return s;
}

std::string to_csv(const results &r) {
  std::string s = csv_line({"sms", "unconfined", "repeat", "wall_s", "exit_code", "signal",
                            "cuda_used", "confined_devices", "green_contexts"});
  for (const auto &p : r.points)
    for (const auto &run : p.runs) {
      std::string devices;
      for (int d : run.confined_devices)
        devices += (devices.empty() ? "" : ";") + std::to_string(d);
      s += csv_line({std::to_string(p.sms), p.baseline ? "1" : "0", std::to_string(run.repeat),
                     fmt::format("{:.6f}", run.wall_s), std::to_string(run.exit_code),
                     std::to_string(run.signal), run.cuda_used ? "1" : "0", devices,
                     std::to_string(run.green_contexts)});
    }
  return s;
}

} // namespace greenctx::cli::scale
