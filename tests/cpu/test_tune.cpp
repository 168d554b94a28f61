// SPDX-License-Identifier: Apache-2.0
// The split search of `tune` over synthetic curves (no GPU): what it chooses, against the
// exhaustive answer, and what it costs in measurements.
#include <greenctx/greenctx.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>

namespace greenctx::measure {
namespace {

// A measurement of a made-up workload pair: p99(n) and rate(n), exact.
struct curve {
  std::function<double(unsigned)> p99, rate;
  unsigned calls = 0;
  unsigned long samples = 0;
  tune_measure_fn fn() {
    return [this](unsigned n, unsigned count) {
      ++calls;
      samples += count;
      tune_point p;
      p.critical.count = count;
      p.critical.p99 = p99(n);
      p.background_rate = rate(n);
      p.background_sms = 132 - n;
      return p;
    };
  }
};

const std::vector<unsigned> sizes = [] {
  std::vector<unsigned> s;
  for (unsigned n = 8; n <= 128; n += 8) // the H200's: 8 to 128 in steps of 8
    s.push_back(n);
  return s;
}();

tune_config with(tune_goal goal, double value) {
  tune_config cfg;
  cfg.objective = {goal, value};
  return cfg;
}

// The critical p99 falls as its SMs grow; the background's rate falls with them.
curve falling() {
  return {[](unsigned n) { return 20.0 + 800.0 / n; }, [](unsigned n) { return 132.0 - n; }};
}

TEST(Tune, GuidedFindsTheExhaustiveAnswerWithFewerMeasurements) {
  // p99 <= 60 us: 800/n <= 40 from n = 20, so 24 is the smallest size that meets it.
  for (const auto &cfg :
       {with(tune_goal::p99_at_most_us, 60), with(tune_goal::p99_at_most_times_alone, 2.0),
        with(tune_goal::smallest_within_best, 0.5)}) {
    curve g = falling(), e = falling();
    const tune_answer guided = search_split(sizes, cfg, 30, false, g.fn());
    const tune_answer exhaustive = search_split(sizes, cfg, 30, true, e.fn());
    ASSERT_TRUE(guided.chosen) << cfg.objective.describe() << ": " << guided.reason;
    EXPECT_EQ(guided.chosen, exhaustive.chosen) << cfg.objective.describe();
    EXPECT_EQ(e.calls, sizes.size());
    EXPECT_LE(g.calls, e.calls / 2) << cfg.objective.describe();
    EXPECT_LT(g.samples * 100, e.samples * 35) << cfg.objective.describe(); // target: 35%
    EXPECT_EQ(guided.measured.size(), g.calls);
  }
  curve c = falling();
  const auto a = search_split(sizes, with(tune_goal::p99_at_most_us, 60), 30, false, c.fn());
  EXPECT_EQ(a.chosen, 24u);
  EXPECT_DOUBLE_EQ(a.limit_us, 60);
  EXPECT_NE(a.reason.find("24 SMs: critical p99"), std::string::npos) << a.reason;
  // 2 x the alone p99 of 30 us is the same bound.
  c = falling();
  EXPECT_EQ(
      search_split(sizes, with(tune_goal::p99_at_most_times_alone, 2), 30, false, c.fn()).limit_us,
      60);
}

TEST(Tune, TheMostBackgroundWorkWinsAmongSplitsThatMeetTheObjective) {
  // Whole waves: the background runs faster on 100 SMs (32,rest) than on 108 (24,rest).
  curve c = falling();
  c.rate = [](unsigned n) { return n == 32 ? 200.0 : 132.0 - n; };
  curve e = c;
  const auto cfg = with(tune_goal::p99_at_most_us, 60);
  EXPECT_EQ(search_split(sizes, cfg, 30, false, c.fn()).chosen, 32u);
  EXPECT_EQ(search_split(sizes, cfg, 30, true, e.fn()).chosen, 32u);
  // The smallest partition is what smallest_within_best asks for, whatever the rate.
  curve s = c;
  const auto within =
      search_split(sizes, with(tune_goal::smallest_within_best, 1.5), 30, false, s.fn());
  // The best p99 is 26.25 us (128 SMs); 2.5 x that is 65.6: 16 SMs give 70, 24 give 53.3.
  EXPECT_EQ(within.chosen, 24u) << within.reason;
}

TEST(Tune, NoSplitMeetingTheObjectiveIsSaidWithTheClosest) {
  for (bool exhaustive : {false, true}) {
    curve c = falling();
    const auto a = search_split(sizes, with(tune_goal::p99_at_most_us, 10), 30, exhaustive, c.fn());
    EXPECT_FALSE(a.chosen);
    EXPECT_EQ(a.closest, 128u);
    EXPECT_EQ(a.reason.rfind("no split meets critical p99 <= 10 us", 0), 0u) << a.reason;
  }
}

TEST(Tune, ConfirmingWithMoreSamplesCorrectsAMisleadingSearchSample) {
  // With the search's few samples 16 SMs look fast enough; confirmed, they are not.
  curve c = falling();
  const auto inner = c.fn();
  const tune_measure_fn noisy = [&](unsigned n, unsigned count) {
    tune_point p = inner(n, count);
    if (n == 16 && count < 1000)
      p.critical.p99 = 40;
    return p;
  };
  const auto a = search_split(sizes, with(tune_goal::p99_at_most_us, 60), 30, false, noisy);
  EXPECT_EQ(a.chosen, 24u) << a.reason;
}

TEST(Tune, AFixedBoundMeasuresTheLargestSplitOnlyWhenNothingSmallerMeetsIt) {
  // The largest split leaves the background the fewest SMs: its kernels, sized for the whole GPU,
  // run longest there, and a measurement waits for them (on the H200, 3 s of a 4 s tune).
  const auto sizes_measured = [](const tune_answer &a) {
    std::vector<unsigned> out;
    for (const auto &p : a.measured)
      out.push_back(p.critical_sms);
    return out;
  };
  curve c = falling();
  const auto met = search_split(sizes, with(tune_goal::p99_at_most_us, 60), 30, false, c.fn());
  EXPECT_EQ(met.chosen, 24u);
  const auto measured = sizes_measured(met);
  EXPECT_EQ(std::count(measured.begin(), measured.end(), 128u), 0) << met.reason;
  curve none = falling();
  const auto missed =
      search_split(sizes, with(tune_goal::p99_at_most_us, 10), 30, false, none.fn());
  EXPECT_EQ(missed.closest, 128u);
  EXPECT_EQ(sizes_measured(missed).back(), 128u);
  EXPECT_EQ(missed.measured.back().critical.count, tune_config{}.confirm_samples);
  // "Within X of the best" is anchored by the largest split: measured first.
  curve w = falling();
  const auto within =
      search_split(sizes, with(tune_goal::smallest_within_best, 0.5), 30, false, w.fn());
  EXPECT_EQ(sizes_measured(within).front(), 128u);
}

TEST(Tune, ParetoFrontKeepsWhatNothingBeatsOnBoth) {
  std::vector<tune_point> curve_points;
  const auto point = [](unsigned n, double p99, double rate) {
    tune_point p;
    p.critical_sms = n;
    p.critical.p99 = p99;
    p.background_rate = rate;
    return p;
  };
  curve_points = {point(8, 90, 120), point(16, 50, 110), point(24, 50, 100), point(32, 40, 105)};
  EXPECT_EQ(pareto_front(curve_points), (std::vector<unsigned>{8, 16, 32}));
}

TEST(Tune, CandidatesAreTheSizesTheGpuMakesAsNRest) {
  CUdevResource raw{};
  raw.type = CU_DEV_RESOURCE_TYPE_SM;
  raw.sm.smCount = 132;
  const sm_resource h200(raw, 0, granularity{8, 8}, 9);
  EXPECT_EQ(tune_candidates(h200), sizes);
  raw.sm.smCount = 16;
  EXPECT_EQ(tune_candidates(sm_resource(raw, 0, granularity{8, 8}, 9)), (std::vector<unsigned>{8}));
}

TEST(Tune, SizesAreTheValidOnesAskedForOrAllOfThem) {
  tune_config cfg;
  EXPECT_EQ(tune_sizes(cfg, {8, 16}), (std::vector<unsigned>{8, 16}));
  cfg.sizes = {16, 8, 16};
  EXPECT_EQ(tune_sizes(cfg, {8, 16, 24}), (std::vector<unsigned>{8, 16}));
  cfg.sizes = {12};
  try {
    tune_sizes(cfg, {8, 16});
    ADD_FAILURE() << "12 is not a size of 8,16";
  } catch (const request_error &e) {
    EXPECT_NE(std::string(e.what()).find("the critical sizes it makes are 8,16"), std::string::npos)
        << e.what();
  }
  cfg.sizes = {};
  EXPECT_THROW(tune_sizes(cfg, {}), request_error);
}

// run_tune, the tune over a measurement it is given (tune --comm's children): both searches, the
// repeat of the choice, the curve of every size, the Pareto front and a progress line each.
TEST(Tune, OverAnyMeasurementItFillsTheCurveTheRepeatAndTheFront) {
  tune_result r;
  r.cfg = with(tune_goal::p99_at_most_us, 60);
  r.cfg.search = tune_search::both;
  r.candidates = sizes;
  r.alone.p99 = 30;
  curve c = falling();
  const tune_measure_fn base = c.fn();
  std::vector<std::string> lines;
  run_tune(
      r,
      [&](unsigned n, unsigned count) {
        tune_point p = base(n, count);
        p.critical_sms = n;
        return p;
      },
      [&](const std::string &line) { lines.push_back(line); });
  ASSERT_TRUE(r.guided && r.exhaustive);
  EXPECT_EQ(r.split(), "24,rest") << r.answer().reason;
  EXPECT_EQ(r.guided->chosen, 24u) << r.guided->reason;
  EXPECT_EQ(r.curve.size(), sizes.size()); // the exhaustive search measured every size
  ASSERT_TRUE(r.repeat);
  EXPECT_EQ(r.repeat->critical_sms, 24u);
  EXPECT_TRUE(r.repeat_meets);
  EXPECT_EQ(r.pareto.size(), sizes.size()); // p99 and rate both fall: nothing beats anything
  EXPECT_EQ(lines.size(), c.calls + 1);     // one per measurement, one before the repeat
  EXPECT_NE(lines.front().find("measurement 1 of about"), std::string::npos) << lines.front();
  EXPECT_EQ(lines[lines.size() - 2], "the chosen split once more");
}

TEST(Tune, ObjectivesDescribeThemselves) {
  EXPECT_EQ((tune_objective{tune_goal::p99_at_most_us, 40}).describe(), "critical p99 <= 40 us");
  EXPECT_EQ((tune_objective{tune_goal::p99_at_most_times_alone, 1.5}).describe(),
            "critical p99 <= 1.5 x its p99 alone on the whole GPU");
  EXPECT_EQ((tune_objective{tune_goal::smallest_within_best, 0.1}).describe(),
            "the smallest critical partition with p99 within 10% of the best split's");
}

} // namespace
} // namespace greenctx::measure
