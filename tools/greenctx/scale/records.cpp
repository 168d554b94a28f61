#include "scale/records.hpp"

#include <fmt/format.h>

#include <csignal>
#include <utility>

namespace greenctx::cli::scale {

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

} // namespace greenctx::cli::scale
