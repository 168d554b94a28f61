// SPDX-License-Identifier: Apache-2.0
// The scaling measurement's pure parts (no GPU): which SM counts it measures, how it refuses or
// rounds the others, the speed-ups it reports; and the rounds every measurement takes its
// samples in (src/measure/sampling.hpp, private to the layer).
#include <greenctx/greenctx.hpp>

#include "measure/sampling.hpp"
#include "text_checks.hpp"

#include <gtest/gtest.h>

#include <string>

namespace greenctx::measure {
namespace {

const granularity h200{8, 8}; // CC 9.0: groups of 8, 16, ...; 132 SMs

using greenctx_test::contains;
using greenctx_test::rejection;

std::vector<unsigned> sms_of(const std::vector<scaling_count> &counts) {
  std::vector<unsigned> out;
  for (const auto &c : counts)
    out.push_back(c.sms);
  return out;
}

TEST(ScalingPlan, EverySizeWhenNoneIsNamed) {
  const auto all = plan_scaling({}, 132, h200);
  ASSERT_EQ(all.size(), 17u); // 8, 16, ..., 128 and the whole GPU
  EXPECT_EQ(all.front().sms, 8u);
  EXPECT_EQ(all[15].sms, 128u);
  EXPECT_EQ(all.back().sms, 132u);
  for (const auto &c : all) {
    EXPECT_EQ(c.requested, c.sms);
    EXPECT_TRUE(c.rounding.empty());
  }
}

TEST(ScalingPlan, NamedCountsAscendingAsTheyAre) {
  const auto c = plan_scaling({128, 16, 132, 64}, 132, h200);
  EXPECT_EQ(sms_of(c), (std::vector<unsigned>{16, 64, 128, 132}));
  EXPECT_EQ(c[0].requested, 16u);
}

TEST(ScalingPlan, ACountNoGreenContextHasIsRefusedWithItsNeighbours) {
  const std::string why = rejection([] { plan_scaling({16, 12}, 132, h200); });
  EXPECT_TRUE(contains(why, "not a multiple of the alignment 8"));
  EXPECT_TRUE(contains(why, "give 8 or 16"));
  EXPECT_TRUE(contains(why, "round_counts"));
  // Below the minimum partition: the only size next to it is above.
  const std::string small = rejection([] { plan_scaling({4}, 132, h200); });
  EXPECT_TRUE(contains(small, "below the minimum partition of 8"));
  EXPECT_TRUE(contains(small, "give 8,"));
}

TEST(ScalingPlan, RoundedWhenAskedAndSaidSo) {
  const auto c = plan_scaling({12, 130, 32}, 132, h200, true);
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[0].requested, 12u);
  EXPECT_EQ(c[0].sms, 16u);
  EXPECT_TRUE(contains(c[0].rounding, "rounded up to 16"));
  EXPECT_EQ(c[1].sms, 32u);
  EXPECT_TRUE(c[1].rounding.empty());
  EXPECT_EQ(c[2].requested, 130u); // a single partition may be the whole GPU
  EXPECT_EQ(c[2].sms, 132u);
  EXPECT_TRUE(contains(c[2].rounding, "all 132 SMs"));
}

TEST(ScalingPlan, OtherRefusals) {
  EXPECT_TRUE(contains(rejection([] { plan_scaling({0}, 132, h200); }), "0 SMs"));
  EXPECT_TRUE(contains(rejection([] {
                         plan_scaling({16, 32, 16}, 132, h200);
                       }),
                       "16 SMs is named twice (counts 1 and 3)"));
  EXPECT_TRUE(contains(rejection([] {
                         plan_scaling({10, 16}, 132, h200, true);
                       }),
                       "10 and 16 SMs both make green contexts of 16"));
  EXPECT_TRUE(contains(rejection([] { plan_scaling({}, 6, h200); }), "no green context"));
  // More SMs than the GPU has: the partition planner's own refusal.
  try {
    plan_scaling({200}, 132, h200);
    ADD_FAILURE() << "200 SMs of 132 planned";
  } catch (const request_error &e) {
    EXPECT_TRUE(contains(e.what(), "the GPU has 132"));
  }
}

scaling_point point(unsigned sms, double p50) {
  scaling_point p;
  p.requested = p.sms = sms;
  p.time.gpu.count = 10;
  p.time.gpu.p50 = p50;
  return p;
}

TEST(ScalingSpeedups, AgainstTheLargestCount) {
  // On 16 SMs the work takes 6 times as long as on 128, not 8 times: per SM, the 16 do more
  // (efficiency 8/6), as when the work cannot keep 128 SMs busy.
  std::vector<scaling_point> pts{point(16, 600), point(64, 200), point(128, 100)};
  EXPECT_EQ(scaling_speedups(pts), 128u);
  EXPECT_DOUBLE_EQ(pts[0].speedup, 100.0 / 600);
  EXPECT_DOUBLE_EQ(pts[0].ideal, 0.125);
  EXPECT_DOUBLE_EQ(pts[0].efficiency, (100.0 / 600) / 0.125);
  EXPECT_DOUBLE_EQ(pts[1].speedup, 0.5);
  EXPECT_DOUBLE_EQ(pts[1].ideal, 0.5);
  EXPECT_DOUBLE_EQ(pts[1].efficiency, 1);
  EXPECT_DOUBLE_EQ(pts[2].speedup, 1);
  EXPECT_DOUBLE_EQ(pts[2].ideal, 1);
}

TEST(ScalingSpeedups, UntimedPointsStayZero) {
  std::vector<scaling_point> pts{point(16, 600), point(128, 100)};
  pts[0].time.gpu.count = 0;
  scaling_speedups(pts);
  EXPECT_EQ(pts[0].speedup, 0);
  EXPECT_EQ(pts[0].efficiency, 0);
  EXPECT_DOUBLE_EQ(pts[0].ideal, 0.125);
  std::vector<scaling_point> none;
  EXPECT_EQ(scaling_speedups(none), 0u);
}

TEST(Rounds, SamplesSpreadOverRoundsWithTheWarmUpFirst) {
  const detail::rounds_plan r(1000, 50, 10);
  EXPECT_EQ(r.rounds, 10u);
  EXPECT_EQ(r.count(0), 100u);
  EXPECT_EQ(r.warmup_of(0), 50u);
  EXPECT_EQ(r.warmup_of(1), 5u);
  const detail::rounds_plan uneven(7, 2, 3); // 3 + 2 + 2, re-warm 2
  EXPECT_EQ(uneven.count(0) + uneven.count(1) + uneven.count(2), 7u);
  EXPECT_EQ(uneven.count(0), 3u);
  EXPECT_EQ(uneven.count(2), 2u);
  EXPECT_EQ(uneven.warmup_of(2), 2u);
  EXPECT_EQ(detail::rounds_plan(3, 0, 10).rounds, 3u); // at most one round per sample
  EXPECT_EQ(detail::rounds_plan(5, 0, 0).rounds, 1u);  // at least one
}

} // namespace
} // namespace greenctx::measure
