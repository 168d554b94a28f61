// SPDX-License-Identifier: Apache-2.0
// Planning a set of disjoint SM partitions ("16,rest", "8,8,rest") from one split by count.
// Pure code: parsing, rounding and the choice of the piece, with explanations. The pieces each
// partition takes are assigned by the heterogeneous-split planner (group_plan.hpp), to which a
// plan is a list of group parameters and one unit; partition.hpp realises a plan on a GPU through
// the same planner.
#pragma once

#include "greenctx/cxx_standard.hpp"

#include "greenctx/plan/granularity.hpp"
#include "greenctx/plan/group_plan.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace greenctx {

/// What the user asked for: SM counts in order, and whether the SMs left over form a last
/// partition ("rest").
struct partition_request {
  std::vector<unsigned> counts;
  bool rest = false;

  /// "16,8,rest"
  std::string to_string() const;
};

/// Parses "16,rest", "8, 8, rest", "132". Counts are positive whole numbers; "rest" may appear
/// once, last. Throws request_error (CUDA_ERROR_INVALID_VALUE) with the offending item named.
partition_request parse_partition_request(std::string_view text);

/// How a request is made from a single split by count: `groups` pieces of `piece_size` SMs, with
/// the remainder as the "rest" partition. Pieces of one split call can share a descriptor (a
/// driver rule), so partitions of different sizes are built from several equal pieces.
struct partition_plan {
  struct part {
    unsigned requested = 0; ///< as asked; 0 for rest
    unsigned planned = 0;   ///< SMs it will get if the driver gives every piece (rest: at most)
    bool rest = false;
    unsigned first_piece = 0; ///< index of its first piece among the split's groups
    unsigned pieces = 0;      ///< number of consecutive pieces (0 for rest: it is the remainder)
    std::string rounding;     ///< why planned != requested, empty otherwise
  };
  std::vector<part> parts;
  unsigned piece_size = 0; ///< minCount of the split call
  unsigned groups = 0;     ///< pieces the partitions take (0: the whole device, no split)
  unsigned device_sms = 0;
  granularity grain;
  split_flags flags = split_flags::none;
};

/// Checks and plans a request for a resource of `sm_count` SMs. The split's piece is the greatest
/// common divisor of the sizes, or `piece_size` when given (not 0): then it must divide every
/// size and be at least the minimum partition (a pool makes all its layouts of one piece, see
/// pool_piece_size). Throws request_error when it cannot be made (too many SMs, nothing left for
/// rest, sizes with no common piece, a piece that does not divide them), saying why and what
/// would fit.
partition_plan plan_partitions(const partition_request &request, unsigned sm_count,
                               granularity grain, split_flags flags = split_flags::none,
                               unsigned piece_size = 0);

/// The plan's partitions other than "rest", as group parameters for the heterogeneous-split
/// planner (no clusters promised: co-scheduled count 2).
std::vector<sm_group_params> to_group_params(const partition_plan &plan);

/// The one unit of a plan's split: its piece size, with IgnoreSmCoscheduling when the plan's
/// flags have it.
split_unit split_unit_of(const partition_plan &plan);

} // namespace greenctx
