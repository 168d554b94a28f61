// SPDX-License-Identifier: Apache-2.0
#include "greenctx/plan/split_advice.hpp"

#include "greenctx/plan/error.hpp"

#include <algorithm>
#include <functional>

namespace greenctx {
namespace {

bool is_backfill(const sm_group_params &p) {
  return p.flags & sm_group_backfill;
}

bool fixed(const sm_group_params &p) {
  return p.sm_count != 0 && !is_backfill(p);
}

// The largest fixed group, or params.size() when there is none.
std::size_t largest_fixed(std::span<const sm_group_params> params) {
  std::size_t best = params.size();
  for (std::size_t i = 0; i < params.size(); ++i)
    if (fixed(params[i]) && (best == params.size() || params[i].sm_count > params[best].sm_count))
      best = i;
  return best;
}

struct planned {
  bool made = false;
  bool needs_proof = false; // a group without a driver co-scheduling promise
};

planned dry_plan(const sm_resource &input, std::vector<sm_group_params> params,
                 const group_limits &limits, const split_backend &backend) {
  try {
    apply_group_defaults(params, limits);
    const group_split_result r = plan_group_split(input, params, limits, backend, true);
    planned p{r.all_made(), false};
    for (const auto &o : r.outcomes)
      p.needs_proof = p.needs_proof || o.ignore_coscheduling_pieces || o.run > 0 ||
                      o.unit != limits.device_alignment;
    return p;
  } catch (const error &) { // a rule the alternative breaks, or a unit this driver lacks
    return {};
  }
}

std::vector<sm_group_params>
whole_units(std::span<const sm_group_params> params, const group_limits &limits,
            const std::function<bool(const std::vector<sm_group_params> &)> &fits) {
  const unsigned a = limits.device_alignment;
  std::vector<sm_group_params> out(params.begin(), params.end());
  for (auto &p : out)
    if (fixed(p)) {
      p.sm_count = (p.sm_count + a - 1) / a * a;
      if (p.coscheduled_sm_count > a || a % p.coscheduled_sm_count != 0)
        return {}; // a co-scheduled count the alignment's pieces do not hold
    }
  const std::size_t big = largest_fixed(out);
  if (big == out.size())
    return {};
  while (!fits(out)) {
    if (out[big].sm_count <= a)
      return {};
    out[big].sm_count -= a;
  }
  return out;
}

} // namespace

std::string to_short_string(std::span<const sm_group_params> params, const group_limits &limits) {
  std::string out = "{";
  for (std::size_t i = 0; i < params.size(); ++i) {
    const auto &p = params[i];
    out += (i ? ", " : "") + (p.sm_count ? std::to_string(p.sm_count) : std::string("all"));
    if (p.coscheduled_sm_count != 0 && p.coscheduled_sm_count != limits.device_alignment)
      out += " cosched " + std::to_string(p.coscheduled_sm_count);
    if (is_backfill(p))
      out += " Backfill";
  }
  return out + "}";
}

std::string to_request_text(std::span<const sm_group_params> params, const group_limits &limits) {
  std::string out;
  for (const auto &p : params) {
    out += (out.empty() ? "" : " ") + std::to_string(p.sm_count);
    const unsigned c = p.coscheduled_sm_count;
    if (c != 0 && c != limits.device_alignment)
      out += ":cosched=" + std::to_string(c);
    const unsigned pref = p.preferred_coscheduled_sm_count;
    if (pref != 0 && pref != std::max(c, limits.device_alignment))
      out += ":pref=" + std::to_string(pref);
    if (is_backfill(p))
      out += ":backfill";
  }
  return out;
}

std::vector<split_alternative> split_alternatives(const sm_resource &input,
                                                  std::span<const sm_group_params> params,
                                                  const group_limits &limits,
                                                  const split_backend &backend,
                                                  const request_prover &prove) {
  std::vector<split_alternative> out;
  const auto add = [&](std::vector<sm_group_params> alt, std::string change, bool need_promise) {
    if (alt.empty())
      return;
    apply_group_defaults(alt, limits);
    if (std::equal(alt.begin(), alt.end(), params.begin(), params.end()))
      return;
    for (const auto &seen : out)
      if (seen.params == alt)
        return;
    const planned p = dry_plan(input, alt, limits, backend);
    if (!p.made || (p.needs_proof && (need_promise || !prove || !prove(alt))))
      return;
    out.push_back({std::move(alt), std::move(change), p.needs_proof});
  };

  add(whole_units(params, limits,
                  [&](const std::vector<sm_group_params> &alt) {
                    const planned p = dry_plan(input, alt, limits, backend);
                    return p.made && !p.needs_proof;
                  }),
      "whole co-scheduled units", true);

  if (const std::size_t big = largest_fixed(params); big != params.size()) {
    std::vector<sm_group_params> alt(params.begin(), params.end());
    alt[big].flags |= sm_group_backfill;
    add(std::move(alt), "Backfill on group " + std::to_string(big), false);
  }

  if (limits.cc_major >= 9) {
    std::vector<sm_group_params> alt(params.begin(), params.end());
    for (auto &p : alt)
      p.coscheduled_sm_count = p.preferred_coscheduled_sm_count = 2;
    add(std::move(alt), "coscheduledSmCount 2", false);
  }
  return out;
}

std::string coscheduled_units_text(const sm_resource &input, const group_limits &limits,
                                   const split_backend &backend) {
  const unsigned a = limits.device_alignment;
  const auto [pieces, rest] = backend.split(input, a, false);
  const auto units = static_cast<unsigned>(pieces.size());
  const unsigned inside = units ? units * pieces.front().sm_count() : 0;
  return "this GPU has " + std::to_string(units) + " co-scheduled units of " + std::to_string(a) +
         " SMs (" + std::to_string(inside) + " SMs) and " +
         std::to_string(input.sm_count() - inside) +
         " SMs outside whole units: groups with coscheduledSmCount " + std::to_string(a) +
         " can use at most " + std::to_string(inside) + " SMs together";
}

std::string plan_split_advice(const sm_resource &input, std::span<const sm_group_params> params,
                              const group_limits &limits, const split_backend &backend,
                              const request_prover &prove) {
  std::string out = coscheduled_units_text(input, limits, backend);
  const auto alts = split_alternatives(input, params, limits, backend, prove);
  if (alts.empty())
    return out + "; no nearby request can be made here";
  out += "; requests that can be made here: ";
  for (std::size_t i = 0; i < alts.size(); ++i)
    out += (i ? "; " : "") + to_short_string(alts[i].params, limits) + " (" + alts[i].change +
           (alts[i].proved ? ", clusters proved" : "") + ")";
  return out;
}

} // namespace greenctx
