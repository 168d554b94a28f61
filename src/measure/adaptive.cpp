// SPDX-License-Identifier: Apache-2.0
// The adaptive measurement's pure parts: policy names, the checks of a configuration, the host's
// schedule and the verdicts (adaptive_run.cpp measures).
#include "greenctx/measure/adaptive.hpp"

#include "greenctx/plan/decimal.hpp"
#include "greenctx/plan/error.hpp"
#include "greenctx/plan/names.hpp"

#include <algorithm>
#include <cstdio>

namespace greenctx::measure {
namespace {

constexpr const char *api = "greenctx::measure::measure_adaptive";

[[noreturn]] void reject(const std::string &field, const std::string &message) {
  throw request_error(CUDA_ERROR_INVALID_VALUE, api, field + ": " + message);
}

// "150", "150.5": a number of microseconds as people write it.
std::string number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.15g", v);
  return text;
}

const adaptive_configuration *find(const adaptive_findings &r, std::string_view name) {
  for (const auto &c : r.configurations)
    if (c.name == name)
      return &c;
  return nullptr;
}

} // namespace

const char *name(adaptive_policy p) {
  switch (p) {
  case adaptive_policy::lead:
    return "lead";
  case adaptive_policy::lead_wait:
    return "lead-wait";
  case adaptive_policy::reactive:
    return "reactive";
  case adaptive_policy::reactive_wait:
    return "reactive-wait";
  case adaptive_policy::narrow:
    return "narrow";
  }
  return "?";
}

std::vector<adaptive_policy> parse_adaptive_policies(std::string_view text,
                                                     const std::string &what) {
  if (trim_blanks(text).empty())
    reject(what, "the list is empty: give some of lead, lead-wait, reactive, reactive-wait, "
                 "narrow separated by commas");
  return pick_by_name(
      list_entries(text), api, what, adaptive_policies, [](adaptive_policy p) { return name(p); },
      " (separate them by commas)");
}

void validate_adaptive(const adaptive_config &cfg, unsigned device_sms,
                       const adaptive_field_names &names) {
  if (cfg.critical_sms == 0)
    reject(names.critical_sms, "the critical work needs at least 1 SM");
  if (cfg.samples == 0)
    reject(names.samples, "give at least 1 sample per configuration");
  const std::string c = std::to_string(cfg.critical_sms);
  for (std::size_t i = 0; i < cfg.shrink_to.size(); ++i) {
    const unsigned n = cfg.shrink_to[i];
    if (n == 0)
      reject(names.shrink_to, "a narrow background partition of 0 SMs runs no background: give "
                              "1 or more");
    if (std::find(cfg.shrink_to.begin(), cfg.shrink_to.begin() + i, n) != cfg.shrink_to.begin() + i)
      reject(names.shrink_to, std::to_string(n) + " is given twice: give each N once");
    if (cfg.critical_sms + n >= device_sms)
      reject(names.shrink_to,
             std::to_string(n) + " SMs for the background and " + c +
                 " for the critical work leave none of this GPU's " + std::to_string(device_sms) +
                 " SMs for the rest: give N below " +
                 std::to_string(device_sms > cfg.critical_sms ? device_sms - cfg.critical_sms : 0) +
                 ", so that the narrow layout " + c + ",N,rest is narrower than the wide " + c +
                 ",rest");
  }
  for (std::size_t i = 0; i < cfg.policies.size(); ++i)
    if (std::find(cfg.policies.begin(), cfg.policies.begin() + i, cfg.policies[i]) !=
        cfg.policies.begin() + i)
      reject(names.policies,
             std::string(name(cfg.policies[i])) + " is given twice: give each policy once");
  const auto any_lead = std::any_of(cfg.policies.begin(), cfg.policies.end(), predictive);
  if (any_lead && 2 * cfg.lead.count() >= cfg.gap.count())
    reject(names.lead, "a lead of " + std::to_string(cfg.lead.count()) +
                           " us is not shorter than the shortest gap between critical arrivals (" +
                           number(cfg.gap.count() / 2.0) + " us, half of " + names.gap + " " +
                           std::to_string(cfg.gap.count()) +
                           "): the background would never run wide; give a lead below " +
                           std::to_string(cfg.gap.count() / 2) + " us or a longer " + names.gap);
  if (cfg.queue_depth == 0)
    reject(names.queue_depth, "0 chunks queued would run no background: give 1 or more");
}

adaptive_step adaptive_schedule(adaptive_policy p, std::chrono::duration<double, std::micro> gap,
                                std::chrono::microseconds lead) {
  using micros = std::chrono::duration<double, std::micro>;
  if (gap.count() < 0)
    gap = micros(0);
  if (!predictive(p))
    return {gap, micros(0)};
  const micros narrow = std::min(gap, micros(lead));
  return {gap - narrow, narrow};
}

std::vector<adaptive_verdict> adaptive_verdicts(const adaptive_findings &r) {
  std::vector<adaptive_verdict> out;
  const adaptive_configuration *alone = find(r, "alone"), *stat = find(r, "static");
  const double alone_p99 = alone ? alone->critical.host.p99 : 0;
  const double static_rate = stat && stat->background ? stat->background->rate() : 0;
  for (const auto &c : r.configurations) {
    if (!c.background)
      continue;
    adaptive_verdict v{c.name};
    v.available = alone_p99 > 0 && static_rate > 0 && c.critical.host.count > 0;
    if (v.available) {
      v.isolation = c.critical.host.p99 / alone_p99;
      v.background_ratio = c.background->rate() / static_rate;
    }
    out.push_back(v);
  }
  return out;
}

} // namespace greenctx::measure
