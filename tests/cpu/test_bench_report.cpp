// SPDX-License-Identifier: Apache-2.0
// The bench (latency) report on synthetic results and on a real run's record: the targets, the
// record in every format (pure code).
#include "commands/bench/latency_record.hpp"
#include "saved_results.hpp"
#include "text_checks.hpp"
#include "golden_record.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>

namespace greenctx::cli::bench {
namespace {

using greenctx_test::contains;
using greenctx_test::saved_record;

critical_stats series(double base, std::size_t n = 100) {
  critical_stats c;
  for (std::size_t i = 0; i < n; ++i) {
    c.host_us.push_back(base + static_cast<double>(i % 10));
    c.gpu_us.push_back(base - 5 + static_cast<double>(i % 10));
    c.start_delay_us.push_back(static_cast<double>(i % 4));
  }
  c.host = measure::summarize(c.host_us);
  c.gpu = measure::summarize(c.gpu_us);
  c.start_delay = measure::summarize(c.start_delay_us);
  return c;
}

results synthetic(double green_p99_base, double background_work) {
  results r;
  r.device_sms = 132;
  r.critical_sms = 16;
  r.background_sms = 116;
  r.background_unit = "blocks/s";
  r.background_full = {1000, 1.0};
  r.background_share = {870, 1.0};
  r.background_shape = "synthetic";
  r.placements = {
      {"alone", "critical alone, whole GPU", false, series(30), std::nullopt},
      {"alone_green", "critical alone in its 16-SM green context", false, series(30), std::nullopt},
      {"shared", "shared GPU", false, series(12000), background_rate{1000, 1.0}},
      {"priority", "priority", false, series(200), background_rate{990, 1.0}},
      {"green", "green contexts", false, series(green_p99_base),
       background_rate{background_work, 1.0}},
      {"trap", "TRAP <&>", true, series(12000), background_rate{1000, 1.0}},
  };
  return r;
}

const nlohmann::json env{{"gpu", "Test GPU"}, {"driver_version", "13.0"}, {"date", "today"}};

const target &named(const std::vector<target> &t, const std::string &name) {
  return *std::find_if(t.begin(), t.end(), [&](const target &x) { return x.name == name; });
}

TEST(BenchReport, TargetsMetWhenGreenMatchesAloneAndKeepsItsShare) {
  const auto t = evaluate_targets(synthetic(30, 870));
  EXPECT_TRUE(named(t, "isolation").met());
  EXPECT_NEAR(named(t, "isolation").value, 1.0, 1e-9);
  EXPECT_TRUE(named(t, "green_vs_priority").met());
  EXPECT_NEAR(named(t, "background_share").value, 870.0 / 1000 / (116.0 / 132), 1e-9);
  EXPECT_TRUE(named(t, "background_share").met());
  EXPECT_TRUE(targets_met(bench_record(synthetic(30, 870), env)));
}

// Alone samples whose p99 rests on a few slow ones: resampling moves it, and the isolation limit
// rises to what it moves by; a larger difference still misses.
TEST(BenchReport, IsolationLimitIsWhatTheSamplesCanShow) {
  results r = synthetic(30, 870);
  critical_stats &alone = *r.placements[1].critical;
  for (std::size_t i = 0; i < alone.host_us.size(); i += 50)
    alone.host_us[i] = 45 + static_cast<double>(i) / 10; // two slow samples of 100: 45 and 50
  alone.host = measure::summarize(alone.host_us);
  const double noise = measure::p99_ratio_noise(alone.host_us);
  EXPECT_GT(noise, 1.05);
  EXPECT_EQ(noise, measure::p99_ratio_noise(alone.host_us)); // the same bound every time
  critical_stats &green = *r.placements[4].critical;
  green.host_us = alone.host_us;
  for (double &x : green.host_us)
    x *= 1.04;
  green.host = measure::summarize(green.host_us);
  const target iso = named(evaluate_targets(r), "isolation");
  EXPECT_NEAR(iso.value, 1.04, 1e-9);
  EXPECT_EQ(iso.limit, noise);
  EXPECT_TRUE(iso.met());
  for (double &x : green.host_us)
    x *= 1.5;
  green.host = measure::summarize(green.host_us);
  EXPECT_FALSE(named(evaluate_targets(r), "isolation").met());
}

// Where the critical stream at the highest priority in its green context was measured, isolation
// is judged there (where greenctx advises the critical work to run), not on the plain green one.
TEST(BenchReport, IsolationIsJudgedOnThePriorityStreamWhereItWasMeasured) {
  results r = synthetic(40, 870); // the plain green placement: p99 40 against 30 alone, a miss
  EXPECT_FALSE(named(evaluate_targets(r), "isolation").met());
  r.placements.insert(r.placements.begin() + 5, {"green_priority", "green contexts + priority",
                                                 false, series(30), background_rate{870, 1.0}});
  const target iso = named(evaluate_targets(r), "isolation");
  EXPECT_NEAR(iso.value, 1.0, 1e-9);
  EXPECT_TRUE(iso.met());
  r.placements[5].critical = series(40);
  EXPECT_FALSE(named(evaluate_targets(r), "isolation").met());
}

TEST(BenchReport, P99RatioNoiseOfConstantSamplesIsOne) {
  EXPECT_EQ(measure::p99_ratio_noise(std::vector<double>(50, 7.0)), 1.0);
  EXPECT_EQ(measure::p99_ratio_noise({}), 0.0);
}

TEST(BenchReport, TargetsMissedAreReportedAsMissed) {
  const auto t = evaluate_targets(synthetic(40, 700));
  EXPECT_FALSE(named(t, "isolation").met()) << named(t, "isolation").value;
  EXPECT_FALSE(named(t, "background_share").met());
  const report::record rec = bench_record(synthetic(40, 700), env);
  greenctx_test::expect_golden_record(rec, "bench-latency-missed");
  EXPECT_FALSE(targets_met(rec));
  const report::series &targets = *rec.table("targets");
  ASSERT_EQ(targets.rows.size(), 3u);
  EXPECT_EQ(targets.rows[0][targets.index("met")], report::cell{std::string("NO")});
  EXPECT_EQ(targets.rows[1][targets.index("met")], report::cell{std::string("yes")});
  const std::string text = report::to_text(rec);
  EXPECT_TRUE(contains(text, "every target met: no")) << text;
  EXPECT_TRUE(contains(text, "targets: NOT met: isolation, background_share")) << text;
}

TEST(BenchReport, MissingPlacementsMakeTargetsUnavailableNotMet) {
  results r = synthetic(30, 870);
  r.placements.erase(r.placements.begin() + 4); // no "green"
  for (const auto &t : evaluate_targets(r)) {
    EXPECT_FALSE(t.available) << t.name;
    EXPECT_FALSE(t.met()) << t.name;
  }
  const report::record rec = bench_record(r, env);
  EXPECT_FALSE(targets_met(rec));
  const report::series &targets = *rec.table("targets");
  for (const auto &row : targets.rows) {
    EXPECT_EQ(row[targets.index("met")], report::cell{std::string("n/a")});
    EXPECT_EQ(row[targets.index("value")], report::cell{});
  }
}

TEST(BenchReport, RecordCarriesEveryPlacementAndEverySample) {
  const report::record rec = bench_record(synthetic(31, 860), env);
  greenctx_test::expect_golden_record(rec, "bench-latency");
  EXPECT_EQ(rec.kind, "bench");
  EXPECT_EQ(rec.schema, 2);
  const std::string text = report::to_text(rec);
  const report::series &placements = *rec.table("placements");
  ASSERT_EQ(placements.rows.size(), 6u);
  for (const auto &row : placements.rows)
    EXPECT_TRUE(contains(text, std::get<std::string>(row[placements.index("description")])));
  // 30..39 ten times: p99 of 100 is 39, the noise 100 x stdev / mean.
  EXPECT_EQ(placements.rows[0][placements.index("host_p99_us")], report::cell{39.0});
  EXPECT_EQ(placements.rows[0][placements.index("background_rate")], report::cell{});
  EXPECT_EQ(placements.rows[2][placements.index("of_full")], report::cell{1.0});
  EXPECT_TRUE(contains(text, "isolation")) << text;
  EXPECT_TRUE(contains(text, "background alone on its 116 SMs: 870 blocks/s")) << text;

  // The raw samples: the CSV as before (placement,sample,host_us,gpu_us,start_delay_us), not
  // listed in the text, named with their count in markdown.
  const std::string csv = report::to_csv(rec);
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 1 + 6 * 100);
  EXPECT_EQ(csv.rfind("placement,sample,host_us,gpu_us,start_delay_us\n", 0), 0u) << csv;
  EXPECT_TRUE(contains(csv, "\ngreen,99,40,35,3\n")) << csv.substr(0, 200);
  EXPECT_FALSE(contains(text, "green,99"));
  EXPECT_TRUE(
      contains(report::to_markdown(rec), "600 rows (samples), in the JSON file and the CSV"));

