// The bench report on synthetic results: targets, markdown, CSV and SVG (pure code).
#include "bench/report.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>

namespace greenctx::cli::bench {
namespace {

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
  r.critical_sms_obtained = 16;
  r.background_sms_obtained = 116;
  r.background_unit = "blocks/s";
  r.background_full = {1000, 1.0};
  r.background_share = {870, 1.0};
  r.quantization = "synthetic";
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
}

TEST(BenchReport, TargetsMissedAreReportedAsMissed) {
  const auto t = evaluate_targets(synthetic(40, 700));
  EXPECT_FALSE(named(t, "isolation").met()) << named(t, "isolation").value;
  EXPECT_FALSE(named(t, "background_share").met());
}

TEST(BenchReport, MissingPlacementsMakeTargetsUnavailableNotMet) {
  results r = synthetic(30, 870);
  r.placements.erase(r.placements.begin() + 4); // no "green"
  for (const auto &t : evaluate_targets(r)) {
    EXPECT_FALSE(t.available) << t.name;
    EXPECT_FALSE(t.met()) << t.name;
  }
}

TEST(BenchReport, MarkdownCsvJsonAndSvgCarryEveryPlacement) {
  const results r = synthetic(31, 860);
  const nlohmann::json env{{"gpu", "Test GPU"}, {"driver_version", "13.0"}, {"date", "today"}};
  const std::string md = markdown(r, env);
  for (const auto &p : r.placements)
    EXPECT_NE(md.find(p.description), std::string::npos) << p.name;
  EXPECT_NE(md.find("| isolation |"), std::string::npos);

  const std::string csv = to_csv(r);
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 1 + 6 * 100);
  EXPECT_EQ(csv.rfind("placement,sample,host_us,gpu_us,start_delay_us\n", 0), 0u);

  const nlohmann::json j = to_json(r, env);
  EXPECT_EQ(j["placements"].size(), 6u);
  EXPECT_EQ(j["placements"][0]["critical"]["samples"]["host_us"].size(), 100u);
  EXPECT_EQ(j["environment"]["gpu"], "Test GPU");
  EXPECT_EQ(j["targets"].size(), 3u);

  const std::string svg = to_svg(r, env);
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_EQ(svg.substr(svg.size() - 7), "</svg>\n");
  EXPECT_NE(svg.find("TRAP &lt;&amp;&gt;"), std::string::npos) << "text is not escaped";
  EXPECT_EQ(svg.find("TRAP <&>"), std::string::npos);
  if (const char *out = std::getenv("GREENCTX_TEST_SVG")) // for looking at the picture by hand
    std::ofstream(out) << svg;
}

} // namespace
} // namespace greenctx::cli::bench

namespace greenctx::cli::bench {
namespace {

TEST(BenchReport, SavedJsonReadsBackToTheSameReport) {
  results r = synthetic(31, 860);
  r.cfg.rounds = 7;
  const nlohmann::json env{{"gpu", "Test GPU"}, {"driver_version", "13.0"}, {"date", "today"}};
  const results back = from_json(to_json(r, env));
  EXPECT_EQ(markdown(back, env), markdown(r, env));
  EXPECT_EQ(to_csv(back), to_csv(r));
  EXPECT_EQ(back.cfg.rounds, 7u);
  EXPECT_THROW(from_json(nlohmann::json{{"config", 1}}), nlohmann::json::exception);
}

TEST(BenchReport, SavedCountsThatAreNotCountsAreRefused) {
  const nlohmann::json saved = to_json(synthetic(31, 860), nlohmann::json::object());
  for (const nlohmann::json bad :
       {nlohmann::json(1.44e75), nlohmann::json(-1), nlohmann::json(8.5)})
    for (const char *field : {"critical_sms", "rounds"}) {
      nlohmann::json j = saved;
      j["config"][field] = bad;
      EXPECT_THROW(from_json(j), nlohmann::json::exception) << field << " = " << bad;
    }
}

} // namespace
} // namespace greenctx::cli::bench
