// SPDX-License-Identifier: Apache-2.0
// partition_plan.hpp: parsing "16,rest" and planning disjoint partitions from one split by count.
// Plans are checked against the 132-SM H200 with the CC 9.0 granularity of 8/8 (spec §5).
#include "greenctx/plan/partition_plan.hpp"

#include "greenctx/plan/error.hpp"

#include "text_checks.hpp"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace {

using greenctx::partition_plan;
using greenctx::partition_request;
using greenctx_test::contains;
using greenctx_test::mentions_number;

constexpr unsigned h200_sms = 132;
constexpr greenctx::granularity hopper{8, 8};

// The request_error that parsing `text` throws, or nullopt when it parses.
std::optional<greenctx::request_error> parse_failure(std::string_view text) {
  try {
    greenctx::parse_partition_request(text);
  } catch (const greenctx::request_error &e) {
    return e;
  }
  return std::nullopt;
}

// The request_error that planning `text` on the H200 throws, or nullopt when it plans.
std::optional<greenctx::request_error> plan_failure(std::string_view text) {
  const partition_request request = greenctx::parse_partition_request(text);
  try {
    greenctx::plan_partitions(request, h200_sms, hopper);
  } catch (const greenctx::request_error &e) {
    return e;
  }
  return std::nullopt;
}

partition_plan plan_on_h200(std::string_view text) {
  return greenctx::plan_partitions(greenctx::parse_partition_request(text), h200_sms, hopper);
}

// ---- parse_partition_request: accepted ---------------------------------------------------------

TEST(ParsePartitionRequest, CountThenRest) {
  const auto r = greenctx::parse_partition_request("16,rest");
  EXPECT_EQ(r.counts, (std::vector<unsigned>{16}));
  EXPECT_TRUE(r.rest);
}

TEST(ParsePartitionRequest, SpacesAroundItemsAreIgnored) {
  const auto r = greenctx::parse_partition_request(" 8 , 8 , rest ");
  EXPECT_EQ(r.counts, (std::vector<unsigned>{8, 8}));
  EXPECT_TRUE(r.rest);
}

TEST(ParsePartitionRequest, SingleCountWithoutRest) {
  const auto r = greenctx::parse_partition_request("132");
  EXPECT_EQ(r.counts, (std::vector<unsigned>{132}));
  EXPECT_FALSE(r.rest);
}

TEST(ParsePartitionRequest, RestAlone) {
  const auto r = greenctx::parse_partition_request("rest");
  EXPECT_TRUE(r.counts.empty());
  EXPECT_TRUE(r.rest);
}

// ---- parse_partition_request: rejected ---------------------------------------------------------

struct bad_split {
  const char *text;
  const char *names; // a word the message must contain to name the problem
};

TEST(ParsePartitionRequest, RejectsMalformedSplitsWithAnExplanation) {
  const bad_split cases[] = {
      {"", "empty"},         {",", "empty"},
      {"16,,rest", "empty"}, {"0,rest", "0 SMs"},
      {"-4,rest", "-4"},     {"abc", "abc"},
      {"16,rest,8", "last"}, {"rest,rest", "rest"},
      {"1.5", "1.5"},        {"99999999999999999999", "99999999999999999999"},
  };
  for (const auto &c : cases) {
    SCOPED_TRACE(std::string("split '") + c.text + "'");
    const auto failure = parse_failure(c.text);
    ASSERT_TRUE(failure.has_value()) << "was accepted";
    EXPECT_EQ(failure->code(), CUDA_ERROR_INVALID_VALUE);
    EXPECT_FALSE(failure->api().empty());
    EXPECT_TRUE(contains(failure->what(), c.names));
  }
}

// ---- to_string ---------------------------------------------------------------------------------

TEST(PartitionRequestToString, WritesTheCanonicalForm) {
  EXPECT_EQ((partition_request{{16, 8}, true}).to_string(), "16,8,rest");
  EXPECT_EQ((partition_request{{132}, false}).to_string(), "132");
  EXPECT_EQ((partition_request{{}, true}).to_string(), "rest");
}

