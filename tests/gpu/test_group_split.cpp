// SPDX-License-Identifier: Apache-2.0
// The heterogeneous split in C++ (split_groups): what it returns is proved. Groups whose clusters
// no driver promise backs are checked against an independent measurement of the same groups
// (proven_clusters on the pieces a split without proofs returns), so these tests hold on any GPU
// whose driver lacks cuDevSmResourceSplit, and say which way the H200 goes.
#include "gpu_fixture.hpp"

#include <algorithm>

namespace greenctx::test {
namespace {

class GroupSplitTest : public gpu_test {
protected:
  void SetUp() override {
    gpu_test::SetUp();
    if (IsSkipped())
      return;
    if (query_driver()[feature::heterogeneous_split].status == availability::native)
      GTEST_SKIP() << "this driver splits natively (cuDevSmResourceSplit): it keeps the promises";
    if (dev().compute_capability().first < 9)
      GTEST_SKIP() << "clusters need compute capability 9.0";
  }

  // Which groups of `request` run fewer clusters than they promise, measured on the groups a
  // split without proofs makes.
  std::vector<bool> short_groups(const std::string &request) {
    std::vector<sm_group_params> params = parse_group_params(request);
    const group_split_result r = split_groups(dev().sms(), params, {.proof = cluster_proof::skip});
    std::vector<bool> out;
    for (std::size_t i = 0; i < r.groups.size(); ++i) {
      const sm_group &g = r.groups[i];
      const unsigned want =
          clusters_promised(g.sm_count(), g.coscheduled, r.params[i].flags & sm_group_backfill);
      out.push_back(g.needs_cluster_check &&
                    proven_clusters(descriptor::from(g.pieces), g.coscheduled) < want);
    }
    return out;
  }
};

bool any(const std::vector<bool> &v) {
  return std::find(v.begin(), v.end(), true) != v.end();
}

// Clusters of 4 from IgnoreSmCoscheduling pieces of 4: on the H200 they measure 0 clusters of 4
// at once (measured on 2026-12-04 by the compat layer's test of the same request), so the split
// refuses.
TEST_F(GroupSplitTest, a_group_short_of_its_clusters_is_refused_or_reported) {
  const std::string request = "28:cosched=4:pref=4 32:cosched=4:pref=4";
  const std::vector<bool> shortfall = short_groups(request);
  ASSERT_EQ(shortfall.size(), 2u);
  if (dev().sms().sm_count() == 132)
    EXPECT_TRUE(any(shortfall)) << "the H200's pieces of 4 were measured short of clusters of 4";

  std::vector<sm_group_params> params = parse_group_params(request);
  if (!any(shortfall)) { // this GPU keeps the promise: the split is made and returns the groups
    const group_split_result r = split_groups(dev().sms(), params);
    EXPECT_TRUE(r.all_made());
    EXPECT_EQ(r.groups.size(), 2u);
    return;
  }
  try {
    split_groups(dev().sms(), params);
    ADD_FAILURE() << "a group short of its clusters was returned";
  } catch (const request_error &e) {
    const std::string why = e.what();
    EXPECT_EQ(e.code(), CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION);
    EXPECT_NE(why.find("clusters of 4 SMs at once, not the"), std::string::npos) << why;
    EXPECT_NE(why.find("Advice: "), std::string::npos) << why;
  }

  params = parse_group_params(request);
  const group_split_result reported =
      split_groups(dev().sms(), params, {.proof = cluster_proof::report});
  ASSERT_EQ(reported.outcomes.size(), 2u);
  EXPECT_FALSE(reported.all_made());
  EXPECT_FALSE(reported.advice.empty());
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(reported.outcomes[i].ok(), !shortfall[i]) << "group " << i;
    if (shortfall[i])
      EXPECT_NE(reported.outcomes[i].note.find("promises"), std::string::npos)
          << reported.outcomes[i].note;
  }
}

// The advice of that refusal names clusters of 2 as proved; asked for, they are returned.
TEST_F(GroupSplitTest, a_request_that_passes_its_proof_returns_its_groups) {
  const std::string request = "28:cosched=2:pref=2 32:cosched=2:pref=2";
  const std::vector<bool> shortfall = short_groups(request);
  std::vector<sm_group_params> params = parse_group_params(request);
  if (any(shortfall)) {
    EXPECT_THROW(split_groups(dev().sms(), params), request_error);
    return;
  }
  const group_split_result r = split_groups(dev().sms(), params);
  ASSERT_EQ(r.groups.size(), 2u);
  EXPECT_EQ(r.groups[0].sm_count(), 28u);
  EXPECT_EQ(r.groups[1].sm_count(), 32u);
  EXPECT_TRUE(r.all_made());
}

// A dry run returns no groups, so it proves none and refuses nothing it could plan.
TEST_F(GroupSplitTest, a_dry_run_proves_nothing) {
  std::vector<sm_group_params> params =
      parse_group_params("28:cosched=4:pref=4 32:cosched=4:pref=4");
  const group_split_result r = split_groups(dev().sms(), params, true);
  EXPECT_TRUE(r.groups.empty());
  ASSERT_EQ(r.outcomes.size(), 2u);
  EXPECT_EQ(r.outcomes[0].obtained, 28u);
  EXPECT_EQ(r.outcomes[1].obtained, 32u);
}

// Partitions promise no clusters and are not proved: IgnoreSmCoscheduling partitions, whose groups
// carry no driver promise, are still made.
TEST_F(GroupSplitTest, partitions_with_ignore_sm_coscheduling_are_made) {
  const partition_set set = partition_set::create(dev(), parse_partition_request("28,rest"),
                                                  split_flags::ignore_sm_coscheduling);
  ASSERT_EQ(set.parts().size(), 2u);
  EXPECT_EQ(set.parts()[0].obtained(), 28u);
}

} // namespace
} // namespace greenctx::test
