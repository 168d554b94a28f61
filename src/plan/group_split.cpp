// SPDX-License-Identifier: Apache-2.0
// The heterogeneous-split planner (pure: the driver is behind split_backend).
#include "greenctx/plan/group_plan.hpp"

#include "greenctx/plan/error.hpp"

#include <algorithm>
#include <deque>
#include <iterator>
#include <numeric>
#include <utility>

namespace greenctx {
namespace {

constexpr const char *api = "greenctx::split_groups";

bool is_backfill(const sm_group_params &p) {
  return p.flags & sm_group_backfill;
}

// Whether group `p` can be built from pieces of `u`: the unit must hold whole co-scheduled units,
// and a fixed, exact count must be whole pieces.
bool fits(const sm_group_params &p, const split_unit &u) {
  if (u.size % p.coscheduled_sm_count != 0)
    return false;
  return p.sm_count == 0 || is_backfill(p) || p.sm_count % u.size == 0;
}

std::string units_text(const std::vector<split_unit> &units) {
  std::string out;
  for (const auto &u : units)
    out += (out.empty() ? "" : ", ") + std::to_string(u.size) +
           (u.ignore_coscheduling ? " (IgnoreSmCoscheduling)" : "");
  return out;
}

// Consecutive groups that one split call serves, and the unit of that call.
struct run_plan {
  std::size_t first = 0, end = 0;
  split_unit unit;
};

std::vector<run_plan> form_runs(std::span<const sm_group_params> params,
                                const std::vector<split_unit> &units, const group_limits &limits) {
  std::vector<run_plan> runs;
  std::vector<split_unit> candidates;
  for (std::size_t i = 0; i < params.size(); ++i) {
    std::vector<split_unit> own;
    for (const auto &u : units)
      if (fits(params[i], u))
        own.push_back(u);
    if (own.empty()) {
      const unsigned c = params[i].coscheduled_sm_count;
      const bool no_unit = std::none_of(units.begin(), units.end(),
                                        [&](const split_unit &u) { return u.size % c == 0; });
      throw error(CUDA_ERROR_NOT_SUPPORTED, api,
                  "group " + std::to_string(i) + " " + to_string(params[i]) + ": " +
                      (no_unit ? "co-scheduled units of " + std::to_string(c) +
                                     " SMs cannot be guaranteed on this driver: below CUDA 13.1 "
                                     "greenctx builds groups from split-by-count pieces of " +
                                     units_text(units) +
                                     " SMs, and a co-scheduled unit must divide the piece size "
                                     "(use coscheduledSmCount " +
                                     std::to_string(std::min(c, limits.device_alignment) / 2 * 2) +
                                     " or less that divides " +
                                     std::to_string(limits.device_alignment) +
                                     ", or a CUDA 13.1 driver)"
                               : "smCount " + std::to_string(params[i].sm_count) +
                                     " is not a whole number of pieces of any size greenctx can "
                                     "split (" +
                                     units_text(units) + ")"));
    }
    std::vector<split_unit> shared;
    for (const auto &u : candidates)
      if (std::any_of(own.begin(), own.end(),
                      [&](const split_unit &o) { return o.size == u.size; }))
        shared.push_back(u);
    if (runs.empty() || shared.empty()) {
      runs.push_back({i, i + 1, own.front()});
      candidates = own;
    } else {
      runs.back().end = i + 1;
      candidates = shared;
    }
    runs.back().unit = candidates.front(); // the largest unit every group of the run fits
  }
  return runs;
}

unsigned total(const std::vector<sm_resource> &pieces) noexcept {
  unsigned n = 0;
  for (const auto &p : pieces)
    n += p.sm_count();
  return n;
}

// The pieces and unstructured remainder of one split call that no group has taken yet.
struct free_pool {
  std::deque<sm_resource> pieces;
  sm_resource rest; // the split's remainder, empty once taken
  unsigned piece_size = 0;

