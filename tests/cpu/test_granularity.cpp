// SPDX-License-Identifier: Apache-2.0
// granularity.hpp: the guide's granularity table and how a split by count rounds a group size.
// Expected values come from spec §3 (the guide's table) and §5 (measured on the 132-SM H200).
#include "greenctx/plan/granularity.hpp"

#include "text_checks.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

namespace {

using greenctx::granularity;
using greenctx::split_flags;
using greenctx_test::contains;
using greenctx_test::mentions_number;

constexpr granularity hopper{8, 8};      // CC 9.0, default flags
constexpr granularity hopper_fine{2, 2}; // CC 9.0 with IgnoreSmCoscheduling
constexpr granularity ampere{4, 2};      // CC 8.x

// ---- documented_granularity --------------------------------------------------------------------

TEST(DocumentedGranularity, Turing_7x_Is2By2) {
  EXPECT_EQ(greenctx::documented_granularity(7, 5), (granularity{2, 2}));
  EXPECT_EQ(greenctx::documented_granularity(7, 0), (granularity{2, 2}));
}

TEST(DocumentedGranularity, Ampere_8x_Is4By2) {
  EXPECT_EQ(greenctx::documented_granularity(8, 0), ampere);
  EXPECT_EQ(greenctx::documented_granularity(8, 6), ampere);
  EXPECT_EQ(greenctx::documented_granularity(8, 9), ampere);
}

TEST(DocumentedGranularity, Hopper_9_0_AndNewer_Is8By8) {
  EXPECT_EQ(greenctx::documented_granularity(9, 0), hopper);
  EXPECT_EQ(greenctx::documented_granularity(10, 0), hopper);
  EXPECT_EQ(greenctx::documented_granularity(11, 0), hopper);
  EXPECT_EQ(greenctx::documented_granularity(12, 0), hopper);
}

TEST(DocumentedGranularity, IgnoreSmCoschedulingGives2By2OnCc9AndNewer) {
  EXPECT_EQ(greenctx::documented_granularity(9, 0, split_flags::ignore_sm_coscheduling),
            hopper_fine);
  EXPECT_EQ(greenctx::documented_granularity(10, 0, split_flags::ignore_sm_coscheduling),
            hopper_fine);
  EXPECT_EQ(greenctx::documented_granularity(9, 0,
                                             split_flags::ignore_sm_coscheduling |
                                                 split_flags::max_potential_cluster_size),
            hopper_fine);
}

TEST(DocumentedGranularity, MaxPotentialClusterSizeAloneKeepsTheDefault) {
  // §5: MaxPotentialClusterSize gave the same counts as flags 0.
  EXPECT_EQ(greenctx::documented_granularity(9, 0, split_flags::max_potential_cluster_size),
            hopper);
}

TEST(EffectiveGranularity, IgnoreSmCoschedulingOverridesTheReportedValueOnCc9) {
  EXPECT_EQ(greenctx::effective_granularity(hopper, 9, split_flags::ignore_sm_coscheduling),
            hopper_fine);
  EXPECT_EQ(greenctx::effective_granularity(hopper, 9, split_flags::none), hopper);
}

// ---- round_group_size --------------------------------------------------------------------------

struct rounding_row {
  unsigned requested;
  unsigned expected;
};

void expect_rounding(const std::vector<rounding_row> &rows, granularity g) {
  for (const auto &row : rows) {
    SCOPED_TRACE("minCount " + std::to_string(row.requested));
    const auto r = greenctx::round_group_size(row.requested, g);
    EXPECT_EQ(r.requested, row.requested);
    EXPECT_EQ(r.size, row.expected);
  }
}

TEST(RoundGroupSize, MatchesTheH200SplitTable) {
  // §5, split by count with flags 0 on the 132-SM H200.
  std::vector<rounding_row> rows;
  for (unsigned n = 0; n <= 8; ++n)
    rows.push_back({n, 8});
  for (unsigned n = 10; n <= 16; ++n)
    rows.push_back({n, 16});
  rows.insert(rows.end(), {{24, 24}, {32, 32}, {40, 40}, {64, 64}, {66, 72}, {100, 104}});
  expect_rounding(rows, hopper);
}

TEST(RoundGroupSize, WholeDeviceIsNotARoundingRule) {
  // The driver gives 1 x 132 for minCount 132, but only because the whole resource is always a
  // valid group; that is the partition planner's rule. Plain rounding goes to the next step.
  EXPECT_EQ(greenctx::round_group_size(132, hopper).size, 136u);
}

TEST(RoundGroupSize, MatchesTheH200TableWithIgnoreSmCoscheduling) {
  // §5, IgnoreSmCoscheduling: minCount 3 -> 4, 10 -> 10, 66 -> 66, 100 -> 100.
  const granularity g = greenctx::documented_granularity(9, 0, split_flags::ignore_sm_coscheduling);
  expect_rounding({{3, 4}, {10, 10}, {66, 66}, {100, 100}}, g);
}

TEST(RoundGroupSize, AmpereMinimumIsFourAndStepIsTwo) {
  expect_rounding({{1, 4}, {3, 4}, {4, 4}, {5, 6}, {6, 6}, {7, 8}}, ampere);
}

TEST(RoundGroupSize, ReasonIsEmptyExactlyWhenTheSizeIsUnchanged) {
  for (const granularity g : {hopper, hopper_fine, ampere}) {
    for (unsigned n = 0; n <= 140; ++n) {
      SCOPED_TRACE("minCount " + std::to_string(n) + ", granularity " +
                   std::to_string(g.min_partition) + "/" + std::to_string(g.alignment));
      const auto r = greenctx::round_group_size(n, g);
      if (r.size == n) {
        EXPECT_TRUE(r.reason.empty()) << r.reason;
      } else {
        EXPECT_FALSE(r.reason.empty());
        EXPECT_TRUE(mentions_number(r.reason, r.size));
      }
    }
  }
}

TEST(RoundGroupSize, ReasonsForTypicalRequestsSayWhatTheyBecame) {
  const auto twelve = greenctx::round_group_size(12, hopper);
  EXPECT_TRUE(mentions_number(twelve.reason, 16));
  EXPECT_TRUE(mentions_number(twelve.reason, 12));

  const auto three = greenctx::round_group_size(3, hopper);
  EXPECT_TRUE(mentions_number(three.reason, 8));

  const auto zero = greenctx::round_group_size(0, hopper);
  EXPECT_TRUE(mentions_number(zero.reason, 8));
}

// ---- max_groups --------------------------------------------------------------------------------

TEST(MaxGroups, IsTheArithmeticUpperBound) {
  EXPECT_EQ(greenctx::max_groups(132, 8), 16u);
  EXPECT_EQ(greenctx::max_groups(132, 16), 8u);
  EXPECT_EQ(greenctx::max_groups(132, 24), 5u);
  EXPECT_EQ(greenctx::max_groups(132, 66), 2u);
  EXPECT_EQ(greenctx::max_groups(132, 132), 1u);
}

TEST(MaxGroups, IsZeroWhenNothingFits) {
  EXPECT_EQ(greenctx::max_groups(132, 136), 0u);
  EXPECT_EQ(greenctx::max_groups(0, 8), 0u);
  EXPECT_EQ(greenctx::max_groups(7, 8), 0u);
}

// ---- valid_sizes_summary -----------------------------------------------------------------------

// The whole numbers in `text`, in order.
std::vector<unsigned> numbers_in(const std::string &text) {
  std::vector<unsigned> out;
  for (std::size_t i = 0; i < text.size();) {
    if (!std::isdigit(static_cast<unsigned char>(text[i]))) {
      ++i;
      continue;
    }
    unsigned value = 0;
    for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i)
      value = value * 10 + static_cast<unsigned>(text[i] - '0');
    out.push_back(value);
  }
  return out;
}

