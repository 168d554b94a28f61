// CUDA 13.1's heterogeneous split (cudaDevSmResourceSplit) for every driver from 12.4 up.
//
// Groups are made left to right from the SMs still free, each with its own size and co-scheduled
// unit. A 13.1 driver does it in one call. Older drivers only split into equal pieces, so greenctx
// plans the request as one or more "runs" of consecutive groups:
//  - one run: a single split-by-count into pieces of a common unit (8 SMs with the default flags
//    on CC 9.0, or 4 and 2 with IgnoreSmCoscheduling), each group taking whole pieces. All groups
//    and the remainder then come from one split call and may share a descriptor, as in 13.1.
//  - several runs, when no single unit fits every group (for example 12 SMs for clusters of 2,
//    then 0 SMs for clusters of 8): what a run leaves is turned into an intermediate green context
//    whose resource is split again (a raw split output cannot be split, measured). Groups of
//    different runs cannot share a descriptor; greenctx says so when asked to combine them.
//
// Intermediate green contexts live for the rest of the process and are reused by identical
// requests (creating and destroying them leaks device memory on driver 580). Co-scheduled counts
// the old driver cannot guarantee (16 and 32, or any that does not divide the device's alignment)
// are refused with CUDA_ERROR_NOT_SUPPORTED, naming the limitation: greenctx never hands out a
// group that lacks a promised property.
#pragma once

#include "greenctx/group_params.hpp"
#include "greenctx/resource.hpp"

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
  /// an intermediate context): cudaGreenCtxCreate proves it with the occupancy calculator.
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

  bool all_made() const;
  /// Several lines for people: each group's parameters, what it got and how.
  std::string explanation() const;
};

/// Splits `input` into groups as cudaDevSmResourceSplit does (see the file comment). `params`
/// gets the defaults and discovered counts written back, also on failure. A dry run plans without
/// returning groups (it may still split, and create intermediate green contexts for multi-run
/// requests). Throws request_error (CUDA_ERROR_INVALID_VALUE or
/// CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION) for invalid parameters and, unless `dry_run`, when a
/// group cannot be made; error with CUDA_ERROR_NOT_SUPPORTED for co-scheduled counts this driver
/// cannot guarantee.
group_split_result split_groups(const sm_resource &input, std::span<sm_group_params> params,
                                bool dry_run = false);

// --- the planner, separated from the driver so that it can be tested on the CPU ---------------

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

} // namespace greenctx