  std::vector<sm_resource> take(std::size_t n, bool with_rest) {
    std::vector<sm_resource> out(pieces.begin(), pieces.begin() + static_cast<std::ptrdiff_t>(n));
    pieces.erase(pieces.begin(), pieces.begin() + static_cast<std::ptrdiff_t>(n));
    if (with_rest && !rest.empty())
      out.push_back(std::exchange(rest, sm_resource{}));
    return out;
  }
  std::vector<sm_resource> all() { return take(pieces.size(), true); }
};

// Takes what group `p` gets from `pool`; fills `outcome`. Returns the pieces (empty on failure).
// With `prefer_rest`, a Backfill group takes the unstructured rest whenever it can, leaving whole
// pieces to the groups after it.
std::vector<sm_resource> take_group(free_pool &pool, const sm_group_params &p,
                                    group_outcome &outcome, bool prefer_rest) {
  const unsigned s = pool.piece_size, n = p.sm_count;
  const std::size_t have = pool.pieces.size();
  const unsigned rest = pool.rest.sm_count();
  const std::string pieces_of = " pieces of " + std::to_string(s) + " SMs";
  if (n == 0) {
    auto got = pool.take(have, is_backfill(p));
    if (got.empty())
      outcome.note = "no SMs left for discovery";
    else if (is_backfill(p) && rest > 0)
      outcome.note = "discovered " + std::to_string(have) + pieces_of + " + " +
                     std::to_string(rest) + " unstructured SMs (Backfill)";
    return got;
  }
  if (!is_backfill(p)) {
    if (s == 0 || n % s != 0) {
      outcome.note = "the split gave pieces of " + std::to_string(s) + " SMs, and " +
                     std::to_string(n) + " is not a whole number of them";
      return {};
    }
    if (n / s > have) {
      outcome.note = "needs " + std::to_string(n / s) + pieces_of + ", " + std::to_string(have) +
                     " left (" + std::to_string(have * s) + " SMs)";
      return {};
    }
    return pool.take(n / s, false);
  }
  // Backfill: the smallest set of whole pieces, or of pieces plus the unstructured rest, that
  // reaches n SMs (whole pieces when both are as small). At least one whole piece, so that the
  // group can run a cluster of its co-scheduled count.
  const std::size_t up = s ? (n + s - 1) / s : 0;
  const std::size_t with_rest =
      std::max<std::size_t>(1, s && n > rest ? (n - rest + s - 1) / s : 0);
  const bool by_pieces = s && up <= have;
  const bool by_rest = rest > 0 && with_rest <= have;
  if (!by_pieces && !by_rest) {
    outcome.note =
        "needs " + std::to_string(n) + " SMs, " + std::to_string(have * s + rest) + " left";
    return {};
  }
  const bool use_rest = by_rest && (!by_pieces || prefer_rest || with_rest * s + rest < up * s);
  const std::size_t count = use_rest ? with_rest : up;
  auto got = pool.take(count, use_rest);
  if (total(got) != n)
    outcome.note =
        "Backfill: " + std::to_string(total(got)) + " SMs (" + std::to_string(count) + pieces_of +
        (use_rest ? " + " + std::to_string(rest) + " unstructured" : std::string()) + ")";
  return got;
}

} // namespace

unsigned sm_group::sm_count() const noexcept {
  return total(pieces);
}

bool group_split_result::all_made() const {
  return std::all_of(outcomes.begin(), outcomes.end(),
                     [](const group_outcome &o) { return o.ok(); });
}

std::string group_split_result::explanation() const {
  std::string out;
  for (std::size_t i = 0; i < outcomes.size(); ++i) {
    const auto &o = outcomes[i];
    out += "group " + std::to_string(i) + " " + to_string(params[i]) + ": ";
    out += o.ok() ? std::to_string(o.obtained) + " SMs" : std::string("cannot be made");
    if (!native)
      out += " [split " + std::to_string(o.run) + ", pieces of " + std::to_string(o.unit) +
             (o.ignore_coscheduling_pieces ? ", IgnoreSmCoscheduling" : "") + "]";
    if (!o.note.empty())
      out += ": " + o.note;
    out += "\n";
  }
  out += "remainder: " + std::to_string(remainder_sms) + " SMs\n";
  if (runs > 1)
    out += "built from " + std::to_string(runs) +
           " split calls: groups of different calls cannot share a descriptor\n";
  return out;
}

std::string group_split_result::refusal() const {
  std::string why;
  for (std::size_t i = 0; i < outcomes.size(); ++i)
    if (!outcomes[i].ok())
      why += (why.empty() ? "" : "; ") + std::string("group ") + std::to_string(i) + " " +
             to_string(params[i]) + ": " + outcomes[i].note;
  return "not every group can be made (" + why + "); a dry run shows what each group would get" +
         (advice.empty() ? std::string() : ". Advice: " + advice);
}

std::vector<split_unit> available_units(const group_limits &limits) {
  std::vector<split_unit> units{{limits.device_alignment, false}};
  if (limits.cc_major >= 9)
    for (unsigned u = limits.device_alignment / 2 * 2; u >= 2; u -= 2)
      if (u < limits.device_alignment && limits.device_alignment % u == 0)
        units.push_back({u, true});
  return units;
}

namespace {

// What one run makes when its input is split into pieces of `unit`.
struct run_attempt {
  std::vector<sm_group> groups;
  std::vector<group_outcome> outcomes;
  free_pool pool;

