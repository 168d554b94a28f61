// SPDX-License-Identifier: Apache-2.0
// The arithmetic of SM partitions: minimum partition size, alignment and how a requested SM count
// becomes the count the driver hands out. Pure code: no driver, no GPU.
#pragma once

#include "greenctx/cxx_standard.hpp"

#include <optional>
#include <string>
#include <vector>

namespace greenctx {

/// Flags of a split by count (CUdevSmResourceSplit_flags).
enum class split_flags : unsigned {
  none = 0,
  /// Lower the minimum size and step to 2 SMs on CC 9.0+, giving up cluster guarantees.
  ignore_sm_coscheduling = 0x1,
  /// CC 9.0+: try to make groups that can run the largest clusters (driver 12.5+).
  max_potential_cluster_size = 0x2,
};
constexpr split_flags operator|(split_flags a, split_flags b) {
  return static_cast<split_flags>(static_cast<unsigned>(a) | static_cast<unsigned>(b));
}
constexpr split_flags operator&(split_flags a, split_flags b) {
  return static_cast<split_flags>(static_cast<unsigned>(a) & static_cast<unsigned>(b));
}
constexpr bool any(split_flags f) {
  return static_cast<unsigned>(f) != 0;
}

/// How SMs can be grouped on a device.
struct granularity {
  unsigned min_partition = 0; ///< smallest group the driver makes
  unsigned alignment = 0;     ///< group sizes are multiples of this

  friend bool operator==(const granularity &, const granularity &) = default;
};

/// The granularity the guide documents for a compute capability with default flags
/// (CC 7.x: 2/2, 8.x: 4/2, 9.0 and newer: 8/8), and with IgnoreSmCoscheduling on CC 9.0+
/// (2/2, as measured on the H200). Used where the driver (12.x) leaves the fields zero.
granularity documented_granularity(int cc_major, int cc_minor,
                                   split_flags flags = split_flags::none);

/// The granularity that applies to a split with `flags`, given what the driver reported for the
/// input with default flags.
granularity effective_granularity(granularity reported, int cc_major, split_flags flags);

/// A requested group size and what a split by count gives for it.
struct rounded_size {
  unsigned requested = 0; ///< minCount as asked
  unsigned size = 0;      ///< the size of each group the driver makes
  std::string reason;     ///< empty when size == requested, else why it changed
};

/// Rounds like cuDevSmResourceSplitByCount: up to a multiple of the alignment, at least the
/// minimum partition. Does not check against the SMs available.
rounded_size round_group_size(unsigned requested, granularity g);

/// As above, for a split of a resource of `available` SMs: a size that rounds past `available`
/// while the request fits becomes `available` (the whole resource is always a valid group:
/// measured minCount 132 -> 1 x 132 on the 132-SM H200).
rounded_size round_group_size(unsigned requested, granularity g, unsigned available);

/// The most groups of `size` SMs that `available` SMs can hold. The driver may give fewer: it
/// places groups on the GPU's clusters (measured on the 132-SM H200: 15 groups of 8, not 16).
unsigned max_groups(unsigned available, unsigned size);

/// The valid group sizes from the minimum partition up to `available`, in steps of the alignment,
/// with `available` itself last when it is not on a step (the whole resource is always valid).
/// describe_counts(valid_counts(available, g)), or "none (only N SMs)" when there is none.
std::string valid_sizes_summary(unsigned available, granularity g);

/// A list of counts for people: all of them up to six, else "8, 16, 24, ..., 128, 132".
std::string describe_counts(const std::vector<unsigned> &valid);

/// Every SM count that one group of a split of `available` SMs has exactly, ascending: the sizes
/// that round_group_size(n, g, available) leaves unchanged (the minimum partition, then steps of
/// the alignment, and `available` itself, which is always a valid group). Empty when `available`
/// is below the minimum partition.
std::vector<unsigned> valid_counts(unsigned available, granularity g);

/// The valid counts next to `n`: the largest below it and the smallest above it (n itself when it
/// is valid, in both).
struct neighbours {
  std::optional<unsigned> below, above;
};
neighbours nearest_valid(unsigned n, const std::vector<unsigned> &valid);

} // namespace greenctx
