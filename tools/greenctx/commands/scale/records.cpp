// SPDX-License-Identifier: Apache-2.0
#include "commands/scale/records.hpp"

#include "common/process.hpp"

#include <fmt/format.h>

#include <utility>

namespace greenctx::cli::scale {

std::vector<double> point::samples() const {
  std::vector<double> out;
  for (const auto &r : runs)
    if (r.ok() && r.figure)
      out.push_back(*r.figure);
  return out;
}

std::vector<double> point::wall_samples() const {
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
    s.figure = cli::summarize(p.samples());
    s.wall = cli::summarize(p.wall_samples());
    s.status = "ok";
    if (p.runs.empty())
      s.status = "not run";
    else if (p.runs.size() < r.repeat)
      s.status = fmt::format("ok, {} of {} runs", p.runs.size(), r.repeat);
    for (const auto &run : p.runs) {
      if (!run.ok()) {
        s.status = fmt::format("run {}: {}", run.repeat + 1,
                               process::describe({run.exit_code, run.signal}));
        break;
      }
      if (!p.baseline && !run.cuda_used) {
        s.status = fmt::format("run {}: no CUDA", run.repeat + 1);
        break;
      }
      if (!run.figure) {
        s.status = fmt::format("run {}: no figure", run.repeat + 1);
        break;
      }
    }
    out.push_back(s);
  }
  const point *smallest = smallest_confined(r), *base = baseline_point(r);
  const auto median_of = [&](const point *p) {
    const summary &f = out[static_cast<std::size_t>(p - r.points.data())].figure;
    return f.count ? f.p50 : 0.0;
  };
  const double smallest_median = smallest ? median_of(smallest) : 0;
  const double base_median = base ? median_of(base) : 0;
  const better direction = r.measure.direction;
  for (auto &s : out) {
    if (s.figure.count == 0 || s.figure.p50 <= 0) // ratios of figures of both signs mean nothing
      continue;
    if (smallest_median > 0)
      s.vs_smallest = speedup(direction, smallest_median, s.figure.p50);
    if (base_median > 0)
      s.vs_baseline = speedup(direction, base_median, s.figure.p50);
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

std::string startup_warning(const results &r, const std::vector<point_summary> &s) {
  // The rule of the declaration: at most 1.3x slower on a quarter of the SMs or fewer.
  constexpr double flat_ratio = 1.3;
  constexpr unsigned sm_ratio = 4;
  const point *smallest = smallest_confined(r), *base = baseline_point(r);
  if (r.measure.kind != metric_kind::wall || !smallest || !base || smallest->sms == 0 ||
      base->sms < sm_ratio * smallest->sms)
    return {};
  const summary &few = s[static_cast<std::size_t>(smallest - r.points.data())].wall;
  const summary &all = s[static_cast<std::size_t>(base - r.points.data())].wall;
  if (few.count == 0 || all.count == 0 || all.p50 <= 0 || few.p50 > flat_ratio * all.p50)
    return {};
  return fmt::format("the wall time hardly depends on the SMs ({} SMs: {:.2f}x the unconfined "
                     "time with {:.1f}x fewer SMs), so start-up (imports, loading, context "
                     "creation) may be what it shows: measure the GPU work with --metric "
                     "gpu-time, or a time the program prints with --metric 'regex:...'",
                     smallest->sms, few.p50 / all.p50,
                     static_cast<double>(base->sms) / smallest->sms);
}

std::string sm_count_note(const results &r) {
  if (r.real_sm_count)
    return fmt::format("the program was told the device's {} SMs (--real-sm-count)", r.device_sms);
  const point *smallest = smallest_confined(r);
  unsigned largest = 0;
  for (const auto &p : r.points)
    if (!p.baseline)
      largest = p.sms;
  const std::string counts = !smallest ? std::string("its partition's SM count")
                             : smallest->sms == largest
                                 ? fmt::format("{} SMs", largest)
                                 : fmt::format("{} to {} SMs", smallest->sms, largest);
  return fmt::format("the program was told {} (the partition's; unconfined, the device's {})",
                     counts, r.device_sms);
}

} // namespace greenctx::cli::scale