TEST(PartitionRequestToString, RoundTripsThroughTheParser) {
  for (const char *text : {"16,rest", "8,8,rest", "16,8,rest", "132", "rest", "24,40"}) {
    SCOPED_TRACE(text);
    const auto parsed = greenctx::parse_partition_request(text);
    EXPECT_EQ(parsed.to_string(), text);
    const auto again = greenctx::parse_partition_request(parsed.to_string());
    EXPECT_EQ(again.counts, parsed.counts);
    EXPECT_EQ(again.rest, parsed.rest);
  }
  EXPECT_EQ(greenctx::parse_partition_request(" 8 , 8 , rest ").to_string(), "8,8,rest");
}

// ---- plan_partitions ---------------------------------------------------------------------------

TEST(PlanPartitions, SixteenAndRest) {
  const auto plan = plan_on_h200("16,rest");
  EXPECT_EQ(plan.device_sms, h200_sms);
  EXPECT_EQ(plan.grain, hopper);
  EXPECT_EQ(plan.piece_size, 16u);
  EXPECT_EQ(plan.groups, 1u);
  ASSERT_EQ(plan.parts.size(), 2u);

  EXPECT_EQ(plan.parts[0].requested, 16u);
  EXPECT_EQ(plan.parts[0].planned, 16u);
  EXPECT_FALSE(plan.parts[0].rest);
  EXPECT_EQ(plan.parts[0].first_piece, 0u);
  EXPECT_EQ(plan.parts[0].pieces, 1u);
  EXPECT_TRUE(plan.parts[0].rounding.empty()) << plan.parts[0].rounding;

  EXPECT_TRUE(plan.parts[1].rest);
  EXPECT_EQ(plan.parts[1].requested, 0u);
  EXPECT_EQ(plan.parts[1].planned, 116u);
  EXPECT_EQ(plan.parts[1].pieces, 0u);
}

TEST(PlanPartitions, TwoEightsAndRest) {
  const auto plan = plan_on_h200("8,8,rest");
  EXPECT_EQ(plan.piece_size, 8u);
  EXPECT_EQ(plan.groups, 2u);
  ASSERT_EQ(plan.parts.size(), 3u);
  EXPECT_EQ(plan.parts[0].planned, 8u);
  EXPECT_EQ(plan.parts[0].first_piece, 0u);
  EXPECT_EQ(plan.parts[0].pieces, 1u);
  EXPECT_EQ(plan.parts[1].planned, 8u);
  EXPECT_EQ(plan.parts[1].first_piece, 1u);
  EXPECT_EQ(plan.parts[1].pieces, 1u);
  EXPECT_TRUE(plan.parts[2].rest);
  EXPECT_EQ(plan.parts[2].planned, 116u);
}

TEST(PlanPartitions, DifferentSizesAreBuiltFromCommonPieces) {
  // 16 and 8 from one split: three pieces of 8, the first partition takes pieces 0 and 1.
  const auto plan = plan_on_h200("16,8,rest");
  EXPECT_EQ(plan.piece_size, 8u);
  EXPECT_EQ(plan.groups, 3u);
  ASSERT_EQ(plan.parts.size(), 3u);
  EXPECT_EQ(plan.parts[0].planned, 16u);
  EXPECT_EQ(plan.parts[0].first_piece, 0u);
  EXPECT_EQ(plan.parts[0].pieces, 2u);
  EXPECT_EQ(plan.parts[1].planned, 8u);
  EXPECT_EQ(plan.parts[1].first_piece, 2u);
  EXPECT_EQ(plan.parts[1].pieces, 1u);
  EXPECT_TRUE(plan.parts[2].rest);
  EXPECT_EQ(plan.parts[2].planned, 108u);
}

TEST(PlanPartitions, RoundsUpAndSaysSo) {
  const auto plan = plan_on_h200("12,rest");
  ASSERT_EQ(plan.parts.size(), 2u);
  EXPECT_EQ(plan.parts[0].requested, 12u);
  EXPECT_EQ(plan.parts[0].planned, 16u);
  EXPECT_FALSE(plan.parts[0].rounding.empty());
  EXPECT_TRUE(mentions_number(plan.parts[0].rounding, 16));
  EXPECT_EQ(plan.parts[1].planned, 116u);
}

TEST(PlanPartitions, WholeDeviceIsTheDeviceWithoutASplit) {
  const auto plan = plan_on_h200("132");
  EXPECT_EQ(plan.groups, 0u);
  ASSERT_EQ(plan.parts.size(), 1u);
  EXPECT_EQ(plan.parts[0].planned, 132u);
  EXPECT_FALSE(plan.parts[0].rest);
  EXPECT_TRUE(plan.parts[0].rounding.empty()) << plan.parts[0].rounding;
}