TEST(ValidSizesSummary, H200ListsTheStepsAndTheWholeDeviceLast) {
  const std::string s = greenctx::valid_sizes_summary(132, hopper);
  const auto n = numbers_in(s);
  ASSERT_GE(n.size(), 4u) << s;
  EXPECT_EQ(n[0], 8u) << s;
  EXPECT_EQ(n[1], 16u) << s;
  EXPECT_EQ(n[n.size() - 2], 128u) << s; // the largest multiple of 8
  EXPECT_EQ(n.back(), 132u) << s;        // all SMs, always valid
}

TEST(ValidSizesSummary, EndsOnTheLastStepWhenTheDeviceIsOnAStep) {
  const std::string s = greenctx::valid_sizes_summary(128, hopper);
  const auto n = numbers_in(s);
  ASSERT_GE(n.size(), 2u) << s;
  EXPECT_EQ(n.front(), 8u) << s;
  EXPECT_EQ(n.back(), 128u) << s;
  EXPECT_FALSE(contains(s, "132"));
}

TEST(ValidSizesSummary, FineGranularityStartsAtTwo) {
  const std::string s = greenctx::valid_sizes_summary(132, hopper_fine);
  const auto n = numbers_in(s);
  ASSERT_GE(n.size(), 2u) << s;
  EXPECT_EQ(n.front(), 2u) << s;
  EXPECT_EQ(n.back(), 132u) << s;
}

TEST(ValidSizesSummary, TooFewSmsListsNoSize) {
  const std::string s = greenctx::valid_sizes_summary(4, hopper);
  EXPECT_FALSE(s.empty());
  for (unsigned v : numbers_in(s))
    EXPECT_LT(v, 8u) << "lists a size of " << v << ": " << s;
}

} // namespace

// ---- the sizes a split gives exactly (greenctx scale --sms checks against them)
// -------------------

TEST(ValidCounts, HopperStepsOfEightAndTheWholeGpu) {
  const auto v = greenctx::valid_counts(132, greenctx::granularity{8, 8});
  ASSERT_EQ(v.size(), 17u);
  EXPECT_EQ(v.front(), 8u);
  EXPECT_EQ(v[1], 16u);
  EXPECT_EQ(v[15], 128u);
  EXPECT_EQ(v.back(), 132u); // all SMs, off the step, is one group
  EXPECT_TRUE(std::is_sorted(v.begin(), v.end()));
}

TEST(ValidCounts, FinerGranularitiesAndSmallDevices) {
  const auto fine = greenctx::valid_counts(132, {2, 2}); // IgnoreSmCoscheduling on the H200
  EXPECT_EQ(fine.size(), 66u);
  EXPECT_EQ(fine.front(), 2u);
  const auto ampere = greenctx::valid_counts(108, {4, 2}); // CC 8.x: minimum 4, steps of 2
  EXPECT_EQ(ampere.front(), 4u);
  EXPECT_EQ(ampere[1], 6u);
  EXPECT_EQ(ampere.back(), 108u);
  const auto odd = greenctx::valid_counts(133, {2, 2});
  EXPECT_EQ(odd[odd.size() - 2], 132u);
  EXPECT_EQ(odd.back(), 133u);
  EXPECT_TRUE(greenctx::valid_counts(4, greenctx::granularity{8, 8}).empty());
  EXPECT_EQ(greenctx::valid_counts(8, greenctx::granularity{8, 8}), std::vector<unsigned>{8});
}
