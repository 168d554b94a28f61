// SPDX-License-Identifier: Apache-2.0
#include "greenctx/plan/process_check.hpp"

#include <algorithm>
#include <cstdio>

namespace greenctx {
namespace {

double median(std::vector<double> v) {
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string ms(double ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f ms", ns / 1e6);
  return buf;
}

std::string times(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "x%.2f", x);
  return buf;
}

} // namespace

process_check_report check_processes(const std::vector<piece_measurement> &pieces,
                                     const process_check_settings &s) {
  process_check_report r;
  const std::string why_not =
      s.mps_active ? "" : " (MPS is not active: the processes take turns on the GPU)";
  std::size_t rounds = pieces.empty() ? 0 : pieces.front().together.size();
  for (const auto &p : pieces)
    rounds = std::min(rounds, p.together.size());

  for (std::size_t i = 0; i < pieces.size(); ++i) {
    const piece_measurement &p = pieces[i];
    const std::string name =
        "piece " + std::to_string(i) + " (" + p.label + ", " + std::to_string(p.planned) + " SMs)";
    if (p.told != p.planned)
      r.violations.push_back(name + ": its process was told " + std::to_string(p.told) + " SMs");
    if (p.used > p.planned)
      r.violations.push_back(name + ": its probe ran on " + std::to_string(p.used) + " SMs");
    else if (p.used < p.planned)
      r.notes.push_back(name + ": its probe reached " + std::to_string(p.used) +
                        " of them (not a violation: the hardware scheduler chose)");
    const double ratio = s.expected_ns > 0 ? p.alone.length_ns() / s.expected_ns : 0;
    r.alone_ratio.push_back(ratio);
    if (ratio < s.fastest)
      r.violations.push_back(name + ": alone its fill took " + ms(p.alone.length_ns()) + ", " +
                             times(ratio) + " of the " + ms(s.expected_ns) +
                             " its SMs need: its blocks had more SMs than its piece");
    else if (ratio > s.slowest)
      r.violations.push_back(name + ": alone its fill took " + ms(p.alone.length_ns()) + ", " +
                             times(ratio) + " of the " + ms(s.expected_ns) +
                             " its SMs need: other work held its SMs");
    std::vector<double> slow;
    for (std::size_t k = 0; k < rounds; ++k)
      if (p.work_alone.length_ns() > 0)
        slow.push_back(p.together[k].length_ns() / p.work_alone.length_ns());
    r.slowdown.push_back(median(slow));
    if (!slow.empty() && r.slowdown.back() > s.slowdown)
      r.violations.push_back(name + ": beside the other pieces its work took " +
                             times(r.slowdown.back()) + " as long as alone" + why_not);
  }

  if (pieces.size() < 2 || rounds == 0) {
    if (pieces.size() < 2)
      r.notes.push_back("one piece: nothing runs beside it");
    return r;
  }
  std::vector<double> overlaps;
  for (std::size_t k = 0; k < rounds; ++k) {
    double latest_start = pieces.front().together[k].start_ns;
    double earliest_end = pieces.front().together[k].end_ns;
    double shortest = pieces.front().together[k].length_ns();
    for (const auto &p : pieces) {
      latest_start = std::max(latest_start, p.together[k].start_ns);
      earliest_end = std::min(earliest_end, p.together[k].end_ns);
      shortest = std::min(shortest, p.together[k].length_ns());
    }
    overlaps.push_back(shortest > 0 ? (earliest_end - latest_start) / shortest : 0);
  }
  r.overlap = median(overlaps);
  if (r.overlap < s.overlap) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "%.0f%%", std::max(0.0, r.overlap) * 100);
    r.violations.push_back(std::string("the pieces' work ran at the same time for ") + buf +
                           " of the shortest (median of " + std::to_string(rounds) +
                           " rounds): they did not run side by side" + why_not);
  }
  return r;
}

} // namespace greenctx
