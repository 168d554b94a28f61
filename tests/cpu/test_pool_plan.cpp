// SPDX-License-Identifier: Apache-2.0
// pool_plan.hpp: a pool's layouts as text ("all", "16,rest"), their names and duplicates.
#include "greenctx/plan/pool_plan.hpp"

#include "greenctx/plan/error.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using greenctx::layout_request;
using greenctx::parse_layout;
using greenctx::parse_layouts;
using greenctx::pool_piece_size;
using greenctx::request_error;

// The message of the request_error that parse_layouts throws for `texts` (fails the test if none).
std::string failure(const std::vector<std::string> &texts) {
  try {
    parse_layouts(texts);
  } catch (const request_error &e) {
    EXPECT_EQ(e.code(), CUDA_ERROR_INVALID_VALUE);
    return e.what();
  }
  ADD_FAILURE() << "no error for " << ::testing::PrintToString(texts);
  return {};
}

TEST(PoolPlan, all_is_the_whole_device_as_one_rest_partition) {
  const layout_request l = parse_layout(" all ");
  EXPECT_EQ(l.name, "all");
  EXPECT_TRUE(l.whole_device);
  EXPECT_TRUE(l.request.rest);
  EXPECT_TRUE(l.request.counts.empty());
}

TEST(PoolPlan, splits_are_named_canonically) {
  const layout_request l = parse_layout("16, 8 ,rest");
  EXPECT_EQ(l.name, "16,8,rest");
  EXPECT_FALSE(l.whole_device);
  EXPECT_EQ(l.request.counts, (std::vector<unsigned>{16, 8}));
  EXPECT_TRUE(l.request.rest);
  EXPECT_EQ(parse_layout("rest").name, "rest");
  EXPECT_FALSE(parse_layout("rest").whole_device) << "'rest' is a split request, not 'all'";
}

TEST(PoolPlan, layouts_keep_their_order) {
  const std::vector<std::string> texts{"64,rest", "all", "16,rest"};
  const auto out = parse_layouts(texts);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].name, "64,rest");
  EXPECT_EQ(out[1].name, "all");
  EXPECT_EQ(out[2].name, "16,rest");
}

TEST(PoolPlan, an_empty_list_is_refused_with_an_example) {
  const std::string m = failure({});
  EXPECT_NE(m.find("no layouts"), std::string::npos) << m;
  EXPECT_NE(m.find("16,rest"), std::string::npos) << m;
}

TEST(PoolPlan, duplicates_are_refused_after_canonical_naming) {
  std::string m = failure({"16,rest", "32,rest", "16, rest"});
  EXPECT_NE(m.find("'16, rest' is given twice"), std::string::npos) << m;
  EXPECT_NE(m.find("layout 0"), std::string::npos) << m;
  m = failure({"all", " all"});
  EXPECT_NE(m.find("given twice"), std::string::npos) << m;
}

TEST(PoolPlan, a_malformed_layout_names_itself_and_the_forms_that_work) {
  const std::string m = failure({"16,rest", "sixteen,rest"});
  EXPECT_NE(m.find("layout 'sixteen,rest'"), std::string::npos) << m;
  EXPECT_NE(m.find("'all'"), std::string::npos) << m;
  EXPECT_NE(m.find("neither a whole number"), std::string::npos) << m;
  EXPECT_THROW(parse_layout(""), request_error);
  EXPECT_THROW(parse_layout("rest,16"), request_error);
}

// The piece a pool of `texts` splits by on a GPU of `sms` SMs and `grain` (an H200's by default).
unsigned pool_piece(const std::vector<std::string> &texts, unsigned sms = 132,
                    greenctx::granularity grain = {8, 8}) {
  return pool_piece_size(parse_layouts(texts), sms, grain);
}

TEST(PoolPlan, every_layout_is_split_into_the_pieces_that_all_their_sizes_share) {
  // "16" alone would be one piece of 16; beside "16,8,rest" it is two pieces of 8, the same two
  // as in that layout, so that both layouts' first partitions are one green context.
  EXPECT_EQ(pool_piece({"16,rest", "16,8,rest", "16,64,rest"}), 8u);
  EXPECT_EQ(pool_piece({"16,rest", "16,16,rest", "32,rest", "all"}), 16u);
  EXPECT_EQ(pool_piece({"24,rest", "48,rest"}), 24u);
}

TEST(PoolPlan, no_common_piece_when_none_is_needed_or_none_fits) {
  EXPECT_EQ(pool_piece({"all", "rest"}), 0u);     // no layout is split
  EXPECT_EQ(pool_piece({"132"}), 0u);             // one partition of every SM
  EXPECT_EQ(pool_piece({"16,rest", "132"}), 16u); // the whole device takes no piece
  EXPECT_EQ(pool_piece({"24,rest", "16,rest"}), 8u);
  // On an Ampere GPU (minimum 4, alignment 2) 4 and 6 SMs share only pieces of 2, below the
  // minimum partition: each layout keeps its own piece.
  const greenctx::granularity ampere{4, 2};
  EXPECT_EQ(pool_piece({"4,rest", "6,rest"}, 108, ampere), 0u);
  EXPECT_EQ(pool_piece({"8,rest", "12,rest"}, 108, ampere), 4u);
}

TEST(PoolPlan, a_layout_that_cannot_be_planned_does_not_decide_the_piece) {
  // "200,rest" is refused by pool::create with its own message; the others still share.
  EXPECT_EQ(pool_piece({"16,rest", "200,rest", "32,rest"}), 16u);
}

} // namespace
