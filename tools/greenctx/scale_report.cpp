#include "scale_report.hpp"
#include <greenctx/plan/decimal.hpp>
#include "report_text.hpp"

#include <greenctx/plan/error.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <set>
#include <utility>

namespace greenctx::scale {
namespace {

using cli::summary_json;
using cli::xml_escape;

constexpr const char *api = "greenctx scale";

[[noreturn]] void reject(const std::string &message) {
  throw request_error(CUDA_ERROR_INVALID_VALUE, api, message);
}

std::string join(const std::vector<unsigned> &v, const char *separator = ",") {
  std::string out;
  for (unsigned x : v)
    out += (out.empty() ? "" : separator) + std::to_string(x);
  return out;
}

// Larger than any GPU's SM count: entries above it are typing mistakes, not devices.
constexpr unsigned long long max_sms = 1u << 20;

std::string program_text(const std::vector<std::string> &program) {
  std::string out;
  for (const auto &a : program) {
    const bool quote = a.empty() || a.find_first_of(" \t\"'$\\") != std::string::npos;
    out += (out.empty() ? "" : " ") + (quote ? "'" + a + "'" : a);
  }
  return out;
}

// One unit for a whole table, picked from the longest time in it.
struct time_unit {
  const char *name;
  double per_second;
  int decimals;
  std::string operator()(double seconds) const {
    return fmt::format("{:.{}f}", seconds * per_second, decimals);
  }
};

time_unit unit_for(double longest_s) {
  if (longest_s >= 1)
    return {"s", 1, 3};
  if (longest_s >= 1e-3)
    return {"ms", 1e3, 2};
  return {"us", 1e6, 1};
}

time_unit unit_for(const std::vector<point_summary> &s) {
  double longest = 0;
  for (const auto &p : s)
    longest = std::max(longest, p.time.max);
  return unit_for(longest);
}

std::string speedup_text(const std::optional<double> &x) {
  return x ? fmt::format("{:.2f}x", *x) : "-";
}

nlohmann::json optional_json(const std::optional<double> &x) {
  return x ? nlohmann::json(*x) : nlohmann::json(nullptr);
}

nlohmann::json run_json(const run_record &r) {
  return {{"repeat", r.repeat},
          {"wall_s", r.wall_s},
          {"exit_code", r.exit_code},
          {"signal", r.signal},
          {"end", describe_end(r.exit_code, r.signal)},
          {"cuda_used", r.cuda_used},
          {"confined_devices", r.confined_devices},
          {"green_contexts", r.green_contexts},
          {"problems", r.problems}};
}

run_record run_from_json(const nlohmann::json &j, int device) {
  run_record r;
  r.repeat = j.at("repeat");
  r.wall_s = j.at("wall_s");
  r.exit_code = j.at("exit_code");
  r.signal = j.at("signal");
  r.cuda_used = j.at("cuda_used");
  if (const auto old = j.find("confined_threads");
      old != j.end() && !j.contains("green_contexts")) {
    // Written before the confined_devices report: threads with a green context on `device`.
    r.green_contexts = old->get<unsigned>();
    if (r.green_contexts > 0)
      r.confined_devices = {device};
  } else {
    r.confined_devices = j.at("confined_devices").get<std::vector<int>>();
    r.green_contexts = j.at("green_contexts");
  }
  r.problems = j.at("problems").get<std::vector<std::string>>();
  return r;
}

const point *smallest_confined(const results &r) {
  for (const auto &p : r.points)
    if (!p.baseline)
      return &p;
  return nullptr;
}

const point *baseline_point(const results &r) {
  for (const auto &p : r.points)
    if (p.baseline)
      return &p;
  return nullptr;
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

double nice_step(double range, double ticks) {
  if (range <= 0)
    return 1;
  const double raw = range / ticks;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * magnitude >= raw)
      return m * magnitude;
  return 10 * magnitude;
}

} // namespace

std::string describe_counts(const std::vector<unsigned> &valid) {
  if (valid.size() <= 6)
    return join(valid, ", ");
  return fmt::format("{}, {}, {}, ..., {}, {}", valid[0], valid[1], valid[2],
                     valid[valid.size() - 2], valid.back());
}

std::vector<unsigned> parse_sm_list(std::string_view text) {
  constexpr const char *example = "e.g. --sms 8,16,32 (see greenctx info for the valid counts)";
  if (trim_blanks(text).empty())
    reject(fmt::format("--sms is empty: give SM counts separated by commas, {}", example));
  std::vector<unsigned> counts;
  unsigned index = 0;
  for (const std::string_view item : list_entries(text)) {
    const std::string where = fmt::format("--sms entry {}", ++index);
    if (item.empty())
      reject(fmt::format("{} is empty ('{}'): separate SM counts with single commas, {}", where,
                         text, example));
    if (item.find_first_not_of("0123456789") != std::string_view::npos)
      reject(fmt::format("{} ('{}') is not a whole number of SMs in decimal (digits 0-9 only: no "
                         "sign, 0x or exponent): {}",
                         where, item, example));
    const std::optional<unsigned long long> read = read_decimal(item, max_sms);
    if (!read)
      reject(fmt::format("{} ({}) is far more than any GPU's SM count", where, item));
    const unsigned long long value = *read;
    if (value == 0)
      reject(fmt::format("{} asks for 0 SMs: every count needs at least the minimum partition "
                         "(8 SMs on CC 9.0)",
                         where));
    counts.push_back(static_cast<unsigned>(value));
  }
  std::vector<unsigned> fixed = counts;
  std::sort(fixed.begin(), fixed.end());
  fixed.erase(std::unique(fixed.begin(), fixed.end()), fixed.end());
  for (std::size_t i = 0; i < counts.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (counts[i] == counts[j])
        reject(fmt::format("--sms lists {} twice (entries {} and {}): each count runs --repeat "
                           "times already; e.g. --sms {}",
                           counts[i], j + 1, i + 1, join(fixed)));
  for (std::size_t i = 1; i < counts.size(); ++i)
    if (counts[i] < counts[i - 1])
      reject(fmt::format("--sms must be in increasing order: entry {} ({}) comes after entry {} "
                         "({}); e.g. --sms {}",
                         i + 1, counts[i], i, counts[i - 1], join(fixed)));
  return counts;
}

void check_sm_list(const std::vector<unsigned> &counts, const std::vector<unsigned> &valid,
                   unsigned device_sms) {
  if (valid.empty())
    reject(fmt::format("the GPU has {} SMs, fewer than its minimum partition: no SM count can be "
                       "split off it",
                       device_sms));
  const std::string valid_text = "valid counts on this GPU: " + describe_counts(valid);
  for (std::size_t i = 0; i < counts.size(); ++i) {
    const unsigned n = counts[i];
    const std::string where = fmt::format("--sms entry {} ({})", i + 1, n);
    if (n > device_sms)
      reject(fmt::format("{} is more than the GPU's {} SMs; the largest valid count is {} ({})",
                         where, device_sms, valid.back(), valid_text));
    const neighbours near = nearest_valid(n, valid);
    if (near.below == near.above)
      continue; // valid
    std::string nearest;
    if (near.below && near.above)
      nearest = fmt::format("the nearest valid counts are {} and {}", *near.below, *near.above);
    else if (near.above)
      nearest = fmt::format("the smallest valid count is {}", *near.above);
    else
      nearest = fmt::format("the largest valid count is {}", *near.below);
    reject(fmt::format("{}: no split gives exactly {} SMs on this GPU; {} ({})", where, n, nearest,
                       valid_text));
  }
}

std::string describe_end(int exit_code, int signal) {
  if (signal == 0)
    return fmt::format("exit {}", exit_code);
  static const std::pair<int, const char *> names[] = {
      {SIGHUP, "SIGHUP"},   {SIGINT, "SIGINT"},   {SIGQUIT, "SIGQUIT"}, {SIGILL, "SIGILL"},
      {SIGTRAP, "SIGTRAP"}, {SIGABRT, "SIGABRT"}, {SIGBUS, "SIGBUS"},   {SIGFPE, "SIGFPE"},
      {SIGKILL, "SIGKILL"}, {SIGSEGV, "SIGSEGV"}, {SIGPIPE, "SIGPIPE"}, {SIGALRM, "SIGALRM"},
      {SIGTERM, "SIGTERM"}, {SIGXCPU, "SIGXCPU"}, {SIGSYS, "SIGSYS"}};
  for (const auto &[number, name] : names)
    if (number == signal)
      return fmt::format("signal {} ({})", signal, name);
  return fmt::format("signal {}", signal);
}

std::vector<double> point::samples() const {
  std::vector<double> out;
  for (const auto &r : runs)
    if (r.ok())
      out.push_back(r.wall_s);
  return out;
}

std::string point::label() const {
  return baseline ? fmt::format("all {} SMs, unconfined", sms) : fmt::format("{} SMs", sms);
}

std::vector<point_summary> summarize(const results &r) {
  std::vector<point_summary> out;
  for (const auto &p : r.points) {
    point_summary s;
    s.time = cli::summarize(p.samples());
    s.status = "ok";
    if (p.runs.empty())
      s.status = "not run";
    else if (p.runs.size() < r.repeat)
      s.status = fmt::format("ok, {} of {} runs", p.runs.size(), r.repeat);
    for (const auto &run : p.runs) {
      if (!run.ok()) {
        s.status =
            fmt::format("run {}: {}", run.repeat + 1, describe_end(run.exit_code, run.signal));
        break;
      }
      if (!p.baseline && !run.cuda_used) {
        s.status = fmt::format("run {}: no CUDA", run.repeat + 1);
        break;
      }
    }
    out.push_back(s);
  }
  const point *smallest = smallest_confined(r), *base = baseline_point(r);
  const double smallest_median =
      smallest ? out[static_cast<std::size_t>(smallest - r.points.data())].time.p50 : 0;
  const std::size_t base_index = base ? static_cast<std::size_t>(base - r.points.data()) : 0;
  const double base_median = base && out[base_index].time.count ? out[base_index].time.p50 : 0;
  for (auto &s : out) {
    if (s.time.count == 0 || s.time.p50 <= 0)
      continue;
    if (smallest_median > 0)
      s.vs_smallest = smallest_median / s.time.p50;
    if (base_median > 0)
      s.vs_baseline = base_median / s.time.p50;
  }
  return out;
}

namespace {

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

std::string text_table(const results &r, const nlohmann::json &env) {
  const auto sums = summarize(r);
  const time_unit unit = unit_for(sums);
  const point *smallest = smallest_confined(r);
  const std::string vs_small = smallest ? fmt::format("vs {} SMs", smallest->sms) : "vs fewest";
  std::string s = fmt::format("greenctx scale on GPU {}: {}\n{}\n\n", r.device,
                              program_text(r.program), setup_line(r, env));
  const std::string spread_head = fmt::format("min .. max ({})", unit.name);
  s += fmt::format("{:>10}  {:>10}  {:>18}  {:>6}  {:>10}  {:>13}  {}\n", "SMs",
                   fmt::format("median ({})", unit.name), spread_head, "rsd", vs_small,
                   "vs unconfined", "status");
  for (std::size_t i = 0; i < r.points.size(); ++i) {
    const row_cells c = cells(r.points[i], sums[i], unit);
    s += fmt::format("{:>10}  {:>10}  {:>18}  {:>6}  {:>10}  {:>13}  {}\n",
                     r.points[i].baseline ? "unconfined" : c.sms, c.median,
                     c.has_time ? c.min + " .. " + c.max : "-", c.rsd, c.vs_smallest, c.vs_baseline,
                     c.status);
  }
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
  std::string s =
      fmt::format("## greenctx scale: `{}`\n\n{}\n\n", program_text(r.program), setup_line(r, env));
  s += fmt::format("| SMs | median ({0}) | min ({0}) | max ({0}) | rsd | speed-up vs {1} | "
                   "speed-up vs unconfined | status |\n",
                   unit.name, smallest ? fmt::format("{} SMs", smallest->sms) : "fewest SMs");
  s += "|---|---:|---:|---:|---:|---:|---:|---|\n";
  for (std::size_t i = 0; i < r.points.size(); ++i) {
    const row_cells c = cells(r.points[i], sums[i], unit);
    s += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} |\n", c.sms, c.median, c.min, c.max,
                     c.rsd, c.vs_smallest, c.vs_baseline, c.status);
  }
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

nlohmann::json to_json(const results &r, const nlohmann::json &env) {
  const auto sums = summarize(r);
  nlohmann::json j;
  j["environment"] = env;
  j["program"] = r.program;
  std::vector<unsigned> counts;
  for (const auto &p : r.points)
    if (!p.baseline)
      counts.push_back(p.sms);
  j["config"] = {{"device", r.device},
                 {"device_sms", r.device_sms},
                 {"ignore_coscheduling", r.ignore_coscheduling},
                 {"repeat", r.repeat},
                 {"warmup", r.warmup},
                 {"warmup_sms", r.warmup_sms},
                 {"sms", counts}};
  j["warmups"] = nlohmann::json::array();
  for (const auto &w : r.warmups)
    j["warmups"].push_back(run_json(w));
  j["points"] = nlohmann::json::array();
  for (std::size_t i = 0; i < r.points.size(); ++i) {
    const auto &p = r.points[i];
    nlohmann::json pj{{"sms", p.sms},
                      {"unconfined", p.baseline},
                      {"samples_s", p.samples()},
                      {"summary_s", summary_json(sums[i].time)},
                      {"speedup_vs_smallest", optional_json(sums[i].vs_smallest)},
                      {"speedup_vs_unconfined", optional_json(sums[i].vs_baseline)},
                      {"status", sums[i].status}};
    pj["runs"] = nlohmann::json::array();
    for (const auto &run : p.runs)
      pj["runs"].push_back(run_json(run));
    j["points"].push_back(pj);
  }
  j["complete"] = r.complete();
  j["failure"] = r.complete() ? nlohmann::json(nullptr) : nlohmann::json(r.failure);
  return j;
}

results from_json(const nlohmann::json &j) {
  results r;
  r.program = j.at("program").get<std::vector<std::string>>();
  const auto &c = j.at("config");
  r.device = c.at("device");
  r.device_sms = c.at("device_sms");
  r.ignore_coscheduling = c.at("ignore_coscheduling");
  r.repeat = c.at("repeat");
  r.warmup = c.at("warmup");
  r.warmup_sms = c.at("warmup_sms");
  for (const auto &w : j.at("warmups"))
    r.warmups.push_back(run_from_json(w, r.device));
  for (const auto &pj : j.at("points")) {
    point p;
    p.sms = pj.at("sms");
    p.baseline = pj.at("unconfined");
    for (const auto &run : pj.at("runs"))
      p.runs.push_back(run_from_json(run, r.device));
    r.points.push_back(std::move(p));
  }
  if (!j.at("failure").is_null())
    r.failure = j.at("failure");
  return r;
}

std::string to_csv(const results &r) {
  std::string s =
      "sms,unconfined,repeat,wall_s,exit_code,signal,cuda_used,confined_devices,green_contexts\n";
  for (const auto &p : r.points)
    for (const auto &run : p.runs) {
      std::string devices;
      for (int d : run.confined_devices)
        devices += (devices.empty() ? "" : ";") + std::to_string(d);
      s += fmt::format("{},{},{},{:.6f},{},{},{},{},{}\n", p.sms, p.baseline ? 1 : 0, run.repeat,
                       run.wall_s, run.exit_code, run.signal, run.cuda_used ? 1 : 0, devices,
                       run.green_contexts);
    }
  return s;
}

std::string to_svg(const results &r, const nlohmann::json &env) {
  const auto sums = summarize(r);
  const time_unit unit = unit_for(sums);
  const double width = 820, left = 90, right = 190, plot_w = width - left - right;
  const double top1 = 100, h1 = 300, top2 = top1 + h1 + 90, h2 = 240, height = top2 + h2 + 60;
  const double x_max = std::max(1u, r.device_sms);
  const auto x = [&](double sms) { return left + plot_w * sms / x_max; };

  std::string title = program_text(r.program);
  if (title.size() > 90)
    title = title.substr(0, 87) + "...";
  std::string s = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} "
      "{1}\" font-family=\"sans-serif\" font-size=\"13\">\n<rect width=\"100%\" height=\"100%\" "
      "fill=\"white\"/>\n",
      width, height);
  s += fmt::format("<text x=\"20\" y=\"28\" font-size=\"17\" font-weight=\"bold\">greenctx scale: "
                   "{}</text>\n",
                   xml_escape(title));
  s += fmt::format("<text x=\"20\" y=\"50\" fill=\"#555\">{} ({} SMs), driver CUDA {}, {}</text>\n"
                   "<text x=\"20\" y=\"68\" fill=\"#555\">wall time of the whole program, median "
                   "of {} run{} per SM count; whiskers min..max</text>\n",
                   xml_escape(env.value("gpu", "?")), r.device_sms,
                   xml_escape(env.value("driver_version", "?")), xml_escape(env.value("date", "?")),
                   r.repeat, r.repeat == 1 ? "" : "s");