  const auto j = report::to_json(rec);
  EXPECT_EQ(j["tables"]["samples"]["rows"].size(), 600u);
  EXPECT_EQ(j["tables"]["samples"]["raw"], true);
  // Isolation 40 / 39 = 1.026: over 1.02, and these alone samples (30..39, ten times each) hardly
  // move their p99 when resampled, so the limit stays 1.02.
  EXPECT_EQ(j["values"]["targets_met"]["value"], "no");
  const report::record back = report::from_json(nlohmann::ordered_json::parse(j.dump()));
  EXPECT_EQ(report::to_json(back), j);
  EXPECT_EQ(report::to_text(back), text);
  EXPECT_EQ(report::to_csv(back), csv);
}

TEST(BenchReport, SvgDrawsTheDistributionsAndTheBackground) {
  const std::string svg = report::to_svg(bench_record(synthetic(31, 860), env));
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_EQ(svg.substr(svg.size() - 7), "</svg>\n");
  EXPECT_TRUE(contains(svg, "TRAP &lt;&amp;&gt;")) << "text is not escaped";
  EXPECT_FALSE(contains(svg, "TRAP <&>"));
  EXPECT_TRUE(contains(svg, "log scale"));
  EXPECT_TRUE(contains(svg, "p99 39.0")); // each box labelled with its p99
  EXPECT_TRUE(contains(svg, "SM share"));
  if (const char *out = std::getenv("GREENCTX_TEST_SVG")) // for looking at the picture by hand
    std::ofstream(out) << svg;
}

// How the background was fed is in the record; on the terminal only where it had its own thread.
TEST(BenchReport, ConfigSaysWhetherTheBackgroundHadAThreadOfItsOwn) {
  results r = synthetic(30, 870);
  for (const bool threaded : {false, true}) {
    r.cfg.background_thread = threaded;
    const report::record rec = bench_record(r, env);
    const report::quantity *q = rec.find("background_thread");
    ASSERT_NE(q, nullptr);
    EXPECT_EQ(q->value, report::cell{std::string(threaded ? "yes" : "no")});
    EXPECT_EQ(q->detail, !threaded);
    EXPECT_EQ(contains(report::to_text(rec), "background fed from its own thread"), threaded);
  }
}

// A default run of the H200 (tests/data/bench-latency.json): it reads back to the same JSON,
// renders in every format, and says which targets it met.
TEST(BenchReport, ARealRunReadsBack) {
  const auto j = saved_record("bench-latency.json");
  const report::record rec = report::from_json(j);
  EXPECT_EQ(report::to_json(rec), j);
  ASSERT_EQ(rec.table("placements")->rows.size(), 7u);
  const report::series &targets = *rec.table("targets");
  EXPECT_EQ(targets.rows[0][targets.index("target")], report::cell{std::string("isolation")});
  EXPECT_NEAR(std::get<double>(targets.rows[0][targets.index("value")]), 0.935, 0.0005);
  EXPECT_TRUE(targets_met(rec));
  EXPECT_EQ(rec.find("gpu")->value, report::cell{std::string("NVIDIA H200")});
  EXPECT_TRUE(contains(report::to_text(rec), "targets: all 3 met")) << report::to_text(rec);
  EXPECT_FALSE(report::to_svg(rec).empty());
  EXPECT_TRUE(contains(report::to_csv(rec), "placement,sample,host_us,gpu_us,start_delay_us\n"));
}

} // namespace
} // namespace greenctx::cli::bench
