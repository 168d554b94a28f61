// SPDX-License-Identifier: Apache-2.0
// The rules of CUDA 13.1's heterogeneous split (cudaDevSmResourceSplit) for each group's
// parameters: defaults, validity, and explanations that name the broken rule and the nearest valid
// requests. Pure code: no driver. The split itself (which SMs each group gets) is the driver's or,
// below 13.1, greenctx's emulation, built on top of these rules.
#pragma once

#include "greenctx/cxx_standard.hpp"

#include "greenctx/plan/granularity.hpp"

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace greenctx {

/// One group's parameters: greenctx's one definition of the 16 words of CUDA 13.1's
/// cudaDevSmResourceGroupParams and the driver's CU_DEV_SM_RESOURCE_GROUP_PARAMS, in their layout
/// (asserted below). The compat layer converts at its boundary and the 13.1 driver gets it as it
/// is.
struct sm_group_params {
  unsigned sm_count = 0;                       ///< 0: discovery (as many as fit)
  unsigned coscheduled_sm_count = 0;           ///< 0: the device's co-scheduling alignment
  unsigned preferred_coscheduled_sm_count = 0; ///< 0: default (a hint, CC 10.0+)
  unsigned flags = 0;                          ///< 0 or sm_group_backfill
  unsigned reserved[12] = {};                  ///< zero: the driver refuses anything else

  friend bool operator==(const sm_group_params &, const sm_group_params &) = default;
};

// The 13.1 layout: 16 unsigned words, the four fields first, copied as bytes across the compat
// layer and passed to the driver as they are.
static_assert(std::is_standard_layout_v<sm_group_params> &&
              std::is_trivially_copyable_v<sm_group_params>);
static_assert(sizeof(unsigned) == 4 && sizeof(sm_group_params) == 64);
static_assert(offsetof(sm_group_params, sm_count) == 0 &&
              offsetof(sm_group_params, coscheduled_sm_count) == 4 &&
              offsetof(sm_group_params, preferred_coscheduled_sm_count) == 8 &&
              offsetof(sm_group_params, flags) == 12 && offsetof(sm_group_params, reserved) == 16);

/// Whether `T`, one of CUDA's structs for the same parameters (cudaDevSmResourceGroupParams,
/// CU_DEV_SM_RESOURCE_GROUP_PARAMS), has sm_group_params' words in the same places, so that
/// greenctx may copy one into the other as bytes. Checked with static_assert where they meet.
// Not formatted: clang-format 14 takes the `&&` after a template argument for an rvalue reference.
// clang-format off
template <class T>
inline constexpr bool same_words_as_sm_group_params =
    sizeof(T) == sizeof(sm_group_params) && std::is_trivially_copyable_v<T> &&
    offsetof(T, smCount) == offsetof(sm_group_params, sm_count) &&
    offsetof(T, coscheduledSmCount) == offsetof(sm_group_params, coscheduled_sm_count) &&
    offsetof(T, preferredCoscheduledSmCount) ==
        offsetof(sm_group_params, preferred_coscheduled_sm_count) &&
    offsetof(T, flags) == offsetof(sm_group_params, flags);
// clang-format on

/// cudaDevSmResourceGroupBackfill: the group may get more SMs than asked, and its count need
/// only be at least the co-scheduled count, not a multiple of it.
inline constexpr unsigned sm_group_backfill = 1;

/// What the rules depend on.
struct group_limits {
  unsigned input_sms = 0;           ///< SMs of the resource being split
  unsigned device_alignment = 0;    ///< smCoscheduledAlignment of the device (not of the input)
  int cc_major = 0;                 ///< clusters exist from CC 9.0
  unsigned max_coscheduled() const; ///< 32 on CC 9.0+, 2 below (no thread-block clusters there)
};

/// Limits for splitting `input_sms` SMs of a device with `device_grain` and compute capability
/// `cc_major`.
group_limits make_group_limits(unsigned input_sms, granularity device_grain, int cc_major);

/// Fills in the defaults (co-scheduled and preferred counts of 0) and checks every group's
/// parameters, left to right, as cudaDevSmResourceSplit does before it places any SM. Defaults
/// are written back into `groups`, also when a later group is invalid. Throws request_error
/// (CUDA_ERROR_INVALID_VALUE for zero groups or unknown flags, otherwise
/// CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION) naming the group, the rule and what would be valid.
///
/// Default preferred count: the device's alignment when it is a multiple of the actual
/// co-scheduled count, else the co-scheduled count itself. (The guide says both defaults equal the
/// device's alignment; that value would break the multiple-of rule when a larger co-scheduled
/// count is asked, so greenctx falls back to the co-scheduled count there. Not yet checked against
/// a 13.1 driver.)
void apply_group_defaults(std::span<sm_group_params> groups, const group_limits &limits);

/// Parses group parameters as the CLI takes them, groups separated by spaces or commas:
/// "16:cosched=2:pref=2 0:backfill". Each group is an SM count (0: discovery) followed by options:
/// `cosched=N`, `pref=N`, `backfill`. Unset fields stay 0 (defaults). Throws request_error
/// (CUDA_ERROR_INVALID_VALUE) naming the group and the item it could not read.
std::vector<sm_group_params> parse_group_params(std::string_view text);

/// "{16, 2, 2, 0}": the fields in cudaDevSmResourceGroupParams order.
std::string to_string(const sm_group_params &p);

/// Why `p` (with defaults already applied) breaks the smCount rule, or an empty string. Also used
/// by the split itself to explain a discovered or backfilled count.
std::string sm_count_problem(const sm_group_params &p, const group_limits &limits);

/// How many clusters of `coscheduled` SMs a group of `sms` SMs promises to run at once, the rule
/// both `greenctx split` and cudaGreenCtxCreate check with the occupancy calculator: every SM in a
/// whole co-scheduled unit (sms / coscheduled) for a group without Backfill, at least one with
/// Backfill. 0 when `coscheduled` is below 2 (no cluster promise).
unsigned clusters_promised(unsigned sms, unsigned coscheduled, bool backfill) noexcept;

} // namespace greenctx
