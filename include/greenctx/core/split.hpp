// SPDX-License-Identifier: Apache-2.0
// Splitting an SM resource into equal groups (split by count); descriptors of the pieces are in
// descriptor.hpp, groups of different sizes in group_split.hpp.
#pragma once

#include "greenctx/cxx_standard.hpp"

#include "greenctx/plan/granularity.hpp"
#include "greenctx/plan/resource.hpp"

#include <cuda.h>

#include <span>
#include <string>
#include <vector>

namespace greenctx {

/// What cuDevSmResourceSplitByCount gave.
struct split_result {
  std::vector<sm_resource> groups; ///< equal groups, possibly fewer than requested
  sm_resource remainder;           ///< the SMs left over (may be empty)
  unsigned requested_groups = 0;
  rounded_size size; ///< the asked minCount and the size each group got
  split_flags flags = split_flags::none;

  /// One line for people: "asked 2 groups of >= 12 SMs: got 2 x 16 (12 SMs is not a multiple
  /// of ...), 100 SMs left".
  std::string explanation() const;
};

/// Splits `input` into up to `groups` groups of at least `min_count` SMs each, plus a remainder
/// (cuDevSmResourceSplitByCount). Sizes are rounded up to the granularity (see
/// round_group_size); when the SMs run out the driver gives fewer groups, without error.
/// Throws request_error when `groups` is 0 or `min_count` exceeds the input's SMs (with the valid
/// sizes), unsupported_error for flags the driver lacks, error for driver failures.
///
/// Measured on the H200 (driver 580): a raw split output cannot be split again (915); split the
/// resource read back from a green context made of it instead.
split_result split_by_count(const sm_resource &input, unsigned groups, unsigned min_count,
                            split_flags flags = split_flags::none);

/// How many groups of at least `min_count` SMs `input` would give (the driver's count-only query,
/// result == NULL). Throws like split_by_count.
unsigned count_groups(const sm_resource &input, unsigned min_count,
                      split_flags flags = split_flags::none);

} // namespace greenctx
