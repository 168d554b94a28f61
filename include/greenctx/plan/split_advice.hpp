// SPDX-License-Identifier: Apache-2.0
// Advice for a heterogeneous split that cannot be made: what the device's co-scheduled units
// allow, and nearby requests that the planner can make on it. Pure code: the driver is behind
// split_backend (core/group_split.hpp has the driver-backed split_advice).
#pragma once

#include "greenctx/cxx_standard.hpp"

#include "greenctx/plan/group_plan.hpp"

#include <functional>
#include <span>
#include <string>
#include <vector>

namespace greenctx {

/// Whether a request whose groups carry no driver co-scheduling promise really runs the clusters
/// it promises (a real split and a cluster proof: core/group_split.hpp's split_groups).
using request_prover = std::function<bool(std::span<const sm_group_params> params)>;

/// A request near the one refused, that the planner makes on the same input.
struct split_alternative {
  std::vector<sm_group_params> params; ///< defaults applied
  std::string change;                  ///< what was changed, for people ("Backfill on group 0")
  /// Some of its groups carry no driver co-scheduling promise (pieces of another size than the
  /// device's alignment): the prover proved their clusters.
  bool proved = false;
};

/// "{104, 16}", "{112 Backfill, 16}", "{112 cosched 2, 16 cosched 2}": each group's SM count, with
/// its co-scheduled count when it is not the device's alignment, and Backfill.
std::string to_short_string(std::span<const sm_group_params> params, const group_limits &limits);

/// "112:backfill 16", the `greenctx split` syntax of the same request.
std::string to_request_text(std::span<const sm_group_params> params, const group_limits &limits);

/// Requests near `params` (defaults applied) that plan_group_split makes on `input`, in this order
/// where they differ from `params` and from each other:
///  1. whole co-scheduled units: every fixed group without Backfill rounded up to a multiple of the
///     device's alignment, then the largest shrunk by the alignment until all fit, with no group
///     left to be proved (so the driver's co-scheduling promise holds);
///  2. Backfill on the largest fixed group;
///  3. coscheduledSmCount 2 (preferred 2) for every group.
/// Each is planned as a dry run with `backend` (driver splits, no green contexts for one-call
/// plans). One whose groups carry no driver promise is kept only when `prove` says it holds, and
/// left out without a prover: advice never names a request that would then be refused. Empty
/// when none is found.
std::vector<split_alternative> split_alternatives(const sm_resource &input,
                                                  std::span<const sm_group_params> params,
                                                  const group_limits &limits,
                                                  const split_backend &backend,
                                                  const request_prover &prove = {});

/// "this GPU has 15 co-scheduled units of 8 SMs (120 SMs) and 12 SMs outside whole units", for
/// `input` split into pieces of the device's alignment with `backend`.
std::string coscheduled_units_text(const sm_resource &input, const group_limits &limits,
                                   const split_backend &backend);

/// The advice as one paragraph: coscheduled_units_text, then the alternatives ("requests that
/// can be made here: {104, 16}; ..."). For the end of an error message.
std::string plan_split_advice(const sm_resource &input, std::span<const sm_group_params> params,
                              const group_limits &limits, const split_backend &backend,
                              const request_prover &prove = {});

} // namespace greenctx
