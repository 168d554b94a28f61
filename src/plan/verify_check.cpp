// SPDX-License-Identifier: Apache-2.0
#include "greenctx/plan/verify_check.hpp"

#include <algorithm>
#include <limits>
#include <map>

namespace greenctx {

std::string sm_map(const std::vector<unsigned> &sms, unsigned span, char mark) {
  std::string map(span, '.');
  for (unsigned id : sms)
    if (id < span)
      map[id] = mark;
  return map;
}

verify_report check_usage(std::vector<partition_usage> parts, unsigned device_sms) {
  verify_report report;
  report.sm_span = device_sms;
  std::map<unsigned, std::size_t> owner; // SM id -> first partition that used it
  for (std::size_t i = 0; i < parts.size(); ++i) {
    auto &p = parts[i];
    std::sort(p.sms.begin(), p.sms.end());
    p.sms.erase(std::unique(p.sms.begin(), p.sms.end()), p.sms.end());
    const std::string name = "partition " + std::to_string(i) + " (" + p.label + ")";
    if (!p.sms.empty())
      report.sm_span = std::max(report.sm_span, p.sms.back() + 1);
    if (p.sms.size() > p.obtained)
      report.violations.push_back(name + " holds " + std::to_string(p.obtained) +
                                  " SMs but its kernel ran on " + std::to_string(p.sms.size()));
    else if (p.sms.size() < p.obtained)
      report.notes.push_back(name + " holds " + std::to_string(p.obtained) +
                             " SMs; its probe reached " + std::to_string(p.sms.size()) +
                             " of them (not a violation: the hardware scheduler chose)");
    for (unsigned id : p.sms) {
      const auto [it, inserted] = owner.emplace(id, i);
      if (!inserted)
        report.violations.push_back("SM " + std::to_string(id) + " was used by both partition " +
                                    std::to_string(it->second) + " (" + parts[it->second].label +
                                    ") and " + name);
    }
  }
  report.timed = !parts.empty() && std::all_of(parts.begin(), parts.end(),
                                               [](const auto &p) { return p.end_us > p.start_us; });
  if (report.timed && parts.size() > 1) {
    report.min_overlap_us = std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < parts.size(); ++i)
      for (std::size_t j = i + 1; j < parts.size(); ++j) {
        const double overlap = std::min(parts[i].end_us, parts[j].end_us) -
                               std::max(parts[i].start_us, parts[j].start_us);
        report.min_overlap_us = std::min(report.min_overlap_us, overlap);
      }
    if (report.min_overlap_us <= 0)
      report.notes.push_back("the probes did not all run at the same time (shortest overlap " +
                             std::to_string(report.min_overlap_us) +
                             " us): disjointness was checked, but not under concurrent load");
  }
  report.parts = std::move(parts);
  return report;
}

} // namespace greenctx
