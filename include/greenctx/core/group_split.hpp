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
//    reach 120 SMs but 8 pieces of 16 reach 128); such groups are proved on creation, as no
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

/// Splits `input` into groups as cudaDevSmResourceSplit does (see the file comment). `params`
/// gets the defaults and discovered counts written back, also on failure. A dry run plans without
/// returning groups (it may still split, and create intermediate green contexts for multi-run
/// requests). Throws request_error (CUDA_ERROR_INVALID_VALUE or
/// CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION) for invalid parameters and, unless `dry_run`, when a
/// group cannot be made (with split_advice at the end); a dry run puts the advice in the result;
/// error with CUDA_ERROR_NOT_SUPPORTED for co-scheduled counts this driver cannot guarantee.
group_split_result split_groups(const sm_resource &input, std::span<sm_group_params> params,
                                bool dry_run = false);

/// What the device's co-scheduled units allow and nearby requests that can be made on `input`
/// (plan/split_advice.hpp, planned with the driver's split-by-count, also on a 13.1 driver).
/// `params` need not have defaults applied. Requests that need a cluster proof are named only
/// when `prove` proves them (lab's prove_request; the core has no occupancy kernel). Used in
/// split_groups' refusals; call it for a refusal found later, such as a failed cluster proof.
std::string split_advice(const sm_resource &input, std::span<const sm_group_params> params,
                         const request_prover &prove = {});

/// The same with the units of the split given (`units` empty: available_units, as above). A
/// 13.1 driver still splits natively, without units.
group_split_result split_groups(const sm_resource &input, std::span<sm_group_params> params,
                                const std::vector<split_unit> &units, bool dry_run = false);

} // namespace greenctx