  // The SM axis, under both panels.
  const double x_step = nice_step(x_max, 8);
  const auto sm_axis = [&](double top, double h) {
    std::string a;
    for (double v = 0; v <= x_max + 1e-9; v += x_step)
      a += fmt::format("<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1}\" y2=\"{2}\" stroke=\"#eee\"/>"
                       "\n<text x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\" fill=\"#555\">{4:g}"
                       "</text>\n",
                       x(v), top, top + h, top + h + 16, v);
    if (std::fmod(x_max, x_step) > x_step / 4) // the device's SM count, unless next to a tick
      a += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\" fill=\"#555\">{:g}"
                       "</text>\n",
                       x(x_max), top + h + 16, x_max);
    a += fmt::format("<line x1=\"{0}\" x2=\"{1}\" y1=\"{2}\" y2=\"{2}\" stroke=\"#888\"/>\n"
                     "<text x=\"{3:.1f}\" y=\"{4}\" text-anchor=\"middle\" fill=\"#333\">SMs"
                     "</text>\n",
                     left, left + plot_w, top + h, left + plot_w / 2, top + h + 34);
    return a;
  };

  // Panel 1: median wall time.
  double t_max = 0;
  for (const auto &p : sums)
    t_max = std::max(t_max, p.time.max);
  if (t_max <= 0) {
    s += fmt::format("<text x=\"{}\" y=\"{}\" fill=\"#c0392b\">no run succeeded: nothing to "
                     "plot</text>\n</svg>\n",
                     left, top1 + 20);
    return s;
  }
  const double t_step = nice_step(t_max * unit.per_second, 5);
  const double t_top = std::ceil(t_max * unit.per_second * 1.05 / t_step) * t_step;
  const auto yt = [&](double seconds) {
    return top1 + h1 * (1 - seconds * unit.per_second / t_top);
  };
  s += fmt::format("<text x=\"20\" y=\"{}\" font-size=\"15\" font-weight=\"bold\">Median wall "
                   "time ({})</text>\n",
                   top1 - 12, unit.name);
  for (double v = 0; v <= t_top + 1e-9; v += t_step)
    s += fmt::format("<line x1=\"{0}\" x2=\"{1}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\" stroke=\"#eee\"/>"
                     "\n<text x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\" fill=\"#555\">{5:g}"
                     "</text>\n",
                     left, left + plot_w, yt(v / unit.per_second), left - 8,
                     yt(v / unit.per_second) + 4, v);
  s += sm_axis(top1, h1);
  const point *base = baseline_point(r);
  const std::size_t base_index = base ? static_cast<std::size_t>(base - r.points.data()) : 0;
  if (base && sums[base_index].time.count) {
    const auto &b = sums[base_index].time;
    s += fmt::format("<rect x=\"{}\" y=\"{:.1f}\" width=\"{}\" height=\"{:.1f}\" fill=\"#e67e22\" "
                     "fill-opacity=\"0.12\"/>\n<line x1=\"{}\" x2=\"{}\" y1=\"{:.1f}\" "
                     "y2=\"{:.1f}\" stroke=\"#e67e22\" stroke-dasharray=\"6 4\"/>\n<text x=\"{}\" "
                     "y=\"{:.1f}\" fill=\"#e67e22\">unconfined: {} {}</text>\n",
                     left, yt(b.max), plot_w, std::max(1.0, yt(b.min) - yt(b.max)), left,
                     left + plot_w, yt(b.p50), yt(b.p50), left + plot_w + 8, yt(b.p50) + 4,
                     unit(b.p50), unit.name);
  }
  std::string line;
  for (std::size_t i = 0; i < r.points.size(); ++i) {
    const auto &t = sums[i].time;
    if (r.points[i].baseline || t.count == 0)
      continue;
    const double px = x(r.points[i].sms);
    line += fmt::format("{}{:.1f},{:.1f}", line.empty() ? "" : " ", px, yt(t.p50));
    s += fmt::format("<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1:.1f}\" y2=\"{2:.1f}\" "
                     "stroke=\"#2c3e50\"/>\n<line x1=\"{3:.1f}\" x2=\"{4:.1f}\" y1=\"{1:.1f}\" "
                     "y2=\"{1:.1f}\" stroke=\"#2c3e50\"/>\n<line x1=\"{3:.1f}\" x2=\"{4:.1f}\" "
                     "y1=\"{2:.1f}\" y2=\"{2:.1f}\" stroke=\"#2c3e50\"/>\n",
                     px, yt(t.min), yt(t.max), px - 3, px + 3);
  }
  if (!line.empty())
    s += fmt::format("<polyline points=\"{}\" fill=\"none\" stroke=\"#2980b9\" "
                     "stroke-width=\"2\"/>\n",
                     line);
  for (std::size_t i = 0; i < r.points.size(); ++i)
    if (!r.points[i].baseline && sums[i].time.count)
      s += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3.5\" fill=\"#2980b9\"/>\n",
                       x(r.points[i].sms), yt(sums[i].time.p50));

  // Panel 2: speed-up against the smallest count, with the ideal (linear in SMs).
  const point *smallest = smallest_confined(r);
  double s_max = 1;
  for (const auto &p : sums)
    if (p.vs_smallest)
      s_max = std::max(s_max, *p.vs_smallest);
  const double s_step = nice_step(s_max * 1.15, 5);
  const double s_top = std::ceil(s_max * 1.15 / s_step) * s_step;
  const auto ys = [&](double v) { return top2 + h2 * (1 - v / s_top); };
  s += fmt::format("<text x=\"20\" y=\"{}\" font-size=\"15\" font-weight=\"bold\">Speed-up "
                   "against {} (dashed grey: linear in SMs)</text>\n",
                   top2 - 12,
                   smallest ? fmt::format("{} SMs", smallest->sms) : std::string("the fewest SMs"));
  for (double v = 0; v <= s_top + 1e-9; v += s_step)
    s += fmt::format("<line x1=\"{0}\" x2=\"{1}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\" stroke=\"#eee\"/>"
                     "\n<text x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\" fill=\"#555\">{5:g}"
                     "</text>\n",
                     left, left + plot_w, ys(v), left - 8, ys(v) + 4, v);
  s += sm_axis(top2, h2);
  if (smallest && smallest->sms > 0) {
    const double n0 = smallest->sms;
    const double end = std::min(x_max, n0 * s_top); // the ideal line leaves the panel there
    s += fmt::format("<line x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{:.1f}\" y2=\"{:.1f}\" "
                     "stroke=\"#999\" stroke-dasharray=\"4 3\"/>\n",
                     x(n0), x(end), ys(1), ys(end / n0));
  }
  if (base && sums[base_index].vs_smallest) {
    const double v = *sums[base_index].vs_smallest;
    s += fmt::format("<line x1=\"{}\" x2=\"{}\" y1=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#e67e22\" "
                     "stroke-dasharray=\"6 4\"/>\n<text x=\"{}\" y=\"{:.1f}\" fill=\"#e67e22\">"
                     "unconfined: {:.2f}x</text>\n",
                     left, left + plot_w, ys(v), ys(v), left + plot_w + 8, ys(v) + 4, v);
  }
  line.clear();
  for (std::size_t i = 0; i < r.points.size(); ++i)
    if (!r.points[i].baseline && sums[i].vs_smallest)
      line += fmt::format("{}{:.1f},{:.1f}", line.empty() ? "" : " ", x(r.points[i].sms),
                          ys(*sums[i].vs_smallest));
  if (!line.empty())
    s += fmt::format("<polyline points=\"{}\" fill=\"none\" stroke=\"#27ae60\" "
                     "stroke-width=\"2\"/>\n",
                     line);
  for (std::size_t i = 0; i < r.points.size(); ++i)
    if (!r.points[i].baseline && sums[i].vs_smallest)
      s += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3.5\" fill=\"#27ae60\"/>\n",
                       x(r.points[i].sms), ys(*sums[i].vs_smallest));
  if (!r.complete())
    s += fmt::format("<text x=\"20\" y=\"{}\" fill=\"#c0392b\">FAILED: {}</text>\n", height - 14,
                     xml_escape(r.failure));
  s += "</svg>\n";
  return s;
}

} // namespace greenctx::scale
