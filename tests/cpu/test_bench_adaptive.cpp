// SPDX-License-Identifier: Apache-2.0
// greenctx bench --adaptive without a GPU: option lists, validation under the options' names, the
// record on synthetic results and on a real run's record (pure code). The
// policies, their schedule and the verdicts are the library's: tests/cpu/test_adaptive.cpp.
#include "commands/bench/adaptive.hpp"
#include "commands/bench/latency_record.hpp"
#include "saved_results.hpp"
#include "text_checks.hpp"
#include "golden_record.hpp"

#include <greenctx/plan/error.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>

namespace greenctx::cli::bench::adaptive {
namespace {

using greenctx_test::contains;
using greenctx_test::rejection;

TEST(AdaptiveOptions, ShrinkToList) {
  EXPECT_EQ(parse_shrink_to("8,16,32,64"), (std::vector<unsigned>{8, 16, 32, 64}));
  EXPECT_EQ(parse_shrink_to(" 24 "), (std::vector<unsigned>{24}));
  EXPECT_NE(rejection([] { parse_shrink_to(""); }).find("--shrink-to is empty"), std::string::npos);
  EXPECT_NE(rejection([] { parse_shrink_to("8,,16"); }).find("entry 2"), std::string::npos);
  EXPECT_NE(rejection([] { parse_shrink_to("0"); }).find("--shrink-to"), std::string::npos);
  EXPECT_NE(rejection([] { parse_shrink_to("8,x"); }).find("e.g. --shrink-to 8,16,32,64"),
            std::string::npos);
  EXPECT_NE(rejection([] { parse_shrink_to("16,16"); }).find("lists 16 twice"), std::string::npos);
  EXPECT_NE(rejection([] { parse_shrink_to("5000"); }).find("entry 1"), std::string::npos);
}

TEST(AdaptiveOptions, PoliciesAreNamedByTheirOption) {
  EXPECT_EQ(parse_policies("reactive,lead-wait"),
            (std::vector<policy>{policy::reactive, policy::lead_wait}));
  EXPECT_EQ(
      rejection([] { parse_policies("eager"); }).rfind("--policies: 'eager' is not one of", 0), 0u);
}

TEST(AdaptiveOptions, ValidateAgainstTheDevice) {
  config cfg; // the defaults: 16 critical SMs, N in 8..64, lead 100 us, gap 300 us, 64 MiB
  EXPECT_NO_THROW(validate(cfg, 132));
  cfg.shrink_to = {116};
  const std::string wide = rejection([&] { validate(cfg, 132); });
  EXPECT_NE(wide.find("give N below 116"), std::string::npos) << wide;
  cfg.shrink_to = {115};
  EXPECT_NO_THROW(validate(cfg, 132));
  cfg.gap = std::chrono::microseconds(300); // jittered +-50%: the shortest gap is 150 us
  cfg.lead = std::chrono::microseconds(149);
  EXPECT_NO_THROW(validate(cfg, 132));
  cfg.lead = std::chrono::microseconds(150);
  const std::string lead = rejection([&] { validate(cfg, 132); });
  EXPECT_EQ(lead.rfind("--lead-us: a lead of 150 us", 0), 0u) << lead;
  EXPECT_NE(lead.find("(150 us, half of --gap-us 300)"), std::string::npos) << lead;
  EXPECT_NE(lead.find("a longer --gap-us"), std::string::npos) << lead;
  cfg.policies = {policy::reactive}; // no lead used: any lead is accepted
  EXPECT_NO_THROW(validate(cfg, 132));
  cfg.chunk_bytes = std::size_t{1} << 20; // 1056 blocks x 256 threads x 16 B = 4.1 MiB at least
  const std::string chunk = rejection([&] { validate(cfg, 132); });
  EXPECT_NE(chunk.find("give at least 5 MiB"), std::string::npos) << chunk;
  cfg.chunk_bytes = std::size_t{5} << 20;
  EXPECT_NO_THROW(validate(cfg, 132));
  cfg.queue_depth = 0;
  EXPECT_NE(rejection([&] { validate(cfg, 132); }).find("--queue-depth"), std::string::npos);
}

critical_stats series(double base, double spike, std::size_t n = 100) {
  critical_stats c;
  for (std::size_t i = 0; i < n; ++i) {
    c.host_us.push_back(i + 1 == n ? spike : base);
    c.gpu_us.push_back(base - 2);
  }
  c.host = summarize(c.host_us);
  c.gpu = summarize(c.gpu_us);
  return c;
}

results synthetic() {
  results r;
  r.device_sms = 132;
  r.critical_sms_obtained = 16;
  r.wide_sms_obtained = 116;
  r.narrow_sms_obtained = {16, 64};
  r.critical_shared = true;
  r.critical_sharing = "one green context";
  r.cfg.shrink_to = {16, 64};
  r.cfg.policies = {policy::lead};
  r.alone = {{116, {3.6e12, 1}}, {16, {1.2e12, 1}}, {64, {3.3e12, 1}}};
  // p99 of 99 x base and one spike (rank 98.01 of 0..99, linear): base + 0.01 x (spike - base)
  r.configurations = {
      {"alone", "alone", 0, "", series(40, 40), std::nullopt, {}},
      {"static", "static", 0, "", series(40, 6340), background_rate{3.5e12, 1}, {}},
      {"adaptive-16-lead",
       "adaptive 16",
       16,
       "lead",
       series(40, 540),
       background_rate{2.1e12, 1},
       {}},
      {"adaptive-64-lead",
       "adaptive 64",
       64,
       "lead",
       series(40, 1040),
       background_rate{3.15e12, 1},
       {}},
  };
  return r;
}

TEST(AdaptiveReport, RecordRowsAndTargets) {
  nlohmann::json env{{"gpu", "Synthetic GPU"}, {"driver_version", "13.0"}, {"date", "today"}};
  const report::record rec = adaptive_record(synthetic(), env);
  greenctx_test::expect_golden_record(rec, "bench-adaptive");
  EXPECT_EQ(rec.kind, "bench-adaptive");
  const std::string text = report::to_text(rec);
  EXPECT_TRUE(contains(text, "GPU Synthetic GPU")) << text;
  EXPECT_TRUE(contains(text, "one green context")) << text;
  EXPECT_TRUE(contains(text, "1.125")) << text;
  EXPECT_TRUE(contains(text, "NO (background)")) << text;
  EXPECT_TRUE(contains(text, "NO (isolation)")) << text;
  EXPECT_TRUE(contains(text, "2100.0")) << text; // 2.1e12 B/s in GB/s
  EXPECT_TRUE(contains(text, "1200.0 GB/s on 16 SMs")) << text;
  // Neither adaptive configuration meets both targets (static's verdict does not count).
  EXPECT_TRUE(contains(text, "targets: no adaptive configuration meets both")) << text;
  EXPECT_FALSE(bench::targets_met(rec));
  const report::series &c = *rec.table("configurations");
  ASSERT_EQ(c.rows.size(), 4u);
  EXPECT_EQ(c.rows[0][c.index("met")], report::cell{}); // alone: no background, no verdict
  EXPECT_EQ(c.rows[1][c.index("met")], report::cell{std::string("NO (isolation)")});
  EXPECT_NEAR(std::get<double>(c.rows[2][c.index("of_static")]), 0.6, 1e-12);
}

TEST(AdaptiveReport, AnAdaptiveConfigurationMeetingBothMeetsTheTargets) {
  results r = synthetic();
  r.configurations[3].critical = series(40, 540); // isolation 1.125, background 0.9
  const report::record rec = adaptive_record(r, {});
  EXPECT_TRUE(bench::targets_met(rec));
  EXPECT_EQ(rec.find("met_by")->value, report::cell{std::string("adaptive-64-lead")});
}

TEST(AdaptiveReport, JsonRoundTripAndCsv) {
  nlohmann::json env{{"gpu", "Synthetic GPU"}, {"command", "greenctx bench --adaptive"}};
  results r = synthetic();
  r.configurations[2].wait_us = {1.5, 2.5};
  const report::record rec = adaptive_record(r, env);
  const auto j = report::to_json(rec);
  EXPECT_EQ(j["kind"], "greenctx.bench-adaptive");
  EXPECT_EQ(j["environment"]["command"]["value"], "greenctx bench --adaptive");
  EXPECT_EQ(j["tables"]["configurations"]["rows"].size(), 4u);
  EXPECT_EQ(j["tables"]["waits"]["rows"].size(), 2u);
  EXPECT_EQ(j["tables"]["waits"]["rows"][1]["wait_us"], 2.5);
  EXPECT_EQ(j["tables"]["background"]["rows"].size(), 3u + 3u); // alone on 3 partitions, 3 runs
  const report::record back = report::from_json(nlohmann::ordered_json::parse(j.dump()));
  EXPECT_EQ(report::to_json(back), j);
  const std::string csv = report::to_csv(rec);
  EXPECT_EQ(csv.rfind("configuration,sample,host_us,gpu_us\n", 0), 0u) << csv.substr(0, 80);
  EXPECT_TRUE(contains(csv, "\nadaptive-64-lead,99,1040,38\n"));
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 1 + 4 * 100);
}

TEST(AdaptiveReport, SvgMarksTargets) {
  const std::string svg =
      report::to_svg(adaptive_record(synthetic(), nlohmann::json{{"gpu", "G"}}));
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_TRUE(contains(svg, "adaptive-64-lead"));
  EXPECT_TRUE(contains(svg, "1.125"));
  EXPECT_TRUE(contains(svg, "target 1.2"));
  EXPECT_TRUE(contains(svg, "target 0.8"));
  EXPECT_TRUE(contains(svg, "</svg>"));
  // Every configuration here misses a target: its bars are red, none green.
  EXPECT_TRUE(contains(svg, R"(height="14" fill="#c0392b")"));
  EXPECT_FALSE(contains(svg, R"(height="14" fill="#27ae60")"));
  results r = synthetic();
  r.configurations[3].critical = series(40, 540); // adaptive-64-lead meets both
  EXPECT_TRUE(contains(report::to_svg(adaptive_record(r, {})), R"(height="14" fill="#27ae60")"));
}

// A default run of the H200 (tests/data/bench-adaptive.json): it reads back to the same JSON,
// the configurations keep their verdicts, and some adaptive configuration met both targets.
TEST(AdaptiveReport, ARealRunReadsBack) {
  const auto j = greenctx_test::saved_record("bench-adaptive.json");
  const report::record rec = report::from_json(j);
  EXPECT_EQ(report::to_json(rec), j);
  const report::series &c = *rec.table("configurations");
  ASSERT_EQ(c.rows.size(), 18u);
  const auto met = [&](const std::string &name) {
    const auto row = std::find_if(c.rows.begin(), c.rows.end(), [&](const auto &x) {
      return x[c.index("name")] == report::cell{name};
    });
    return row == c.rows.end() ? std::string("absent")
                               : std::get<std::string>((*row)[c.index("met")]);
  };
  EXPECT_EQ(met("adaptive-64-lead"), "yes");
  EXPECT_EQ(met("adaptive-64-reactive"), "NO (isolation)");
  EXPECT_TRUE(bench::targets_met(rec));
  EXPECT_TRUE(contains(report::to_text(rec), "targets: both met by adaptive-8-reactive"));
}

} // namespace
} // namespace greenctx::cli::bench::adaptive