TEST(PlanPartitions, ACountJustBelowTheDeviceBecomesTheWholeDevice) {
  // 130 rounds to 136, more than the GPU has; the only group that large is all 132 SMs.
  const auto plan = plan_on_h200("130");
  EXPECT_EQ(plan.groups, 0u);
  ASSERT_EQ(plan.parts.size(), 1u);
  EXPECT_EQ(plan.parts[0].requested, 130u);
  EXPECT_EQ(plan.parts[0].planned, 132u);
  EXPECT_FALSE(plan.parts[0].rounding.empty());
  EXPECT_TRUE(mentions_number(plan.parts[0].rounding, 132));
}

TEST(PlanPartitions, RestAloneIsTheWholeDeviceWithoutASplit) {
  const auto plan = plan_on_h200("rest");
  EXPECT_EQ(plan.groups, 0u);
  ASSERT_EQ(plan.parts.size(), 1u);
  EXPECT_TRUE(plan.parts[0].rest);
  EXPECT_EQ(plan.parts[0].planned, 132u);
}

TEST(PlanPartitions, PiecesAddUpForEveryPlan) {
  for (const char *text : {"16,rest", "8,8,rest", "16,8,rest", "12,rest", "24,40", "64,64"}) {
    SCOPED_TRACE(text);
    const auto plan = plan_on_h200(text);
    unsigned next_piece = 0;
    unsigned total = 0;
    for (const auto &part : plan.parts) {
      total += part.planned;
      if (part.rest)
        continue;
      EXPECT_EQ(part.first_piece, next_piece);
      EXPECT_EQ(part.planned, part.pieces * plan.piece_size);
      next_piece += part.pieces;
    }
    EXPECT_EQ(next_piece, plan.groups);
    EXPECT_LE(total, h200_sms);
    if (plan.parts.back().rest) {
      EXPECT_EQ(total, h200_sms);
    }
  }
}

TEST(PlanPartitions, FlagsAndGranularityAreRecorded) {
  const auto fine =
      greenctx::documented_granularity(9, 0, greenctx::split_flags::ignore_sm_coscheduling);
  const auto plan =
      greenctx::plan_partitions(greenctx::parse_partition_request("10,rest"), h200_sms, fine,
                                greenctx::split_flags::ignore_sm_coscheduling);
  EXPECT_EQ(plan.flags, greenctx::split_flags::ignore_sm_coscheduling);
  EXPECT_EQ(plan.grain, fine);
  ASSERT_EQ(plan.parts.size(), 2u);
  EXPECT_EQ(plan.parts[0].planned, 10u); // §5: IgnoreSmCoscheduling, minCount 10 -> groups of 10
  EXPECT_EQ(plan.parts[1].planned, 122u);
}

// ---- plan_partitions: rejected -----------------------------------------------------------------

TEST(PlanPartitions, MoreThanTheDeviceIsRejected) {
  const auto failure = plan_failure("136");
  ASSERT_TRUE(failure.has_value());
  EXPECT_EQ(failure->code(), CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION);
  EXPECT_TRUE(mentions_number(failure->what(), 132)); // says what the GPU has
}

TEST(PlanPartitions, PartitionsAddingUpPastTheDeviceAreRejected) {
  const auto failure = plan_failure("128,8");
  ASSERT_TRUE(failure.has_value());
  EXPECT_EQ(failure->code(), CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION);
  EXPECT_TRUE(mentions_number(failure->what(), 132));
}

TEST(PlanPartitions, TwoLargeHalvesAreRejected) {
  const auto failure = plan_failure("72,72");
  ASSERT_TRUE(failure.has_value());
  EXPECT_EQ(failure->code(), CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION);
  EXPECT_TRUE(mentions_number(failure->what(), 132));
}

TEST(PlanPartitions, RestWithNothingLeftIsRejected) {
  const auto failure = plan_failure("132,rest");
  ASSERT_TRUE(failure.has_value());
  EXPECT_EQ(failure->code(), CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION);
  EXPECT_TRUE(contains(failure->what(), "rest"));
}

