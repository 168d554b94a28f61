// SPDX-License-Identifier: Apache-2.0
// The scaling measurement on the GPU: a fixed-work kernel (each block a fixed number of dependent
// multiply-adds, launch_timed_work) runs alone on green contexts of 16, 64 and 128 SMs; with 16
// blocks resident per SM at most, its 1024 blocks need 4 waves on 16 SMs and one on 128, so the
// time on 16 SMs must be clearly longer. Counts a green context cannot have are refused, or
// rounded when asked, and said so.
#include "gpu_fixture.hpp"

#include <set>

namespace greenctx::test {
namespace {

using namespace std::chrono_literals;

class ScalingTest : public gpu_test {
protected:
  static measure::scaling_config quick() {
    measure::scaling_config cfg;
    cfg.samples = 20;
    cfg.warmup = 3;
    cfg.rounds = 2;
    return cfg;
  }
};

TEST_F(ScalingTest, fixed_work_takes_longer_on_fewer_sms) {
  if (dev().sms().sm_count() < 128)
    GTEST_SKIP() << "needs a GPU of 128 SMs or more (this one has " << dev().sms().sm_count()
                 << ")";
  constexpr unsigned blocks = 1024, threads = 128;
  const device_buffer stamps(dev(), 2 * sizeof(unsigned long long) * blocks);
  std::set<unsigned> seen;
  unsigned launches = 0;
  const measure::critical_workload work{"fixed work", [&](stream_ref s) {
                                          seen.insert(s.sms().sm_count());
                                          ++launches;
                                          launch_timed_work(s, blocks, 20000, threads, stamps);
                                        }};
  const auto cfg = quick();
  std::vector<std::string> lines;
  const measure::scaling_result r = measure::scaling(
      dev(), work, {128, 16, 64}, cfg, [&](const std::string &line) { lines.push_back(line); });
  EXPECT_EQ(r.workload_name, "fixed work");
  EXPECT_EQ(r.device_sms, dev().sms().sm_count());
  ASSERT_EQ(r.points.size(), 3u);
  EXPECT_EQ(r.points[0].sms, 16u); // ascending, whatever the order asked
  EXPECT_EQ(r.points[1].sms, 64u);
  EXPECT_EQ(r.points[2].sms, 128u);
  EXPECT_EQ(r.reference_sms, 128u);
  EXPECT_EQ(seen, (std::set<unsigned>{16, 64, 128})) << "a launch ran outside the counts' contexts";
  EXPECT_EQ(launches, 3 * (cfg.samples + cfg.warmup + std::min(cfg.warmup, 5u)));
  for (const auto &p : r.points) {
    EXPECT_EQ(p.requested, p.sms);
    EXPECT_TRUE(p.rounding.empty()) << p.rounding;
    EXPECT_EQ(p.time.gpu_us.size(), cfg.samples);
    EXPECT_EQ(p.time.gpu.count, cfg.samples);
    EXPECT_GT(p.time.gpu.p50, 0);
    EXPECT_TRUE(p.time.start_delay_us.empty()); // the workload gave no execution time
  }
  const auto &s16 = r.points[0], &s128 = r.points[2];
  EXPECT_GT(s16.time.gpu.p50, 3 * s128.time.gpu.p50)
      << "16 SMs: " << s16.time.gpu.p50 << " us, 128 SMs: " << s128.time.gpu.p50 << " us";
  EXPECT_DOUBLE_EQ(s128.speedup, 1);
  EXPECT_LT(s16.speedup, 1.0 / 3);
  EXPECT_DOUBLE_EQ(s16.ideal, 0.125);
  EXPECT_DOUBLE_EQ(s16.efficiency, s16.speedup / s16.ideal);
  EXPECT_FALSE(lines.empty());
}

TEST_F(ScalingTest, counts_are_refused_or_rounded_and_said_so) {
  const measure::critical_workload work{"tiny", [](stream_ref s) { launch_spin(s, 1, 1us, 32); }};
  const unsigned step = dev().sms().coscheduled_alignment();
  if (step < 2)
    GTEST_SKIP() << "every count is a size on this GPU (alignment " << step << ")";
  const unsigned odd = dev().sms().min_partition_size() + 1; // between two sizes
  try {
    measure::scaling(dev(), work, {odd}, quick());
    ADD_FAILURE() << odd << " SMs was measured as it is";
  } catch (const request_error &e) {
    EXPECT_NE(std::string(e.what()).find("round_counts"), std::string::npos) << e.what();
  }
  auto cfg = quick();
  cfg.round_counts = true;
  cfg.samples = 3;
  const auto r = measure::scaling(dev(), work, {odd}, cfg);
  ASSERT_EQ(r.points.size(), 1u);
  EXPECT_EQ(r.points[0].requested, odd);
  EXPECT_GT(r.points[0].sms, odd);
  EXPECT_FALSE(r.points[0].rounding.empty());
  EXPECT_THROW(measure::scaling(dev(), measure::critical_workload{"none", {}}, {}, quick()),
               request_error);
}

} // namespace
} // namespace greenctx::test