  bool all_made() const {
    return std::all_of(outcomes.begin(), outcomes.end(),
                       [](const group_outcome &o) { return o.ok(); });
  }
};

struct attempt_options {
  bool larger_than_alignment = false; // pieces larger than the device's co-scheduled alignment
  bool backfill_takes_rest = false;   // see take_group
};

run_attempt attempt_run(const sm_resource &input, const run_plan &run, const split_unit &unit,
                        unsigned index, std::span<const sm_group_params> params,
                        const split_backend &backend, attempt_options options) {
  run_attempt a;
  if (!input.empty()) {
    auto [pieces, rest] = backend.split(input, unit.size, unit.ignore_coscheduling);
    a.pool.pieces.assign(pieces.begin(), pieces.end());
    a.pool.rest = rest;
    a.pool.piece_size = pieces.empty() ? unit.size : pieces.front().sm_count();
  }
  for (std::size_t i = run.first; i < run.end; ++i) {
    group_outcome o;
    o.requested = params[i].sm_count;
    o.run = index;
    o.unit = a.pool.piece_size ? a.pool.piece_size : unit.size;
    o.ignore_coscheduling_pieces = unit.ignore_coscheduling;
    sm_group g;
    g.pieces = take_group(a.pool, params[i], o, options.backfill_takes_rest);
    g.coscheduled = params[i].coscheduled_sm_count;
    // IgnoreSmCoscheduling pieces carry no co-scheduling promise, and neither does a later run's
    // input (an intermediate context of leftovers) nor a piece larger than the device's
    // co-scheduled alignment: such groups are proved on creation.
    g.needs_cluster_check = unit.ignore_coscheduling || index > 0 || options.larger_than_alignment;
    g.run = index;
    o.obtained = g.sm_count();
    a.outcomes.push_back(std::move(o));
    a.groups.push_back(std::move(g));
  }
  return a;
}

// Larger pieces for a run of fixed groups that the run's own unit could not place: multiples of
// the unit that divide every group's size, largest first. A split into larger pieces can reach
// SMs that pieces of the alignment cannot (measured on the H200: 15 pieces of 8 = 120 SMs, but
// 8 pieces of 16 = 128), so {112, 16} or 64,64 fit that way.
std::vector<unsigned> larger_units(std::span<const sm_group_params> params, const run_plan &run) {
  if (run.unit.ignore_coscheduling)
    return {}; // pieces of 2 already reach every SM
  unsigned common = 0;
  for (std::size_t i = run.first; i < run.end; ++i) {
    if (params[i].sm_count == 0 || is_backfill(params[i]))
      return {};
    common = std::gcd(common, params[i].sm_count);
  }
  std::vector<unsigned> out;
  for (unsigned m = common; m > run.unit.size; m -= run.unit.size)
    if (common % m == 0 && m % run.unit.size == 0)
      out.push_back(m);
  return out;
}

bool has_backfill(std::span<const sm_group_params> params, const run_plan &run) {
  return std::any_of(params.begin() + static_cast<std::ptrdiff_t>(run.first),
                     params.begin() + static_cast<std::ptrdiff_t>(run.end), is_backfill);
}

} // namespace

group_split_result plan_group_split(const sm_resource &input, std::span<sm_group_params> params,
                                    const group_limits &limits, const split_backend &backend,
                                    bool dry_run) {
  return plan_group_split(input, params, available_units(limits), limits, backend, dry_run);
}

group_split_result plan_group_split(const sm_resource &input, std::span<sm_group_params> params,
                                    const std::vector<split_unit> &units,
                                    const group_limits &limits, const split_backend &backend,
                                    bool dry_run) {
  group_split_result result;
  result.dry_run = dry_run;
  const auto runs = form_runs(params, units, limits);
  result.runs = static_cast<unsigned>(runs.size());
  result.outcomes.resize(params.size());
  sm_resource current = input;
  for (std::size_t r = 0; r < runs.size(); ++r) {
    const run_plan &run = runs[r];
    const auto index = static_cast<unsigned>(r);
    run_attempt made = attempt_run(current, run, run.unit, index, params, backend, {});
    if (!made.all_made() && !current.empty() && has_backfill(params, run)) {
      // A Backfill group that took whole pieces may have left a later group short: let it take
      // the unstructured SMs instead ({112 Backfill, 16} on the H200: 13 x 8 + 12, then 2 x 8).
      run_attempt again = attempt_run(current, run, run.unit, index, params, backend,
                                      {.backfill_takes_rest = true});
      if (again.all_made())
        made = std::move(again);
    }
    if (!made.all_made() && !current.empty()) {
      for (unsigned m : larger_units(params, run)) {
        run_attempt larger = attempt_run(current, run, {m, false}, index, params, backend,
                                         {.larger_than_alignment = true});
        if (larger.all_made()) {
          for (auto &o : larger.outcomes)
            o.note = "pieces of " + std::to_string(m) + ": pieces of " +
                     std::to_string(run.unit.size) + " left too few SMs";
          made = std::move(larger);
          break;
        }
      }
    }
    for (std::size_t i = run.first; i < run.end; ++i) {
      result.outcomes[i] = made.outcomes[i - run.first];
      if (params[i].sm_count == 0)
        params[i].sm_count = result.outcomes[i].obtained; // discovery: written back, 0 included
    }
    std::move(made.groups.begin(), made.groups.end(), std::back_inserter(result.groups));
    auto left = made.pool.all();
    if (r + 1 < runs.size())
      current = left.empty() ? sm_resource{} : backend.make_splittable(left);
    else
      result.remainder.pieces = std::move(left);
  }
  result.remainder.run = result.runs - 1;
  result.remainder_sms = result.remainder.sm_count();
  result.params.assign(params.begin(), params.end());
  if (!dry_run && !result.all_made())
    throw request_error(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION, api, result.refusal());
  if (dry_run) {
    result.groups.clear();
    result.remainder = {};
  }
  return result;
}

} // namespace greenctx
