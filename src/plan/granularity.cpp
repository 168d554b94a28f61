// SPDX-License-Identifier: Apache-2.0
#include "greenctx/plan/granularity.hpp"

#include <algorithm>
#include <iterator>

namespace greenctx {

granularity documented_granularity(int cc_major, int cc_minor, split_flags flags) {
  (void)cc_minor; // the guide's table depends on the major version alone
  granularity g;
  if (cc_major >= 9)
    g = {8, 8};
  else if (cc_major == 8)
    g = {4, 2};
  else
    g = {2, 2};
  return effective_granularity(g, cc_major, flags);
}

granularity effective_granularity(granularity reported, int cc_major, split_flags flags) {
  // Measured on the H200 (CC 9.0, driver 580): IgnoreSmCoscheduling makes the step 2 and the
  // minimum 2 (minCount 3 -> groups of 4, 10 -> groups of 10). Below CC 9.0 the default is
  // already that fine, except CC 8.x's minimum of 4, which the flag is not documented to lower.
  if (any(flags & split_flags::ignore_sm_coscheduling) && cc_major >= 9)
    return {2, 2};
  return reported;
}

rounded_size round_group_size(unsigned requested, granularity g) {
  rounded_size r{requested, requested, {}};
  const unsigned step = std::max(1u, g.alignment);
  if (r.size % step)
    r.size += step - r.size % step;
  if (r.size < g.min_partition)
    r.size = g.min_partition;
  if (r.size != requested) {
    if (requested == 0)
      r.reason = "0 SMs asks for the smallest group: the minimum partition is " +
                 std::to_string(g.min_partition);
    else if (requested < g.min_partition)
      r.reason = std::to_string(requested) + " SMs is below the minimum partition of " +
                 std::to_string(g.min_partition);
    else
      r.reason = std::to_string(requested) + " SMs is not a multiple of the alignment " +
                 std::to_string(g.alignment) + ": rounded up to " + std::to_string(r.size);
  }
  return r;
}

rounded_size round_group_size(unsigned requested, granularity g, unsigned available) {
  rounded_size r = round_group_size(requested, g);
  if (r.size > available && requested <= available) {
    r.size = available;
    r.reason = requested == available
                   ? std::string()
                   : std::to_string(requested) + " SMs is not a multiple of the alignment " +
                         std::to_string(g.alignment) + ": the only group that large is all " +
                         std::to_string(available) + " SMs";
  }
  return r;
}

unsigned max_groups(unsigned available, unsigned size) {
  return size ? available / size : 0;
}

std::string valid_sizes_summary(unsigned available, granularity g) {
  const std::vector<unsigned> valid = valid_counts(available, g);
  if (valid.empty())
    return "none (only " + std::to_string(available) + " SMs)";
  return describe_counts(valid);
}

std::string describe_counts(const std::vector<unsigned> &valid) {
  std::string out;
  const std::size_t n = valid.size();
  for (std::size_t i = 0; i < n; ++i) {
    if (n > 6 && i == 3) { // the first three, "...", the last two
      out += ", ...";
      i = n - 3;
      continue;
    }
    out += (out.empty() ? "" : ", ") + std::to_string(valid[i]);
  }
  return out;
}

std::vector<unsigned> valid_counts(unsigned available, granularity g) {
  std::vector<unsigned> out;
  if (available < g.min_partition)
    return out;
  for (unsigned n = 1; n <= available; ++n)
    if (round_group_size(n, g, available).size == n)
      out.push_back(n);
  return out;
}

neighbours nearest_valid(unsigned n, const std::vector<unsigned> &valid) {
  neighbours out;
  const auto at = std::lower_bound(valid.begin(), valid.end(), n);
  if (at != valid.end() && *at == n)
    return {n, n};
  if (at != valid.begin())
    out.below = *std::prev(at);
  if (at != valid.end())
    out.above = *at;
  return out;
}

} // namespace greenctx
