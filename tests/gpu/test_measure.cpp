// SPDX-License-Identifier: Apache-2.0
// The measurement layer: the contention measurement over the user's own workloads and the
// built-in ones, and its refusals.
#include "gpu_fixture.hpp"

#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>

namespace greenctx::test {
namespace {

using namespace std::chrono_literals;

class MeasureTest : public gpu_test {
protected:
  // Small enough for a test: 20 samples per placement in 2 rounds.
  static measure::contention_config quick() {
    measure::contention_config cfg;
    cfg.samples = 20;
    cfg.warmup = 2;
    cfg.rounds = 2;
    cfg.gap = 50us;
    cfg.rate_window = 20ms;
    return cfg;
  }
};

const measure::placement_result &placement(const measure::contention_result &r,
                                           const std::string &name) {
  for (const auto &p : r.placements)
    if (p.name == name)
      return p;
  throw std::logic_error("no placement " + name);
}

// Workloads written by the caller get streams on the partitions the placement says: the critical
// work's on the whole GPU or its 16 SMs, the background's on the whole GPU or the rest.
TEST_F(MeasureTest, user_workloads_run_where_each_placement_puts_them) {
  const partition_set set = partition_set::create(dev(), parse_partition_request("16,rest"));
  const unsigned all = dev().sms().sm_count(), rest = set.parts()[1].obtained();
  std::set<unsigned> critical_sms, background_sms;
  unsigned launches = 0;
  measure::critical_workload critical{"mine", [&](stream_ref s) {
                                        critical_sms.insert(s.sms().sm_count());
                                        ++launches;
                                        launch_spin(s, 8, 10us, 128);
                                      }};
  measure::background_workload background{"spinning", [&](stream_ref s) {
                                            background_sms.insert(s.sms().sm_count());
                                            launch_spin(s, 64 * all, 100us, 128);
                                            return 64.0 * all;
                                          }};
  background.unit = "blocks/s";
  const auto cfg = quick();
  const measure::contention_result r =
      measure::measure_contention(dev(), set, critical, background, cfg);

  EXPECT_EQ(r.critical_name, "mine");
  EXPECT_EQ(r.background_name, "spinning");
  EXPECT_EQ(r.device_sms, all);
  EXPECT_EQ(r.critical_sms, set.parts()[0].obtained());
  EXPECT_EQ(r.background_sms, rest);
  EXPECT_EQ(critical_sms, (std::set<unsigned>{r.critical_sms, all}));
  EXPECT_EQ(background_sms, (std::set<unsigned>{rest, all}));
  ASSERT_EQ(r.placements.size(), std::size(measure::placement_names));
  for (std::size_t i = 0; i < r.placements.size(); ++i) {
    const auto &p = r.placements[i];
    EXPECT_EQ(p.name, measure::placement_names[i]);
    ASSERT_TRUE(p.critical);
    EXPECT_EQ(p.critical->gpu_us.size(), cfg.samples) << p.name;
    EXPECT_EQ(p.critical->host.count, cfg.samples) << p.name;
    EXPECT_TRUE(p.critical->start_delay_us.empty()) << p.name << ": no execution time was given";
    EXPECT_GT(p.critical->gpu.p50, 0) << p.name;
    EXPECT_EQ(p.background.has_value(), p.name != "alone" && p.name != "alone_green") << p.name;
    if (p.background)
      EXPECT_GT(p.background->rate(), 0) << p.name;
  }
  // 64 blocks per SM are whole waves on every SM; on the rest they need a part-wave more.
  // Warm-up included, every placement's first round takes cfg.warmup samples more.
  EXPECT_GE(launches, 7 * (cfg.samples + cfg.warmup));
  EXPECT_EQ(r.background_launch_work, 64.0 * all);
  EXPECT_GT(r.background_full.rate(), r.background_share.rate())
      << "the background on " << rest << " SMs ran as fast as on " << all;
  // The point of green contexts: beside 100 us background blocks, the critical work waits for
  // SMs on a shared GPU, not on its own.
  EXPECT_LT(placement(r, "green").critical->gpu.p50, placement(r, "shared").critical->gpu.p50);
}

TEST_F(MeasureTest, built_in_workloads_and_a_chosen_placement) {
  const partition_set set = partition_set::create(dev(), parse_partition_request("16,rest"));
  auto cfg = quick();
  cfg.placements = {"green", "alone"};
  const auto r = measure::measure_contention(dev(), set, measure::kernel_critical(dev(), 8, 20us),
                                             measure::spin_background(dev(), 2, 100us), cfg);
  ASSERT_EQ(r.placements.size(), 2u);
  EXPECT_EQ(r.placements[0].name, "alone"); // in the measurement's own order
  EXPECT_EQ(r.placements[1].name, "green");
  for (const auto &p : r.placements) {
    // The kernel critical work times itself: start delays are reported, and its 20 us blocks
    // took at least 20 us on the GPU.
    EXPECT_EQ(p.critical->start_delay_us.size(), cfg.samples) << p.name;
    EXPECT_GE(p.critical->gpu.min, 20) << p.name;
  }
  EXPECT_EQ(r.background_unit, "blocks/s");
  EXPECT_NE(r.background_shape.find("waves"), std::string::npos) << r.background_shape;
}

TEST_F(MeasureTest, refusals_say_what_is_wrong) {
  const partition_set two = partition_set::create(dev(), parse_partition_request("16,rest"));
  const partition_set three = partition_set::create(dev(), parse_partition_request("16,16,rest"));
  const measure::critical_workload critical{"c", [](stream_ref s) { launch_spin(s, 1, 1us, 32); }};
  const measure::background_workload background{"b", [](stream_ref s) {
                                                  launch_spin(s, 8, 10us, 32);
                                                  return 8.0;
                                                }};
  const auto refused = [&](const partition_set &set, const measure::critical_workload &c,
                           const measure::background_workload &b,
                           const measure::contention_config &cfg, const std::string &words) {
    try {
      measure::measure_contention(dev(), set, c, b, cfg);
      ADD_FAILURE() << "accepted; expected a refusal saying '" << words << "'";
    } catch (const request_error &e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  refused(three, critical, background, quick(), "two partitions");
  refused(two, measure::critical_workload{"c", {}}, background, quick(), "critical workload");
  auto cfg = quick();
  cfg.samples = 0;
  refused(two, critical, background, cfg, "samples");
  cfg = quick();
  cfg.placements = {"green", "fastest"};
  refused(two, critical, background, cfg, "no placement is named 'fastest'");
  const measure::background_workload forgot{"forgot", [](stream_ref s) {
                                              launch_spin(s, 8, 10us, 32);
                                              return 0.0;
                                            }};
  refused(two, critical, forgot, quick(), "positive amount of work");

  EXPECT_THROW(measure::kernel_critical(dev(), 0, 20us), request_error);
  EXPECT_THROW(measure::spin_background(dev(), 0, 100us), request_error);
  EXPECT_THROW(measure::spin_background(dev(), 1u << 30, 100us), request_error);
  EXPECT_THROW(measure::memory_background(dev(), 0), request_error);
}

// A workload that throws ends the measurement with its exception, and leaves nothing behind that
// stops the next one.
TEST_F(MeasureTest, a_throwing_workload_ends_the_measurement_cleanly) {
  const partition_set set = partition_set::create(dev(), parse_partition_request("16,rest"));
  unsigned calls = 0;
  const measure::critical_workload fails_later{"fails", [&](stream_ref s) {
                                                 if (++calls == 30)
                                                   throw std::runtime_error("the user's error");
                                                 launch_spin(s, 1, 1us, 32);
                                               }};
  const auto background = measure::spin_background(dev(), 1, 50us);
  EXPECT_THROW(measure::measure_contention(dev(), set, fails_later, background, quick()),
               std::runtime_error);
  const measure::critical_workload fine{"fine", [](stream_ref s) { launch_spin(s, 1, 1us, 32); }};
  auto cfg = quick();
  cfg.placements = {"green"};
  EXPECT_EQ(measure::measure_contention(dev(), set, fine, background, cfg).placements.size(), 1u);
}

// background_thread: while the critical work is sampled, the background is launched from a thread
// other than the caller's, and the placement's numbers come back as without it; an error on that
// thread ends the measurement with that error.
TEST_F(MeasureTest, a_thread_of_its_own_feeds_the_background) {
  const partition_set set = partition_set::create(dev(), parse_partition_request("16,rest"));
  const auto caller = std::this_thread::get_id();
  std::mutex seen_lock;
  std::set<std::thread::id> seen;
  const measure::background_workload background{"short", [&](stream_ref s) {
                                                  {
                                                    const std::lock_guard lock(seen_lock);
                                                    seen.insert(std::this_thread::get_id());
                                                  }
                                                  launch_spin(s, 8, 1us, 32);
                                                  return 8.0;
                                                }};
  auto cfg = quick();
  cfg.placements = {"green"};
  cfg.background_thread = true;
  const auto r = measure::measure_contention(dev(), set, measure::kernel_critical(dev(), 8, 20us),
                                             background, cfg);
  ASSERT_EQ(r.placements.size(), 1u);
  EXPECT_EQ(r.placements[0].critical->gpu_us.size(), cfg.samples);
  ASSERT_TRUE(r.placements[0].background);
  EXPECT_GT(r.placements[0].background->rate(), 0);
  EXPECT_TRUE(r.cfg.background_thread);
  seen.erase(caller); // the warm-up and the rates alone launch from the caller's thread
  EXPECT_EQ(seen.size(), 1u) << "the background was not launched from a thread of its own";

  const measure::background_workload fails_there{"fails there", [&](stream_ref s) {
                                                   if (std::this_thread::get_id() != caller)
                                                     throw std::runtime_error("the feeder's error");
                                                   launch_spin(s, 8, 1us, 32);
                                                   return 8.0;
                                                 }};
  try {
    measure::measure_contention(dev(), set, measure::kernel_critical(dev(), 8, 20us), fails_there,
                                cfg);
    ADD_FAILURE() << "an error on the background's thread was lost";
  } catch (const std::runtime_error &e) {
    EXPECT_EQ(std::string(e.what()), "the feeder's error");
  }
  cfg.background_thread = false; // the caller's thread only: nothing fails
  EXPECT_EQ(measure::measure_contention(dev(), set, measure::kernel_critical(dev(), 8, 20us),
                                        fails_there, cfg)
                .placements.size(),
            1u);
}

// hold_launch: a critical workload that takes 2 ms on the host before it enqueues a short kernel
// (as a slow Python launch would) is timed as the kernel, not the pause; without the hold as the
// pause. A workload that waits for its own stream while held is refused with the reason.
TEST_F(MeasureTest, hold_launch_leaves_out_the_launch_time) {
  const partition_set set = partition_set::create(dev(), parse_partition_request("16,rest"));
  const measure::critical_workload slow{"slow", [](stream_ref s) {
                                          std::this_thread::sleep_for(2ms);
                                          launch_spin(s, 8, 20us, 128);
                                        }};
  const auto background = measure::spin_background(dev(), 1, 50us);
  auto cfg = quick();
  cfg.placements = {"green"};
  const auto p50 = [&](bool hold) {
    cfg.hold_launch = hold;
    return measure::measure_contention(dev(), set, slow, background, cfg)
        .placements.at(0)
        .critical->gpu.p50;
  };
  EXPECT_GE(p50(false), 2000);
  const double held = p50(true);
  EXPECT_GE(held, 20);
  EXPECT_LT(held, 1000) << "the held sample still counted the 2 ms before the launch";

  const measure::critical_workload waits{"waits", [](stream_ref s) {
                                           launch_spin(s, 1, 1us, 32);
                                           s.synchronize();
                                         }};
  cfg.hold_launch = true;
  try {
    measure::measure_contention(dev(), set, waits, background, cfg);
    ADD_FAILURE() << "a workload that synchronizes while held was measured";
  } catch (const request_error &e) {
    EXPECT_NE(std::string(e.what()).find("must only enqueue"), std::string::npos) << e.what();
  }
}

// tune over the GPU: both searches, on four sizes, with a bound every split meets; then sizes it
// cannot make and objectives out of range are refused.
TEST_F(MeasureTest, tune_measures_the_sizes_and_answers_a_split) {
  measure::tune_config cfg;
  cfg.objective = {measure::tune_goal::p99_at_most_times_alone, 1000};
  cfg.search = measure::tune_search::both;
  cfg.samples = 30;
  cfg.confirm_samples = 60;
  cfg.sizes = {8, 16, 32, 64};
  std::vector<std::string> lines;
  const auto r = measure::tune(dev(), measure::kernel_critical(dev(), 8, 10us),
                               measure::spin_background(dev(), 2, 100us), cfg,
                               [&](const std::string &l) { lines.push_back(l); });
  ASSERT_TRUE(r.guided && r.exhaustive);
  EXPECT_EQ(r.candidates, cfg.sizes);
  EXPECT_EQ(r.exhaustive->measured.size(), 4u);
  EXPECT_EQ(r.curve.size(), 4u);
  ASSERT_TRUE(r.exhaustive->chosen) << r.exhaustive->reason;
  EXPECT_EQ(r.split(), std::to_string(*r.exhaustive->chosen) + ",rest");
  EXPECT_GT(r.alone.p99, 0);
  EXPECT_FALSE(r.pareto.empty());
  for (const auto &p : r.curve) {
    EXPECT_EQ(p.background_sms + p.critical_sms, dev().sms().sm_count()) << p.critical_sms;
    EXPECT_GT(p.background_rate, 0) << p.critical_sms;
    EXPECT_GE(p.critical.count, cfg.confirm_samples) << p.critical_sms;
  }
  // The chosen split can be made and used as it is.
  const auto set = partition_set::create(dev(), parse_partition_request(r.split()));
  EXPECT_EQ(set.parts()[0].obtained(), *r.exhaustive->chosen);
  EXPECT_FALSE(lines.empty());

  cfg.sizes = {12};
  EXPECT_THROW(measure::tune(dev(), measure::kernel_critical(dev(), 8, 10us),
                             measure::spin_background(dev(), 2, 100us), cfg),
               request_error);
  cfg.sizes = {};
  cfg.objective = {measure::tune_goal::p99_at_most_times_alone, 0.5};
  EXPECT_THROW(measure::check_tune_config(cfg), request_error);
}

} // namespace
} // namespace greenctx::test
