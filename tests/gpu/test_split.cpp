// SPDX-License-Identifier: Apache-2.0
// Split by count on the GPU: the measured rows of spec section 5, the count-only query, the
// driver's rules about splitting again and combining pieces.
#include "gpu_fixture.hpp"

#include <climits>

namespace greenctx::test {
namespace {

class SplitTest : public gpu_test {
protected:
  // The measured table is specific to the 132-SM H200 (CC 9.0).
  void require_h200() {
    if (dev().sms().sm_count() != 132 || dev().compute_capability().first != 9)
      GTEST_SKIP() << "the measured table is for a 132-SM CC 9.0 GPU; this one has "
                   << dev().sms().sm_count() << " SMs";
  }
};

struct row {
  unsigned min_count;
  split_flags flags;
  unsigned groups, size, left;
};

// Spec section 5, measured on the H200 with driver 580. Asking for many groups gives as many as
// fit.
const row measured[] = {
    {0, split_flags::none, 15, 8, 12},
    {1, split_flags::none, 15, 8, 12},
    {8, split_flags::none, 15, 8, 12},
    {10, split_flags::none, 8, 16, 4},
    {16, split_flags::none, 8, 16, 4},
    {24, split_flags::none, 5, 24, 12},
    {32, split_flags::none, 4, 32, 4},
    {40, split_flags::none, 3, 40, 12},
    {64, split_flags::none, 2, 64, 4},
    {66, split_flags::none, 1, 72, 60},
    {100, split_flags::none, 1, 104, 28},
    {132, split_flags::none, 1, 132, 0},
    {3, split_flags::ignore_sm_coscheduling, 33, 4, 0},
    {10, split_flags::ignore_sm_coscheduling, 13, 10, 2},
    {66, split_flags::ignore_sm_coscheduling, 2, 66, 0},
    {100, split_flags::ignore_sm_coscheduling, 1, 100, 32},
    {16, split_flags::max_potential_cluster_size, 8, 16, 4},
    {66, split_flags::max_potential_cluster_size, 1, 72, 60},
};

TEST_F(SplitTest, measured_table_of_spec_section_5) {
  require_h200();
  const sm_resource all = dev().sms();
  for (const row &r : measured) {
    SCOPED_TRACE("minCount " + std::to_string(r.min_count) + " flags " +
                 std::to_string(static_cast<unsigned>(r.flags)));
    const split_result s = split_by_count(all, 200, r.min_count, r.flags);
    ASSERT_EQ(s.groups.size(), r.groups);
    for (const auto &g : s.groups)
      EXPECT_EQ(g.sm_count(), r.size);
    EXPECT_EQ(s.remainder.sm_count(), r.left);
    EXPECT_EQ(count_groups(all, r.min_count, r.flags), r.groups);
    EXPECT_EQ(s.size.size, r.size);
    EXPECT_EQ(s.size.reason.empty(), r.size == r.min_count);
  }
}

TEST_F(SplitTest, asking_two_groups_gives_two_and_a_large_remainder) {
  require_h200();
  const split_result s = split_by_count(dev().sms(), 2, 16);
  ASSERT_EQ(s.groups.size(), 2u);
  EXPECT_EQ(s.groups[0].sm_count(), 16u);
  EXPECT_EQ(s.remainder.sm_count(), 100u);
  EXPECT_NE(s.explanation().find("2 x 16"), std::string::npos) << s.explanation();
}

// nbGroups is an upper bound: UINT_MAX gives as many groups as fit, without
// an allocation of UINT_MAX descriptors first.
TEST_F(SplitTest, the_largest_group_count_means_as_many_as_fit) {
  require_h200();
  const split_result s = split_by_count(dev().sms(), UINT_MAX, 8);
  EXPECT_EQ(s.groups.size(), 15u) << s.explanation();
  EXPECT_EQ(s.remainder.sm_count(), 12u);
}

TEST_F(SplitTest, rounding_is_explained) {
  const split_result s = split_by_count(dev().sms(), 1, 12);
  ASSERT_EQ(s.groups.size(), 1u);
  EXPECT_EQ(s.groups[0].sm_count(), 16u);
  EXPECT_NE(s.explanation().find("rounded up to 16"), std::string::npos) << s.explanation();
}

TEST_F(SplitTest, more_than_the_device_is_rejected_with_valid_sizes) {
  const sm_resource all = dev().sms();
  try {
    split_by_count(all, 1, all.sm_count() + 1);
    FAIL() << "no error";
  } catch (const request_error &e) {
    EXPECT_EQ(e.code(), CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION);
    EXPECT_NE(std::string(e.what()).find("Valid group sizes"), std::string::npos) << e.what();
  }
  EXPECT_THROW(split_by_count(all, 0, 8), request_error);
  EXPECT_THROW(count_groups(all, all.sm_count() + 1), request_error);
}

TEST_F(SplitTest, outputs_of_one_split_share_an_origin) {
  const split_result a = split_by_count(dev().sms(), 2, 8);
  const split_result b = split_by_count(dev().sms(), 2, 8);
  EXPECT_NE(a.groups[0].origin(), 0u);
  EXPECT_EQ(a.groups[0].origin(), a.groups[1].origin());
  EXPECT_EQ(a.groups[0].origin(), a.remainder.origin());
  EXPECT_NE(a.groups[0].origin(), b.groups[0].origin());
}

TEST_F(SplitTest, raw_split_output_cannot_be_split_again_but_a_context_resource_can) {
  const split_result s = split_by_count(dev().sms(), 1, 64);
  try {
    split_by_count(s.groups[0], 2, 8);
    FAIL() << "splitting a raw split output succeeded; the driver rejected it when measured";
  } catch (const error &e) {
    EXPECT_EQ(e.code(), CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION) << e.what();
  }
  const green_context gc = green_context::create(descriptor::from(s.groups[0]));
  const split_result again = split_by_count(gc.sms(), 2, 8);
  EXPECT_EQ(again.groups.size(), 2u);
  EXPECT_EQ(again.groups[0].sm_count(), 8u);
}

TEST_F(SplitTest, pieces_of_one_split_combine_into_one_descriptor) {
  const split_result s = split_by_count(dev().sms(), 3, 8);
  ASSERT_EQ(s.groups.size(), 3u);
  const descriptor d = descriptor::from(s.groups);
  EXPECT_EQ(d.sm_count(), 24u);
  const green_context gc = green_context::create(d);
  EXPECT_EQ(gc.sms().sm_count(), 24u);
  // A group and the remainder of the same split combine too.
  const descriptor with_rest = descriptor::from(std::vector{s.groups[0], s.remainder});
  EXPECT_EQ(with_rest.sm_count(), 8u + s.remainder.sm_count());
}

TEST_F(SplitTest, pieces_of_different_splits_are_refused_with_a_reason) {
  const split_result a = split_by_count(dev().sms(), 1, 8);
  const split_result b = split_by_count(dev().sms(), 1, 8);
  try {
    descriptor::from(std::vector{a.groups[0], b.groups[0]});
    FAIL() << "no error";
  } catch (const request_error &e) {
    EXPECT_NE(std::string(e.what()).find("same split call"), std::string::npos) << e.what();
  }
  EXPECT_THROW(descriptor::from(std::vector<sm_resource>{}), request_error);
}

// The content id that context recycling and pools share contexts by: equal for the same piece of
// two split calls with the same arguments, different for different pieces, 0 for a resource read
// back from a context (it holds no SM mask).
TEST_F(SplitTest, descriptors_of_the_same_pieces_have_one_content_id) {
  const split_result a = split_by_count(dev().sms(), 2, 16);
  const split_result b = split_by_count(dev().sms(), 2, 16);
  ASSERT_EQ(a.groups.size(), 2u);
  const descriptor a0 = descriptor::from(a.groups[0]);
  EXPECT_NE(a0.content_id(), 0u);
  EXPECT_EQ(a0.content_id(), descriptor::from(b.groups[0]).content_id());
  EXPECT_NE(a0.content_id(), descriptor::from(a.groups[1]).content_id());
  EXPECT_NE(a0.content_id(), descriptor::from(a.groups).content_id());
  EXPECT_EQ(descriptor::from(a.groups).content_id(), descriptor::from(b.groups).content_id());
  const green_context gc = green_context::create(a0);
  EXPECT_EQ(descriptor::from(gc.sms()).content_id(), 0u);
}

// Equal pieces share one driver descriptor (made once); other pieces and pieces without identity
// get their own, and a green context made from the shared one runs on the same SMs.
TEST_F(SplitTest, descriptors_of_the_same_pieces_share_the_driver_descriptor) {
  const split_result a = split_by_count(dev().sms(), 1, 16);
  const split_result b = split_by_count(dev().sms(), 1, 16);
  ASSERT_EQ(a.groups.size(), 1u);
  const descriptor a0 = descriptor::from(a.groups[0]);
  const descriptor b0 = descriptor::from(b.groups[0]);
  ASSERT_NE(a0.native_handle(), nullptr);
  EXPECT_EQ(a0.native_handle(), b0.native_handle());
  EXPECT_EQ(a0.sm_count(), b0.sm_count());
  EXPECT_NE(a0.native_handle(), descriptor::from(a.remainder).native_handle());
  const green_context from_a = green_context::create(a0);
  const green_context from_b = green_context::create(b0);
  EXPECT_NE(descriptor::from(from_a.sms()).native_handle(),
            descriptor::from(from_a.sms()).native_handle())
      << "resources without identity (content id 0) must not share a descriptor";
  EXPECT_EQ(from_a.sms().sm_count(), from_b.sms().sm_count());
}

} // namespace
} // namespace greenctx::test
