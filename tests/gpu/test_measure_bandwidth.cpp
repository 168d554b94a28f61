// SPDX-License-Identifier: Apache-2.0
// The bandwidth curve on the GPU: every point comes back with a rate, the whole device moves more
// than its fewest SMs, an L2-sized footprint moves faster than DRAM, a partition beside its rest
// gets at most what it gets alone, and the sides overlap; bad requests are refused before any GPU
// work.
#include "gpu_fixture.hpp"

#include <greenctx/measure/bandwidth.hpp>

namespace greenctx::test {
namespace {

using measure::memory_level;
using measure::memory_op;

class BandwidthTest : public gpu_test {};

TEST_F(BandwidthTest, the_curve_rises_and_sharing_takes_bandwidth) {
  measure::bandwidth_config cfg;
  const std::vector<unsigned> made = measure::tune_candidates(dev().sms());
  ASSERT_FALSE(made.empty());
  cfg.sizes = {made.front(), made.back()};
  cfg.ops = {memory_op::copy};
  cfg.repeats = 3;
  std::vector<std::string> lines;
  const measure::bandwidth_result r =
      measure::measure_bandwidth(dev(), cfg, [&](const std::string &l) { lines.push_back(l); });
  EXPECT_EQ(lines.size(), 2u); // one per level and op
  ASSERT_EQ(r.points.size(), 2u * 3u);
  EXPECT_GT(r.l2_bytes, 0u);
  const auto at = [&](memory_level level, std::size_t i) {
    return r.points.at(level == memory_level::dram ? i : 3 + i);
  };
  for (memory_level level : {memory_level::dram, memory_level::l2}) {
    const auto few = at(level, 0), all = at(level, 2);
    EXPECT_EQ(few.sms, made.front());
    EXPECT_TRUE(all.whole_device);
    EXPECT_GT(few.alone.gbs(), 0.0);
    EXPECT_GT(all.alone.gbs(), few.alone.gbs()) << measure::name(level);
    for (std::size_t i = 0; i < 2; ++i) {
      const auto p = at(level, i);
      ASSERT_TRUE(p.beside && p.rest_alone && p.rest_beside);
      EXPECT_TRUE(p.overlapped) << p.sms;
      EXPECT_LE(p.beside->gbs(), 1.1 * p.alone.gbs()) << p.sms;
      EXPECT_LE(p.rest_beside->gbs(), 1.1 * p.rest_alone->gbs()) << p.sms;
      EXPECT_EQ(p.sms + p.rest_sms, r.device_sms);
    }
  }
  EXPECT_GT(at(memory_level::l2, 2).alone.gbs(), at(memory_level::dram, 2).alone.gbs());
}

TEST_F(BandwidthTest, refuses_before_measuring) {
  measure::bandwidth_config cfg;
  cfg.sizes = {12};
  EXPECT_THROW(measure::measure_bandwidth(dev(), cfg), request_error);
  cfg.sizes = {};
  cfg.dram_bytes = 1 << 20;
  EXPECT_THROW(measure::measure_bandwidth(dev(), cfg), request_error);
  cfg.dram_bytes = std::size_t{1} << 30;
  cfg.ops = {};
  EXPECT_THROW(measure::measure_bandwidth(dev(), cfg), request_error);
}

} // namespace
} // namespace greenctx::test
