// greenctx bench --adaptive without a GPU: option lists, validation under the options' names, and
// the reports on synthetic results (pure code). The policies, their schedule and the verdicts are
// the library's: tests/cpu/test_adaptive.cpp.
#include "bench/adaptive.hpp"

#include <greenctx/plan/error.hpp>

#include <gtest/gtest.h>

namespace greenctx::cli::bench::adaptive {
namespace {

std::string message_of(const std::function<void()> &f) {
  try {
    f();
  } catch (const request_error &e) {
    return e.what();
  }
  return "(no request_error)";
}

TEST(AdaptiveOptions, ShrinkToList) {
  EXPECT_EQ(parse_shrink_to("8,16,32,64"), (std::vector<unsigned>{8, 16, 32, 64}));
  EXPECT_EQ(parse_shrink_to(" 24 "), (std::vector<unsigned>{24}));
  EXPECT_NE(message_of([] { parse_shrink_to(""); }).find("--shrink-to is empty"),
            std::string::npos);
  EXPECT_NE(message_of([] { parse_shrink_to("8,,16"); }).find("entry 2"), std::string::npos);
  EXPECT_NE(message_of([] { parse_shrink_to("0"); }).find("--shrink-to"), std::string::npos);
  EXPECT_NE(message_of([] { parse_shrink_to("8,x"); }).find("e.g. --shrink-to 8,16,32,64"),
            std::string::npos);
  EXPECT_NE(message_of([] { parse_shrink_to("16,16"); }).find("lists 16 twice"), std::string::npos);
  EXPECT_NE(message_of([] { parse_shrink_to("5000"); }).find("entry 1"), std::string::npos);
}

TEST(AdaptiveOptions, PoliciesAreNamedByTheirOption) {
  EXPECT_EQ(parse_policies("reactive,lead-wait"),
            (std::vector<policy>{policy::reactive, policy::lead_wait}));
  EXPECT_EQ(message_of([] { parse_policies("eager"); }).rfind("--policies: 'eager' is not a", 0),
            0u);
}

TEST(AdaptiveOptions, ValidateAgainstTheDevice) {
  config cfg; // the defaults: 16 critical SMs, N in 8..64, lead 100 us, gap 300 us, 64 MiB
  EXPECT_EQ(message_of([&] { validate(cfg, 132); }), "(no request_error)");
  cfg.shrink_to = {116};
  const std::string wide = message_of([&] { validate(cfg, 132); });
  EXPECT_NE(wide.find("give N below 116"), std::string::npos) << wide;
  cfg.shrink_to = {115};
  EXPECT_EQ(message_of([&] { validate(cfg, 132); }), "(no request_error)");
  cfg.gap = std::chrono::microseconds(300); // jittered +-50%: the shortest gap is 150 us
  cfg.lead = std::chrono::microseconds(149);
  EXPECT_EQ(message_of([&] { validate(cfg, 132); }), "(no request_error)");
  cfg.lead = std::chrono::microseconds(150);
  const std::string lead = message_of([&] { validate(cfg, 132); });
  EXPECT_EQ(lead.rfind("--lead-us: a lead of 150 us", 0), 0u) << lead;
  EXPECT_NE(lead.find("(150 us, half of --gap-us 300)"), std::string::npos) << lead;
  EXPECT_NE(lead.find("a longer --gap-us"), std::string::npos) << lead;
  cfg.policies = {policy::reactive}; // no lead used: any lead is accepted
  EXPECT_EQ(message_of([&] { validate(cfg, 132); }), "(no request_error)");
  cfg.chunk_bytes = std::size_t{1} << 20; // 1056 blocks x 256 threads x 16 B = 4.1 MiB at least
  const std::string chunk = message_of([&] { validate(cfg, 132); });
  EXPECT_NE(chunk.find("give at least 5 MiB"), std::string::npos) << chunk;
  cfg.chunk_bytes = std::size_t{5} << 20;
  EXPECT_EQ(message_of([&] { validate(cfg, 132); }), "(no request_error)");
  cfg.queue_depth = 0;
  EXPECT_NE(message_of([&] { validate(cfg, 132); }).find("--queue-depth"), std::string::npos);
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

TEST(AdaptiveReport, MarkdownRowsAndTargets) {
  nlohmann::json env{{"gpu", "Synthetic GPU"}, {"driver_version", "13.0"}, {"date", "today"}};
  const std::string md = markdown(synthetic(), env);
  EXPECT_NE(md.find("Synthetic GPU (132 SMs)"), std::string::npos) << md;
  EXPECT_NE(md.find("one green context"), std::string::npos);
  EXPECT_NE(md.find("1.125"), std::string::npos) << md;
  EXPECT_NE(md.find("NO (background)"), std::string::npos) << md;
  EXPECT_NE(md.find("NO (isolation)"), std::string::npos) << md;
  EXPECT_NE(md.find("2100.0"), std::string::npos) << md; // 2.1e12 B/s in GB/s
  EXPECT_NE(md.find("1200.0 GB/s on 16 SMs"), std::string::npos) << md;
}

TEST(AdaptiveReport, JsonRoundTripAndCsv) {
  nlohmann::json env{{"gpu", "Synthetic GPU"}, {"command", "greenctx bench --adaptive"}};
  const results r = synthetic();
  const nlohmann::json j = to_json(r, env);
  EXPECT_EQ(j.at("environment").at("command"), "greenctx bench --adaptive");
  EXPECT_EQ(j.at("targets").size(), 3u);
  EXPECT_EQ(j.at("targets")[1].at("met"), false);
  const results back = from_json(nlohmann::json::parse(j.dump()));
  ASSERT_EQ(back.configurations.size(), r.configurations.size());
  EXPECT_EQ(back.cfg.shrink_to, r.cfg.shrink_to);
  EXPECT_EQ(back.cfg.policies, r.cfg.policies);
  EXPECT_EQ(back.narrow_sms_obtained, r.narrow_sms_obtained);
  EXPECT_EQ(to_json(back, env).dump(), j.dump());
  nlohmann::json other = j;
  other["config"].erase("mode");
  EXPECT_THROW(from_json(other), nlohmann::json::exception);
  const std::string csv = to_csv(r);
  EXPECT_EQ(csv.rfind("configuration,sample,host_us,gpu_us\n", 0), 0u);
  EXPECT_NE(csv.find("adaptive-64-lead,99,1040.000,38.000"), std::string::npos);
}

TEST(AdaptiveReport, SvgMarksTargets) {
  const std::string svg = to_svg(synthetic(), nlohmann::json{{"gpu", "G"}});
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find("adaptive-64-lead"), std::string::npos);
  EXPECT_NE(svg.find("1.125"), std::string::npos);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
}

} // namespace
} // namespace greenctx::cli::bench::adaptive
