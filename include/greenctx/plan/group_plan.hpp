// SPDX-License-Identifier: Apache-2.0
// The planner of the heterogeneous split (cudaDevSmResourceSplit): how groups of different sizes
// and co-scheduled units are made from split-by-count pieces, with the driver abstracted behind
// `split_backend` so that it runs and is tested on the CPU. The driver-backed split_groups is in
// greenctx/core/group_split.hpp, which also explains runs and intermediate contexts.
#pragma once

#include "greenctx/cxx_standard.hpp"

#include "greenctx/plan/group_params.hpp"
#include "greenctx/plan/resource.hpp"

#include <functional>
#include <span>
#include <string>
#include <vector>

namespace greenctx {

/// One group (or the remainder) of a heterogeneous split: driver pieces of one split call.
struct sm_group {
  std::vector<sm_resource> pieces;
  unsigned coscheduled = 0; ///< promised co-scheduled unit; 0 for the remainder
  /// No driver promise backs its co-scheduled unit (IgnoreSmCoscheduling pieces, or a split of
  /// an intermediate context): split_groups proves it with the occupancy calculator.
  bool needs_cluster_check = false;
  unsigned run = 0; ///< which split call (run) it came from

  unsigned sm_count() const noexcept;
  bool empty() const noexcept { return pieces.empty(); }
};

/// How one group was (or would be) made.
struct group_outcome {
  unsigned requested = 0; ///< smCount as asked (0: discovery)
  unsigned obtained = 0;  ///< SMs it got (0 when it could not be made)
  unsigned run = 0;       ///< the split call it comes from
  unsigned unit = 0;      ///< size of the pieces it is made of
  bool ignore_coscheduling_pieces = false;
  std::string note; ///< why obtained differs from requested, or why it failed
  bool ok() const noexcept { return obtained > 0 && (requested == 0 || obtained >= requested); }
};

/// What split_groups gave.
struct group_split_result {
  std::vector<sm_group_params> params; ///< defaults and discovered counts written back
  std::vector<group_outcome> outcomes; ///< one per group
  std::vector<sm_group> groups;        ///< the groups (empty for a dry run)
  sm_group remainder;                  ///< SMs no group took (empty for a dry run)
  unsigned remainder_sms = 0;
  unsigned runs = 0; ///< split calls used (1: every piece shares one split)
  bool dry_run = false;
  bool native = false; ///< the driver's cuDevSmResourceSplit did it
  /// When not every group can be made: what the device's co-scheduled units allow and nearby
  /// requests that can be made (split_advice). Filled by the driver-backed split_groups.
  std::string advice;

  bool all_made() const;
  /// Several lines for people: each group's parameters, what it got and how.
  std::string explanation() const;
  /// "not every group can be made (group 1 {16, 8, 8, 0}: needs 2 pieces of 8 SMs, 1 left);
  /// a dry run shows what each group would get", with the advice after it when there is one:
  /// the message of a refused split.
  std::string refusal() const;
};

/// What the planner needs from a driver.
struct split_backend {
  /// Splits `input` into as many pieces of at least `unit` SMs as fit (split-by-count with
  /// IgnoreSmCoscheduling when `ignore`). Returns the pieces and the remainder (may be empty).
  std::function<std::pair<std::vector<sm_resource>, sm_resource>(const sm_resource &input,
                                                                 unsigned unit, bool ignore)>
      split;
  /// A splittable resource holding exactly `pieces` (an intermediate green context's resource).
  std::function<sm_resource(std::span<const sm_resource> pieces)> make_splittable;
};

/// The units greenctx can build groups of on a device with `limits`: the device's alignment (the
/// default split), then smaller even divisors of it (IgnoreSmCoscheduling, CC 9.0+ only).
struct split_unit {
  unsigned size = 0;
  bool ignore_coscheduling = false;
};
std::vector<split_unit> available_units(const group_limits &limits);

/// The planner itself: split_groups with the driver replaced by `backend`. `params` must have had
/// apply_group_defaults applied.
group_split_result plan_group_split(const sm_resource &input, std::span<sm_group_params> params,
                                    const group_limits &limits, const split_backend &backend,
                                    bool dry_run);

/// The same with the units given instead of available_units(limits): a "16,rest" request
/// (plan_partitions) splits with one unit, that of the flags it was given.
group_split_result plan_group_split(const sm_resource &input, std::span<sm_group_params> params,
                                    const std::vector<split_unit> &units,
                                    const group_limits &limits, const split_backend &backend,
                                    bool dry_run);

} // namespace greenctx
