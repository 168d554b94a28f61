// SPDX-License-Identifier: Apache-2.0
// CUDA 13.1's heterogeneous split (cudaDevSmResourceSplit) for every driver from 12.4 up.
//
// Groups are made left to right from the SMs still free, each with its own size and co-scheduled
// unit. A 13.1 driver does it in one call. Older drivers only split into equal pieces, so greenctx
// plans the request as one or more "runs" of consecutive groups:
//  - one run: a single split-by-count into pieces of a common unit (8 SMs with the default flags
//    on CC 9.0, or 4 and 2 with IgnoreSmCoscheduling), each group taking whole pieces. All groups
//    and the remainder then come from one split call and may share a descriptor, as in 13.1.
//  - a run of groups with fixed sizes that pieces of the alignment cannot place is tried again with
//    larger pieces, multiples of the unit that divide every size (on the H200, 15 pieces of 8
//    reach 120 SMs but 8 pieces of 16 reach 128); such groups are proved at the split, as no
//    promise of co-scheduling is assumed for them.
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

#include "greenctx/cxx_standard.hpp"

#include "greenctx/plan/group_plan.hpp"
#include "greenctx/plan/split_advice.hpp"

#include <span>
#include <vector>

namespace greenctx {

/// What split_groups does about groups whose clusters no driver promise backs
/// (sm_group::needs_cluster_check, with a coscheduledSmCount of 2 or more): each is proved with the
/// occupancy calculator on a green context of its SMs (core/cluster_proof.hpp; the contexts are
/// kept and the counts cached, so asking again is cheap), unless skipped.
enum class cluster_proof {
  /// As cudaDevSmResourceSplit: a group that runs fewer clusters than it promises makes the split
  /// a refusal (request_error, CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION, counts and advice).
  refuse,
  /// Such a group is marked not made in the result instead (obtained 0, a note with the measured
  /// and promised counts, `advice` filled), for a caller that shows every group (`greenctx split`).
  report,
  /// Not proved: for groups used without clusters (a partition promises none).
  skip,
};

/// How split_groups plans, and what it proves.
struct group_split_options {
  /// Plan without returning groups (it may still split, and create intermediate green contexts
  /// for multi-run requests); nothing is proved and a group that cannot be made is not an error.
  bool dry_run = false;
  cluster_proof proof = cluster_proof::refuse;
  /// The units of the split (empty: available_units). A 13.1 driver splits natively, without them.
  std::vector<split_unit> units = {};
};

/// Splits `input` into groups as cudaDevSmResourceSplit does (see the file comment), proving every
/// group it returns as `options.proof` says. `params` gets the defaults and discovered counts
/// written back, also on failure. Throws request_error (CUDA_ERROR_INVALID_VALUE or
/// CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION) for invalid parameters and, unless a dry run, when
/// a group cannot be made or fails its proof (with split_advice at the end); a dry run puts the
/// advice in the result; error with CUDA_ERROR_NOT_SUPPORTED for co-scheduled counts this driver
/// cannot guarantee.
group_split_result split_groups(const sm_resource &input, std::span<sm_group_params> params,
                                const group_split_options &options);

/// The same with the default options: proved, refused when a proof fails; planned only when
/// `dry_run`.
group_split_result split_groups(const sm_resource &input, std::span<sm_group_params> params,
                                bool dry_run = false);

/// What the device's co-scheduled units allow and nearby requests that can be made on `input`
/// (plan_split_advice, planned with the driver's split-by-count, also on a 13.1 driver). `params`
/// need not have defaults applied. A nearby request whose groups need a cluster proof is named
/// only when `prove` and it passes the proof (which makes and keeps a green context per group);
/// split_groups proves them when it advises on a failed proof.
std::string split_advice(const sm_resource &input, std::span<const sm_group_params> params,
                         bool prove = false);

} // namespace greenctx