// ---- plan_partitions with a given piece (a pool's) ---------------------------------------------

TEST(PlanPartitions, AGivenPieceThatDividesEverySizeIsUsed) {
  const auto request = greenctx::parse_partition_request("16,rest");
  const auto own = greenctx::plan_partitions(request, h200_sms, hopper);
  EXPECT_EQ(own.piece_size, 16u);
  EXPECT_EQ(own.groups, 1u);
  const auto fine = greenctx::plan_partitions(request, h200_sms, hopper, {}, 8);
  EXPECT_EQ(fine.piece_size, 8u);
  EXPECT_EQ(fine.groups, 2u);
  EXPECT_EQ(fine.parts.at(0).pieces, 2u);
  EXPECT_EQ(fine.parts.at(0).planned, 16u);
  EXPECT_EQ(fine.parts.at(1).planned, own.parts.at(1).planned);
}

TEST(PlanPartitions, AGivenPieceThatDoesNotDivideOrIsTooSmallIsRefused) {
  const auto request = greenctx::parse_partition_request("24,rest");
  for (unsigned piece : {16u, 4u}) {
    SCOPED_TRACE(piece);
    try {
      greenctx::plan_partitions(request, h200_sms, hopper, {}, piece);
      ADD_FAILURE() << "planned with pieces of " << piece;
    } catch (const greenctx::request_error &e) {
      const std::string m = e.what();
      EXPECT_TRUE(contains(m, "pieces of " + std::to_string(piece) + " SMs were asked for")) << m;
      EXPECT_TRUE(contains(m, "(24 does)")) << m;
    }
  }
}

} // namespace

// ---- every GPU generation with green contexts
// ---------------------------------------------------- One GPU of each compute capability
// generation, with its SM count and the granularity the driver reports for it
// (documented_granularity: CC 7.x 2/2, 8.x 4/2, 9.0 and newer 8/8).
struct generation {
  const char *gpu;
  int major, minor;
  unsigned sms;
  unsigned three_becomes; // "3,rest": what the first partition is rounded to
};

class PlanOnEachGeneration : public ::testing::TestWithParam<generation> {};

TEST_P(PlanOnEachGeneration, SplitsRoundsAndRefusesAsTheDriverWould) {
  const generation g = GetParam();
  const greenctx::granularity grain = greenctx::documented_granularity(g.major, g.minor);
  const auto plan = [&](std::string_view text) {
    return greenctx::plan_partitions(greenctx::parse_partition_request(text), g.sms, grain);
  };
  const partition_plan sixteen = plan("16,rest");
  ASSERT_EQ(sixteen.parts.size(), 2u) << g.gpu;
  EXPECT_EQ(sixteen.parts[0].planned, 16u) << g.gpu;
  EXPECT_EQ(sixteen.parts[1].planned, g.sms - 16) << g.gpu;
  EXPECT_TRUE(sixteen.parts[0].rounding.empty()) << g.gpu;

  const partition_plan three = plan("3,rest");
  EXPECT_EQ(three.parts[0].planned, g.three_becomes) << g.gpu;
  EXPECT_TRUE(mentions_number(three.parts[0].rounding, g.three_becomes))
      << g.gpu << ": " << three.parts[0].rounding;

  try {
    plan(std::to_string(g.sms + grain.alignment) + ",rest");
    ADD_FAILURE() << g.gpu << ": more SMs than the GPU has were planned";
  } catch (const greenctx::request_error &e) {
    EXPECT_TRUE(mentions_number(e.what(), g.sms)) << g.gpu << ": " << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(Generations, PlanOnEachGeneration,
                         ::testing::Values(generation{"T4 (Turing, 7.5)", 7, 5, 40, 4},
                                           generation{"A100 (Ampere, 8.0)", 8, 0, 108, 4},
                                           generation{"L40S (Ada, 8.9)", 8, 9, 142, 4},
                                           generation{"H100 (Hopper, 9.0)", 9, 0, 132, 8},
                                           generation{"B200 (Blackwell, 10.0)", 10, 0, 148, 8},
                                           generation{"RTX PRO 6000 (Blackwell, 12.0)", 12, 0, 188,
                                                      8}),
                         [](const ::testing::TestParamInfo<generation> &info) {
                           return "cc" + std::to_string(info.param.major) +
                                  std::to_string(info.param.minor);
                         });
