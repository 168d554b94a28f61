// SPDX-License-Identifier: Apache-2.0
// The adaptive measurement's pure parts (no GPU): policy names and lists, the checks of a
// configuration, the host's schedule per policy and the verdicts against alone and static.
#include <greenctx/greenctx.hpp>

#include "text_checks.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <string>

namespace greenctx::measure {
namespace {

using micros = std::chrono::duration<double, std::micro>;

using greenctx_test::contains;
using greenctx_test::rejection;

// Whether `text` starts with `prefix` (the field a message names comes first).
testing::AssertionResult starts_with(const std::string &text, const std::string &prefix) {
  if (text.rfind(prefix, 0) == 0)
    return testing::AssertionSuccess();
  return testing::AssertionFailure()
         << "expected \"" << prefix << "\" first in: \"" << text << "\"";
}

TEST(AdaptivePolicies, NamesAndLists) {
  EXPECT_EQ(parse_adaptive_policies("reactive,lead-wait"),
            (std::vector<adaptive_policy>{adaptive_policy::reactive, adaptive_policy::lead_wait}));
  for (adaptive_policy p : adaptive_policies)
    EXPECT_EQ(parse_adaptive_policies(name(p)), std::vector<adaptive_policy>{p});
  EXPECT_EQ(parse_adaptive_policies(" lead , reactive-wait ").size(), 2u);
  const std::string eager = rejection([] { parse_adaptive_policies("eager"); });
  EXPECT_TRUE(starts_with(eager, "policies: 'eager' is not one of lead, lead-wait, reactive, "
                                 "reactive-wait, narrow"));
  EXPECT_TRUE(contains(rejection([] { parse_adaptive_policies("lead,lead"); }), "twice"));
  EXPECT_TRUE(contains(rejection([] { parse_adaptive_policies(""); }), "empty"));
  // The caller names its list.
  EXPECT_TRUE(
      starts_with(rejection([] { parse_adaptive_policies("x", "--policies"); }), "--policies: "));
}

TEST(AdaptiveConfig, ValidateAgainstTheDevice) {
  adaptive_config cfg; // 16 critical SMs, N in 8..64, every policy, lead 100 us, gap 300 us
  EXPECT_NO_THROW(validate_adaptive(cfg, 132));
  cfg.shrink_to = {116};
  const std::string wide = rejection([&] { validate_adaptive(cfg, 132); });
  EXPECT_TRUE(
      starts_with(wide, "shrink_to: 116 SMs for the background and 16 for the critical work"));
  EXPECT_TRUE(contains(wide, "give N below 116"));
  cfg.shrink_to = {115};
  EXPECT_NO_THROW(validate_adaptive(cfg, 132));
  cfg.lead = std::chrono::microseconds(149); // the shortest gap is 150 us (300 jittered -50%)
  EXPECT_NO_THROW(validate_adaptive(cfg, 132));
  cfg.lead = std::chrono::microseconds(150);
  const std::string lead = rejection([&] { validate_adaptive(cfg, 132); });
  EXPECT_TRUE(contains(lead, "(150 us, half of gap 300)"));
  EXPECT_TRUE(contains(lead, "give a lead below 150 us or a longer gap"));
  cfg.gap = std::chrono::microseconds(301); // half of an odd gap is said as it is
  EXPECT_NO_THROW(validate_adaptive(cfg, 132));
  cfg.lead = std::chrono::microseconds(151);
  EXPECT_TRUE(
      contains(rejection([&] { validate_adaptive(cfg, 132); }), "(150.5 us, half of gap 301)"));
  cfg.policies = {adaptive_policy::reactive}; // no lead used: any lead is accepted
  EXPECT_NO_THROW(validate_adaptive(cfg, 132));
  cfg.queue_depth = 0;
  EXPECT_TRUE(starts_with(rejection([&] { validate_adaptive(cfg, 132); }), "queue_depth: "));
}

TEST(AdaptiveConfig, WhatNoMeasurementCouldRun) {
  const auto refused = [](const std::function<void(adaptive_config &)> &change) {
    adaptive_config cfg;
    change(cfg);
    return rejection([&] { validate_adaptive(cfg, 132); });
  };
  EXPECT_TRUE(starts_with(refused([](auto &c) { c.critical_sms = 0; }), "critical_sms: "));
  EXPECT_TRUE(starts_with(refused([](auto &c) { c.samples = 0; }), "samples: "));
  EXPECT_TRUE(contains(refused([](auto &c) { c.shrink_to = {8, 0}; }), "0 SMs runs no background"));
  EXPECT_TRUE(contains(refused([](auto &c) { c.shrink_to = {16, 8, 16}; }), "16 is given twice"));
  const auto twice = [](auto &c) {
    c.policies = {adaptive_policy::reactive, adaptive_policy::reactive};
  };
  EXPECT_TRUE(contains(refused(twice), "reactive is given twice"));
  // The names a caller gives start its messages.
  adaptive_config cfg;
  cfg.queue_depth = 0;
  adaptive_field_names names;
  names.queue_depth = "--queue-depth";
  EXPECT_TRUE(
      starts_with(rejection([&] { validate_adaptive(cfg, 132, names); }), "--queue-depth: "));
}

TEST(AdaptiveSchedule, LeadShrinksBeforeTheArrival) {
  const auto lead = std::chrono::microseconds(100);
  adaptive_step s = adaptive_schedule(adaptive_policy::lead, micros(300), lead);
  EXPECT_DOUBLE_EQ(s.wide.count(), 200);
  EXPECT_DOUBLE_EQ(s.narrow.count(), 100);
  s = adaptive_schedule(adaptive_policy::lead_wait, micros(250.5), lead);
  EXPECT_DOUBLE_EQ(s.wide.count(), 150.5);
  EXPECT_DOUBLE_EQ(s.narrow.count(), 100);
  // A gap shorter than the lead: narrow at once, for the whole gap.
  s = adaptive_schedule(adaptive_policy::lead, micros(60), lead);
  EXPECT_DOUBLE_EQ(s.wide.count(), 0);
  EXPECT_DOUBLE_EQ(s.narrow.count(), 60);
  s = adaptive_schedule(adaptive_policy::lead, micros(-5), lead); // never a negative time
  EXPECT_DOUBLE_EQ(s.wide.count(), 0);
  EXPECT_DOUBLE_EQ(s.narrow.count(), 0);
}

TEST(AdaptiveSchedule, ReactiveShrinksAtTheArrival) {
  for (adaptive_policy p : {adaptive_policy::reactive, adaptive_policy::reactive_wait}) {
    const adaptive_step s = adaptive_schedule(p, micros(300), std::chrono::microseconds(100));
    EXPECT_DOUBLE_EQ(s.wide.count(), 300);
    EXPECT_DOUBLE_EQ(s.narrow.count(), 0);
    EXPECT_FALSE(predictive(p));
  }
  EXPECT_TRUE(waits(adaptive_policy::reactive_wait));
  EXPECT_FALSE(waits(adaptive_policy::reactive));
  // narrow switches nothing: the host feeds the whole gap, on the layout it holds.
  const adaptive_step held =
      adaptive_schedule(adaptive_policy::narrow, micros(300), std::chrono::microseconds(100));
  EXPECT_DOUBLE_EQ(held.wide.count(), 300);
  EXPECT_DOUBLE_EQ(held.narrow.count(), 0);
  EXPECT_FALSE(predictive(adaptive_policy::narrow));
  EXPECT_FALSE(waits(adaptive_policy::narrow));
  EXPECT_TRUE(waits(adaptive_policy::lead_wait));
  EXPECT_FALSE(waits(adaptive_policy::lead));
}

// 100 host samples: 99 of `base` and one `spike`; the p99 (rank 98.01 of 0..99, linear) is
// base + 0.01 x (spike - base).
critical_stats series(double base, double spike) {
  critical_stats c;
  for (int i = 0; i < 100; ++i)
    c.host_us.push_back(i == 99 ? spike : base);
  c.host = summarize(c.host_us);
  return c;
}

adaptive_findings synthetic() {
  adaptive_findings r;
  r.configurations = {
      {"alone", "alone", 0, "", series(40, 40), std::nullopt, {}},
      {"static", "static", 0, "", series(40, 6340), background_rate{3.5e12, 1}, {}},
      {"adaptive-16-lead", "a16", 16, "lead", series(40, 540), background_rate{2.1e12, 1}, {}},
      {"adaptive-64-lead", "a64", 64, "lead", series(40, 1040), background_rate{3.15e12, 1}, {}},
  };
  return r;
}

TEST(AdaptiveVerdict, IsolationAndBackgroundAgainstStatic) {
  const auto v = adaptive_verdicts(synthetic());
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
  adaptive_findings r = synthetic();
  r.configurations.erase(r.configurations.begin()); // no alone
  for (const auto &v : adaptive_verdicts(r)) {
    EXPECT_FALSE(v.available);
    EXPECT_FALSE(v.met());
  }
  r = synthetic();
  r.configurations[1].background = background_rate{0, 1}; // static did no work
  for (const auto &v : adaptive_verdicts(r))
    EXPECT_FALSE(v.available) << v.name;
}

} // namespace
} // namespace greenctx::measure
