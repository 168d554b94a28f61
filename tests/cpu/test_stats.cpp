// SPDX-License-Identifier: Apache-2.0
// greenctx/measure/stats.hpp: order statistics of latency samples (header-only, pure).
#include <greenctx/measure/stats.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

namespace {

using greenctx::measure::percentile_sorted;
using greenctx::measure::quantile_interval;
using greenctx::measure::summarize;

// 1, 2, ..., n
std::vector<double> one_to(int n) {
  std::vector<double> out;
  for (int i = 1; i <= n; ++i)
    out.push_back(i);
  return out;
}

// ---- percentile_sorted -------------------------------------------------------------------------

TEST(PercentileSorted, EmptyIsZero) {
  EXPECT_EQ(percentile_sorted({}, 0.0), 0.0);
  EXPECT_EQ(percentile_sorted({}, 0.5), 0.0);
  EXPECT_EQ(percentile_sorted({}, 1.0), 0.0);
}

TEST(PercentileSorted, OneSampleIsEveryPercentile) {
  for (double q : {0.0, 0.5, 0.9, 0.99, 1.0})
    EXPECT_DOUBLE_EQ(percentile_sorted({7.5}, q), 7.5) << "q = " << q;
}

TEST(PercentileSorted, EndsAreMinimumAndMaximum) {
  const std::vector<double> v = {1, 3, 8, 20};
  EXPECT_DOUBLE_EQ(percentile_sorted(v, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(percentile_sorted(v, 1.0), 20.0);
}

TEST(PercentileSorted, ExactRankIsThatSample) {
  // Five samples: q = 0.25 is rank 1, q = 0.5 rank 2, q = 0.75 rank 3.
  const std::vector<double> v = {10, 20, 30, 40, 50};
  EXPECT_DOUBLE_EQ(percentile_sorted(v, 0.25), 20.0);
  EXPECT_DOUBLE_EQ(percentile_sorted(v, 0.50), 30.0);
  EXPECT_DOUBLE_EQ(percentile_sorted(v, 0.75), 40.0);
}

TEST(PercentileSorted, BetweenRanksInterpolatesLinearly) {
  // Four samples: the median is at rank 1.5, halfway between 2 and 4.
  EXPECT_DOUBLE_EQ(percentile_sorted({1, 2, 4, 8}, 0.5), 3.0);
  // Two samples: q = 0.9 is 90% of the way from 10 to 20.
  EXPECT_DOUBLE_EQ(percentile_sorted({10, 20}, 0.9), 19.0);
  // Rank 0.25 * 3 = 0.75 between 0 and 100.
  EXPECT_DOUBLE_EQ(percentile_sorted({0, 100, 200, 300}, 0.25), 75.0);
}

TEST(PercentileSorted, HighPercentilesOfOneToEleven) {
  const auto v = one_to(11);                          // ranks 0..10
  EXPECT_DOUBLE_EQ(percentile_sorted(v, 0.9), 10.0);  // rank 9
  EXPECT_DOUBLE_EQ(percentile_sorted(v, 0.99), 10.9); // rank 9.9
}

TEST(PercentileSorted, EqualSamplesGiveThatValue) {
  const std::vector<double> v(10, 4.25);
  for (double q : {0.0, 0.37, 0.5, 0.99, 1.0})
    EXPECT_DOUBLE_EQ(percentile_sorted(v, q), 4.25) << "q = " << q;
}

TEST(PercentileSorted, IsMonotoneInQ) {
  const std::vector<double> v = {0.5, 0.7, 0.7, 1.0, 3.0, 12.0, 13.5};
  double previous = percentile_sorted(v, 0.0);
  for (int i = 1; i <= 100; ++i) {
    const double now = percentile_sorted(v, i / 100.0);
    EXPECT_GE(now, previous) << "q = " << i / 100.0;
    previous = now;
  }
}

// ---- summarize ---------------------------------------------------------------------------------

TEST(Summarize, EmptyIsAllZero) {
  const auto s = summarize({});
  EXPECT_EQ(s.count, 0u);
  EXPECT_EQ(s.min, 0.0);
  EXPECT_EQ(s.p50, 0.0);
  EXPECT_EQ(s.p90, 0.0);
  EXPECT_EQ(s.p99, 0.0);
  EXPECT_EQ(s.max, 0.0);
  EXPECT_EQ(s.mean, 0.0);
}

TEST(Summarize, OneSample) {
  const auto s = summarize({42.0});
  EXPECT_EQ(s.count, 1u);
  EXPECT_DOUBLE_EQ(s.min, 42.0);
  EXPECT_DOUBLE_EQ(s.p50, 42.0);
  EXPECT_DOUBLE_EQ(s.p90, 42.0);
  EXPECT_DOUBLE_EQ(s.p99, 42.0);
  EXPECT_DOUBLE_EQ(s.max, 42.0);
  EXPECT_DOUBLE_EQ(s.mean, 42.0);
}

TEST(Summarize, OneToOneHundredAndOne) {
  // Ranks 0..100 hold 1..101: the percentiles fall on samples exactly.
  const auto s = summarize(one_to(101));
  EXPECT_EQ(s.count, 101u);
  EXPECT_DOUBLE_EQ(s.min, 1.0);
  EXPECT_DOUBLE_EQ(s.p50, 51.0);
  EXPECT_DOUBLE_EQ(s.p90, 91.0);
  EXPECT_DOUBLE_EQ(s.p99, 100.0);
  EXPECT_DOUBLE_EQ(s.max, 101.0);
  EXPECT_DOUBLE_EQ(s.mean, 51.0);
}

TEST(Summarize, SortsUnsortedSamples) {
  // 1..10 shuffled: p50 at rank 4.5 is 5.5, p90 at rank 8.1 is 9.1, p99 at rank 8.91 is 9.91.
  const auto s = summarize({7, 3, 10, 1, 9, 2, 8, 5, 4, 6});
  EXPECT_EQ(s.count, 10u);
  EXPECT_DOUBLE_EQ(s.min, 1.0);
  EXPECT_DOUBLE_EQ(s.max, 10.0);
  EXPECT_DOUBLE_EQ(s.p50, 5.5);
  EXPECT_NEAR(s.p90, 9.1, 1e-12);
  EXPECT_NEAR(s.p99, 9.91, 1e-12);
  EXPECT_DOUBLE_EQ(s.mean, 5.5);
}

TEST(Summarize, OneOutlierMovesTheTailAndTheMeanButNotTheMedian) {
  std::vector<double> v(99, 10.0);
  v.push_back(1000.0);
  const auto s = summarize(v);
  EXPECT_EQ(s.count, 100u);
  EXPECT_DOUBLE_EQ(s.p50, 10.0);
  EXPECT_DOUBLE_EQ(s.p90, 10.0);
  EXPECT_NEAR(s.p99, 10.0 + 0.01 * 990.0, 1e-9); // rank 98.01: 1% of the way to the outlier
  EXPECT_DOUBLE_EQ(s.max, 1000.0);
  EXPECT_DOUBLE_EQ(s.mean, 19.9);
}

TEST(Summarize, KeepsTheOrderOfMinP50P90P99Max) {
  const auto s = summarize({5.2, 0.1, 3.3, 9.9, 0.1, 7.0, 2.5, 40.0, 6.1});
  EXPECT_LE(s.min, s.p50);
  EXPECT_LE(s.p50, s.p90);
  EXPECT_LE(s.p90, s.p99);
  EXPECT_LE(s.p99, s.max);
  EXPECT_GE(s.mean, s.min);
  EXPECT_LE(s.mean, s.max);
}

TEST(Summarize, LeavesTheCallersSamplesAlone) {
  const std::vector<double> v = {3, 1, 2};
  summarize(v);
  EXPECT_EQ(v, (std::vector<double>{3, 1, 2}));
}

// ---- quantile_interval -------------------------------------------------------------------------

TEST(QuantileInterval, RanksAroundTheQuantile) {
  // n q = 990, 1.96 sqrt(n q (1 - q)) = 6.17: the 983rd and the 997th of 1000.
  const auto a = quantile_interval(one_to(1000), 0.99);
  EXPECT_EQ(a.low, 983);
  EXPECT_EQ(a.high, 997);
  // 300 samples: from the 293rd to the largest (rank 301 is past the end).
  const auto b = quantile_interval(one_to(300), 0.99);
  EXPECT_EQ(b.low, 293);
  EXPECT_EQ(b.high, 300);
  const auto none = quantile_interval({}, 0.99);
  EXPECT_EQ(none.low, 0);
  EXPECT_EQ(none.high, 0);
  const auto one = quantile_interval({7}, 0.99);
  EXPECT_EQ(one.low, 7);
  EXPECT_EQ(one.high, 7);
}

TEST(QuantileInterval, HoldsTheTrueQuantileAboutNineteenTimesInTwenty) {
  // Uniform samples on [0, 1): the true p99 is 0.99. Seeded: the same draws every run.
  std::mt19937_64 gen(27);
  std::uniform_real_distribution<double> u(0, 1);
  int held = 0;
  constexpr int trials = 2000;
  for (int t = 0; t < trials; ++t) {
    std::vector<double> v(1000);
    for (auto &x : v)
      x = u(gen);
    std::sort(v.begin(), v.end());
    const auto i = quantile_interval(v, 0.99);
    held += i.low <= 0.99 && 0.99 <= i.high;
  }
  EXPECT_GT(held, trials * 0.92);
  EXPECT_LT(held, trials * 0.985);
}

} // namespace
