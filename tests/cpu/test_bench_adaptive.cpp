// greenctx bench --adaptive without a GPU: option lists, validation, the policy's schedule,
// verdicts and the reports on synthetic results (pure code).
#include "bench/adaptive.hpp"

#include <greenctx/plan/error.hpp>

#include <gtest/gtest.h>

namespace greenctx::cli::bench::adaptive {
namespace {

using micros = std::chrono::duration<double, std::micro>;

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

TEST(AdaptiveOptions, Policies) {
  EXPECT_EQ(parse_policies("reactive,lead-wait"),
            (std::vector<policy>{policy::reactive, policy::lead_wait}));
  for (policy p : {policy::lead, policy::lead_wait, policy::reactive, policy::reactive_wait})
    EXPECT_EQ(parse_policies(name(p)), std::vector<policy>{p});
  EXPECT_NE(message_of([] { parse_policies("eager"); }).find("'eager' is not a policy"),
            std::string::npos);
  EXPECT_NE(message_of([] { parse_policies("lead,lead"); }).find("twice"), std::string::npos);
  EXPECT_NE(message_of([] { parse_policies(""); }).find("empty"), std::string::npos);
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
  EXPECT_NE(message_of([&] { validate(cfg, 132); }).find("--lead-us"), std::string::npos);
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

TEST(AdaptiveSchedule, LeadShrinksBeforeTheArrival) {
  const auto lead = std::chrono::microseconds(100);
  step s = schedule(policy::lead, micros(300), lead);
  EXPECT_DOUBLE_EQ(s.wide.count(), 200);
  EXPECT_DOUBLE_EQ(s.narrow.count(), 100);
  s = schedule(policy::lead_wait, micros(250.5), lead);
  EXPECT_DOUBLE_EQ(s.wide.count(), 150.5);
  EXPECT_DOUBLE_EQ(s.narrow.count(), 100);
  // A gap shorter than the lead: narrow at once, for the whole gap.
  s = schedule(policy::lead, micros(60), lead);
  EXPECT_DOUBLE_EQ(s.wide.count(), 0);
  EXPECT_DOUBLE_EQ(s.narrow.count(), 60);
}

TEST(AdaptiveSchedule, ReactiveShrinksAtTheArrival) {
  for (policy p : {policy::reactive, policy::reactive_wait}) {
    const step s = schedule(p, micros(300), std::chrono::microseconds(100));
    EXPECT_DOUBLE_EQ(s.wide.count(), 300);
    EXPECT_DOUBLE_EQ(s.narrow.count(), 0);
    EXPECT_FALSE(predictive(p));
  }
  EXPECT_TRUE(waits(policy::reactive_wait));
  EXPECT_FALSE(waits(policy::reactive));
  EXPECT_TRUE(waits(policy::lead_wait));
  EXPECT_FALSE(waits(policy::lead));
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

TEST(AdaptiveVerdict, IsolationAndBackgroundAgainstStatic) {
  const auto v = evaluate(synthetic());
  ASSERT_EQ(v.size(), 3u); // alone has no background
  EXPECT_EQ(v[0].name, "static");
  EXPECT_NEAR(v[0].isolation, (40 + 63.0) / 40, 1e-9);
  EXPECT_DOUBLE_EQ(v[0].background_ratio, 1);
  EXPECT_FALSE(v[0].met());
  EXPECT_NEAR(v[1].isolation, (40 + 5.0) / 40, 1e-9); // 1.125
  EXPECT_NEAR(v[1].background_ratio, 0.6, 1e-9);
  EXPECT_TRUE(v[1].isolation_met());
  EXPECT_FALSE(v[1].background_met());
  EXPECT_NEAR(v[2].isolation, (40 + 10.0) / 40, 1e-9); // 1.25
  EXPECT_NEAR(v[2].background_ratio, 0.9, 1e-9);
  EXPECT_FALSE(v[2].isolation_met());
  EXPECT_TRUE(v[2].background_met());
}

TEST(AdaptiveVerdict, UnavailableWithoutAloneOrStatic) {
  results r = synthetic();
  r.configurations.erase(r.configurations.begin()); // no alone
  for (const auto &v : evaluate(r)) {
    EXPECT_FALSE(v.available);
    EXPECT_FALSE(v.met());
  }
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
