#include "scale/report.hpp"

#include "report/table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
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

// What the figures are, which way is better, and the SM count the program was told.
std::string measure_line(const results &r, const figure_unit &unit) {
  return fmt::format("figure: {}, {}, {} is better; {}", r.measure.description(), unit.name,
                     r.measure.direction == better::lower ? "lower" : "higher", sm_count_note(r));
}

std::string speedup_rule(const results &r) {
  return r.measure.direction == better::lower
             ? "speed-up: median there / median here"
             : "speed-up: median here / median there (higher is better)";
}

// The units of a report: the figure's, and the wall time's (for the wall column, shown when the
// figure is another).
struct report_units {
  figure_unit figure, wall;
  bool wall_column;
};

report_units units_for(const results &r, const std::vector<point_summary> &sums) {
  double longest_wall = 0;
  for (const auto &s : sums)
    longest_wall = std::max(longest_wall, s.wall.max);
  return {unit_for(r.measure, largest_figure(sums)), unit_for(metric{}, longest_wall),
          r.measure.kind != metric_kind::wall};
}

// One row of the text and markdown tables, as text ("-" where there is no figure).
struct row_cells {
  bool has_figure = false;
  std::string sms, median, min, max, rsd, wall, vs_smallest, vs_baseline, status;
};

row_cells cells(const point &p, const point_summary &sum, const report_units &units) {
  const auto &t = sum.figure;
  row_cells c;
  c.has_figure = t.count > 0;
  c.sms = p.baseline ? p.label() : std::to_string(p.sms);
  c.median = c.has_figure ? units.figure(t.p50) : "-";
  c.min = c.has_figure ? units.figure(t.min) : "-";
  c.max = c.has_figure ? units.figure(t.max) : "-";
  c.rsd = c.has_figure ? fmt::format("{:.1f}%", 100 * t.noise) : "-";
  c.wall = sum.wall.count ? units.wall(sum.wall.p50) : "-";
  c.vs_smallest = speedup_text(sum.vs_smallest);
  c.vs_baseline = speedup_text(sum.vs_baseline);
  c.status = sum.status;
  return c;
}

// `items` with `wall` inserted before index `at` when the report has a wall column.
template <class T>
std::vector<T> with_wall(const report_units &units, std::vector<T> items, std::size_t at, T wall) {
  if (units.wall_column)
    items.insert(items.begin() + static_cast<std::ptrdiff_t>(at), std::move(wall));
  return items;
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

std::string elide(std::string_view text, std::size_t max_chars) {
  constexpr std::string_view ellipsis = "\u2026";
  const auto starts_char = [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; };
  std::size_t chars = 0, keep = 0; // keep: bytes of the first max_chars - 1 characters
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (!starts_char(text[i]))
      continue;
    if (chars + 1 == max_chars)
      keep = i;
    if (++chars > max_chars)
      return max_chars == 0 ? std::string() : std::string(text.substr(0, keep)).append(ellipsis);
  }
  return std::string(text);
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
  const report_units units = units_for(r, sums);
  const point *smallest = smallest_confined(r);
  const std::string &u = units.figure.name;
  const std::vector<column> columns = with_wall<column>(
      units,
      {{"SMs", align::right, 10},
       {fmt::format("median ({})", u), align::right, 10},
       {fmt::format("min .. max ({})", u), align::right, 18},
       {"rsd", align::right, 6},
       {smallest ? fmt::format("vs {} SMs", smallest->sms) : "vs fewest", align::right, 10},
       {"vs unconfined", align::right, 13},
       {"status", align::left, 0}},
      4, {fmt::format("wall ({})", units.wall.name), align::right, 10});
  std::vector<row> rows;
  for (std::size_t i = 0; i < r.points.size(); ++i) {
    const row_cells c = cells(r.points[i], sums[i], units);
    rows.push_back(with_wall<std::string>(units,
                                          {r.points[i].baseline ? "unconfined" : c.sms, c.median,
                                           c.has_figure ? c.min + " .. " + c.max : "-", c.rsd,
                                           c.vs_smallest, c.vs_baseline, c.status},
                                          4, c.wall));
  }
  std::string s =
      fmt::format("greenctx scale on GPU {}: {}\n{}\n{}\n\n", r.device, program_text(r.program),
                  setup_line(r, env), measure_line(r, units.figure));
  s += cli::text_table(columns, rows);
  s += fmt::format("\nunconfined: all {} SMs, no green context. rsd: relative standard "
                   "deviation; {}\n",
                   r.device_sms, speedup_rule(r));
  if (units.wall_column)
    s += "wall: median wall time of the whole program, start-up included\n";
  if (const std::string w = startup_warning(r, sums); !w.empty())
    s += "warning: " + w + "\n";
  for (const auto &n : problem_notes(r))
    s += "note: " + n + "\n";
  if (!r.complete())
    s += "FAILED: " + r.failure + "\n";
  return s;
}

std::string markdown(const results &r, const nlohmann::json &env) {
  const auto sums = summarize(r);
  const report_units units = units_for(r, sums);
  const point *smallest = smallest_confined(r);
  const std::string &u = units.figure.name;
  const std::vector<column> columns = with_wall<column>(
      units,
      {{"SMs", align::left},
       {"median (" + u + ")"},
       {"min (" + u + ")"},
       {"max (" + u + ")"},
       {"rsd"},
       {"speed-up vs " + (smallest ? fmt::format("{} SMs", smallest->sms) : "fewest SMs")},
       {"speed-up vs unconfined"},
       {"status", align::left}},
      5, {"wall (" + units.wall.name + ")"});
  std::vector<row> rows;
  for (std::size_t i = 0; i < r.points.size(); ++i) {
    const row_cells c = cells(r.points[i], sums[i], units);
    rows.push_back(with_wall<std::string>(
        units, {c.sms, c.median, c.min, c.max, c.rsd, c.vs_smallest, c.vs_baseline, c.status}, 5,
        c.wall));
  }
  std::string s = fmt::format("## greenctx scale: `{}`\n\n{}\n\n{}\n\n", program_text(r.program),
                              setup_line(r, env), measure_line(r, units.figure));
  s += markdown_table(columns, rows);
  s += fmt::format(
      "\nrsd: relative standard deviation; {}.{}\n", speedup_rule(r),
      units.wall_column ? " wall: median wall time of the whole program, start-up included." : "");
  if (const std::string w = startup_warning(r, sums); !w.empty())
    s += "\n**Warning:** " + w + "\n";
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
  std::string s =
      csv_line({"sms", "unconfined", "repeat", "wall_s", "exit_code", "signal", "cuda_used",
                "confined_devices", "green_contexts", "figure", "figure_unit", "metric"});
  const std::string metric = r.measure.description();
  for (const auto &p : r.points)
    for (const auto &run : p.runs) {
      std::string devices;
      for (int d : run.confined_devices)
        devices += (devices.empty() ? "" : ";") + std::to_string(d);
      s += csv_line({std::to_string(p.sms), p.baseline ? "1" : "0", std::to_string(run.repeat),
                     fmt::format("{:.6f}", run.wall_s), std::to_string(run.exit_code),
                     std::to_string(run.signal), run.cuda_used ? "1" : "0", devices,
                     std::to_string(run.green_contexts),
                     run.figure ? fmt::format("{}", *run.figure) : "", r.measure.unit, metric});
    }
  return s;
}

} // namespace greenctx::cli::scale
