// SPDX-License-Identifier: Apache-2.0
// Where kernels run, as the hardware reports it (%smid per block).
#include "gpu_fixture.hpp"

#include <algorithm>
#include <iterator>

namespace greenctx::test {
namespace {

class ConfinementTest : public gpu_test {
protected:
  std::vector<unsigned> run_probe(execution_context_ref ctx, unsigned blocks) {
    const stream s = ctx.create_stream();
    const sm_probe probe(dev(), blocks);
    probe.launch(s);
    s.synchronize();
    return probe.sms_used();
  }
};

TEST_F(ConfinementTest, a_16_sm_context_uses_exactly_16_sms_and_the_rest_the_rest) {
  const partition_set set = partition_set::create(dev(), parse_partition_request("16,rest"));
  const auto small = run_probe(set.parts()[0].context, 2000);
  const auto rest = run_probe(set.parts()[1].context, 8000);
  EXPECT_EQ(small.size(), 16u);
  EXPECT_EQ(rest.size(), dev().sms().sm_count() - 16);
  std::vector<unsigned> both;
  std::set_intersection(small.begin(), small.end(), rest.begin(), rest.end(),
                        std::back_inserter(both));
  EXPECT_TRUE(both.empty()) << both.size() << " SMs used by both partitions";
}

TEST_F(ConfinementTest, primary_context_uses_every_sm) {
  const auto all = run_probe(dev().primary_context(), 8000);
  EXPECT_EQ(all.size(), dev().sms().sm_count());
}

TEST_F(ConfinementTest, verify_reports_disjoint_partitions) {
  for (const char *split : {"16,rest", "8,8,rest", "16,8,rest"}) {
    SCOPED_TRACE(split);
    const partition_set set = partition_set::create(dev(), parse_partition_request(split));
    const verify_report report = verify_partitions(dev(), set);
    EXPECT_TRUE(report.ok()) << (report.violations.empty() ? "" : report.violations.front());
    ASSERT_EQ(report.parts.size(), set.parts().size());
    for (std::size_t i = 0; i < report.parts.size(); ++i)
      EXPECT_EQ(report.parts[i].sms.size(), set.parts()[i].obtained()) << "partition " << i;
  }
}

TEST_F(ConfinementTest, two_contexts_from_one_descriptor_share_their_sms) {
  const split_result s = split_by_count(dev().sms(), 1, 16);
  const descriptor d = descriptor::from(s.groups[0]);
  const green_context a = green_context::create(d), b = green_context::create(d);
  EXPECT_EQ(run_probe(a, 2000), run_probe(b, 2000));
}

TEST_F(ConfinementTest, partitions_stay_confined_while_all_are_busy) {
  // verify_partitions queues the probes back to back and times them: they must overlap in time,
  // and neither may spill into the other meanwhile.
  const partition_set set = partition_set::create(dev(), parse_partition_request("16,rest"));
  const verify_report report = verify_partitions(dev(), set, 16, std::chrono::microseconds(200));
  ASSERT_TRUE(report.timed);
  EXPECT_GT(report.min_overlap_us, 0.0) << "the probes did not run at the same time";
  EXPECT_TRUE(report.ok()) << (report.violations.empty() ? "" : report.violations.front());
  EXPECT_EQ(report.parts[0].sms.size(), 16u);
  EXPECT_EQ(report.parts[1].sms.size(), dev().sms().sm_count() - 16);
}

} // namespace
} // namespace greenctx::test
