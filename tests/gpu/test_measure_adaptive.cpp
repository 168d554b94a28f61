// SPDX-License-Identifier: Apache-2.0
// The adaptive measurement on the GPU: every configuration comes back with its samples, the
// critical partition is one green context in every layout, the caller's chunks run where the
// layout in use puts them; what validate_adaptive refuses is refused before any pool is made.
#include "gpu_fixture.hpp"

#include <cmath>
#include <set>

namespace greenctx::test {
namespace {

using namespace std::chrono_literals;

class AdaptiveTest : public gpu_test {
protected:
  static measure::adaptive_config quick() {
    measure::adaptive_config cfg;
    // 8 needs finer pieces than the critical 16: the critical partition is shared anyway.
    cfg.shrink_to = {8, 64};
    cfg.samples = 20;
    cfg.warmup = 2;
    cfg.rounds = 2;
    cfg.rate_window = 20ms;
    return cfg;
  }
};

TEST_F(AdaptiveTest, every_configuration_with_the_built_in_copy) {
  const auto cfg = quick();
  std::vector<std::string> lines;
  const measure::adaptive_result r = measure::measure_adaptive(
      dev(), measure::kernel_critical(dev(), 8, 20us), measure::copy_chunks(dev()), cfg,
      [&](const std::string &line) { lines.push_back(line); });
  EXPECT_EQ(r.critical_name, "kernel");
  EXPECT_EQ(r.background_unit, "GB/s");
  EXPECT_EQ(r.device_sms, dev().sms().sm_count());
  EXPECT_EQ(r.critical_sms_obtained, 16u);
  EXPECT_EQ(r.wide_sms_obtained, r.device_sms - 16);
  EXPECT_EQ(r.narrow_sms_obtained, (std::vector<unsigned>{8, 64}));
  EXPECT_TRUE(r.critical_shared) << r.critical_sharing;
  ASSERT_EQ(r.alone.size(), 3u); // wide, then each narrow partition
  for (const auto &a : r.alone)
    EXPECT_GT(a.rate.rate(), 0) << a.sms;

  ASSERT_EQ(r.configurations.size(), 2 + cfg.shrink_to.size() * cfg.policies.size());
  EXPECT_EQ(r.configurations[0].name, "alone");
  EXPECT_EQ(r.configurations[1].name, "static");
  EXPECT_EQ(r.configurations[2].name, "adaptive-8-lead");
  EXPECT_EQ(r.configurations.back().name, "adaptive-64-narrow");
  for (const auto &c : r.configurations) {
    EXPECT_EQ(c.critical.host_us.size(), cfg.samples) << c.name;
    EXPECT_EQ(c.critical.gpu.count, cfg.samples) << c.name;
    // kernel_critical times itself: start delays come with every sample; its 20 us blocks take
    // at least 20 us from the arrival.
    EXPECT_EQ(c.critical.start_delay_us.size(), cfg.samples) << c.name;
    EXPECT_GE(c.critical.host.min, 20) << c.name;
    EXPECT_EQ(c.background.has_value(), c.name != "alone") << c.name;
    if (c.background) {
      EXPECT_GT(c.background->rate(), 0) << c.name;
    }
    const bool waits = c.policy == "lead-wait" || c.policy == "reactive-wait";
    EXPECT_EQ(c.wait_us.size(), waits ? cfg.samples : 0u) << c.name;
  }
  EXPECT_EQ(measure::adaptive_verdicts(r).size(), r.configurations.size() - 1);
  EXPECT_FALSE(lines.empty());
}

// The caller's chunked background: each chunk goes to the stream of the layout in use (wide or
// one of the narrow ones), and the rates count the work its launches report.
TEST_F(AdaptiveTest, the_callers_chunks_run_on_the_layout_in_use) {
  std::set<unsigned> sms;
  const unsigned all = dev().sms().sm_count();
  measure::background_workload chunks{"spin chunks", [&](stream_ref s) {
                                        sms.insert(s.sms().sm_count());
                                        launch_spin(s, 2 * all, 20us, 128);
                                        return 2.0 * all;
                                      }};
  chunks.unit = "blocks/s";
  auto cfg = quick();
  cfg.policies = {measure::adaptive_policy::lead, measure::adaptive_policy::reactive_wait};
  const measure::critical_workload critical{"mine",
                                            [](stream_ref s) { launch_spin(s, 8, 10us, 128); }};
  const auto r = measure::measure_adaptive(dev(), critical, chunks, cfg);
  EXPECT_EQ(sms, (std::set<unsigned>{8, 64, r.wide_sms_obtained}));
  EXPECT_EQ(r.background_name, "spin chunks");
  EXPECT_EQ(r.background_unit, "blocks/s");
  ASSERT_EQ(r.configurations.size(), 2u + 2 * 2);
  for (const auto &c : r.configurations) {
    EXPECT_TRUE(c.critical.start_delay_us.empty()) << c.name; // no execution time given
    if (c.background) {                                       // whole chunks of 2 x all blocks
      EXPECT_EQ(std::fmod(c.background->work, 2.0 * all), 0) << c.name;
    }
  }
}

TEST_F(AdaptiveTest, refusals_come_before_the_pool) {
  const measure::critical_workload critical{"c", [](stream_ref s) { launch_spin(s, 1, 1us, 32); }};
  auto cfg = quick();
  cfg.shrink_to = {dev().sms().sm_count()};
  try {
    measure::measure_adaptive(dev(), critical, measure::copy_chunks(dev()), cfg);
    ADD_FAILURE() << "a narrow layout as wide as the GPU was measured";
  } catch (const request_error &e) {
    EXPECT_NE(std::string(e.what()).find("shrink_to: "), std::string::npos) << e.what();
  }
  EXPECT_THROW(measure::measure_adaptive(dev(), critical, measure::background_workload{}, quick()),
               request_error);
  EXPECT_THROW(measure::copy_chunks(dev(), 1024), request_error); // under one word per thread
}

} // namespace
} // namespace greenctx::test
