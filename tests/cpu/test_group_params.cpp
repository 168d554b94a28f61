// SPDX-License-Identifier: Apache-2.0
// The group-parameter rules of the 13.1 heterogeneous split (pure).
#include <greenctx/plan/error.hpp>
#include <greenctx/plan/group_params.hpp>

#include <gtest/gtest.h>

#include <vector>

namespace greenctx {
namespace {

const group_limits h200 = make_group_limits(132, {8, 8}, 9);

std::string failure(std::vector<sm_group_params> groups, const group_limits &limits = h200) {
  try {
    apply_group_defaults(groups, limits);
  } catch (const request_error &e) {
    return e.what();
  }
  return {};
}

bool has(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

TEST(GroupParams, DefaultsAreWrittenBack) {
  std::vector<sm_group_params> g{{16, 0, 0, 0}, {0, 2, 0, 0}, {16, 16, 0, 0}};
  apply_group_defaults(g, h200);
  EXPECT_EQ(g[0], (sm_group_params{16, 8, 8, 0}));
  EXPECT_EQ(g[1], (sm_group_params{0, 2, 8, 0})); // discovery keeps smCount 0 here
  EXPECT_EQ(g[2], (sm_group_params{16, 16, 16, 0}));
}

TEST(GroupParams, TheGuidesExamplesAreValid) {
  // Spec section 3, each from the whole 132-SM device.
  const std::vector<std::vector<sm_group_params>> examples = {
      {{16, 0, 0, 0}},
      {{16, 2, 2, 0}},
      {{16, 2, 2, 0}, {0, 2, 2, sm_group_backfill}},
      {{28, 4, 4, 0}, {32, 4, 4, 0}},
      {{0, 8, 8, 0}},
      {{8, 2, 2, 0}, {0, 4, 4, 0}},
  };
  for (auto g : examples)
    EXPECT_NO_THROW(apply_group_defaults(g, h200)) << failure(g);
}

TEST(GroupParams, NoGroupsIsInvalidValue) {
  std::vector<sm_group_params> none;
  try {
    apply_group_defaults(none, h200);
    FAIL();
  } catch (const request_error &e) {
    EXPECT_EQ(e.code(), CUDA_ERROR_INVALID_VALUE);
  }
}

TEST(GroupParams, OddCountsAreRefusedWithTheNeighbours) {
  const std::string why = failure({{13, 2, 2, 0}});
  EXPECT_TRUE(has(why, "group 0")) << why;
  EXPECT_TRUE(has(why, "odd")) << why;
  EXPECT_TRUE(has(why, "12 or 14")) << why;
  EXPECT_TRUE(has(failure({{1, 2, 2, 0}}), "use 2)"));
}

TEST(GroupParams, CountsMustBeMultiplesOfTheCoscheduledCountWithoutBackfill) {
  const std::string why = failure({{12, 0, 0, 0}});
  EXPECT_TRUE(has(why, "not a multiple of coscheduledSmCount 8")) << why;
  EXPECT_TRUE(has(why, "use 8 or 16")) << why;
  EXPECT_TRUE(has(why, "coscheduledSmCount 2, 4, 6 or 12")) << why;
  EXPECT_TRUE(has(why, "Backfill")) << why;
  // The same count is fine with Backfill, which needs only >= the co-scheduled count.
  EXPECT_EQ(failure({{12, 0, 0, sm_group_backfill}}), "");
  EXPECT_TRUE(has(failure({{6, 0, 0, sm_group_backfill}}), "at least the co-scheduled count"));
}

TEST(GroupParams, CountsAboveTheInputAreRefused) {
  const std::string why = failure({{136, 8, 8, 0}});
  EXPECT_TRUE(has(why, "more than the input's 132 SMs")) << why;
  EXPECT_EQ(failure({{132, 2, 2, 0}}), "");
}

TEST(GroupParams, CoscheduledCountsAreEvenAndBounded) {
  EXPECT_TRUE(has(failure({{16, 3, 0, 0}}), "use 2"));
  EXPECT_TRUE(has(failure({{64, 64, 0, 0}}), "from 2 to 32"));
  EXPECT_EQ(failure({{64, 32, 0, 0}}), "");
  // Below CC 9.0 there are no clusters: only 2.
  const group_limits ampere = make_group_limits(108, {4, 2}, 8);
  EXPECT_TRUE(has(failure({{16, 8, 0, 0}}, ampere), "no thread-block clusters"));
  std::vector<sm_group_params> g{{16, 0, 0, 0}};
  apply_group_defaults(g, ampere);
  EXPECT_EQ(g[0].coscheduled_sm_count, 2u);
}

TEST(GroupParams, PreferredMustBeAMultipleOfTheCoscheduledCount) {
  const std::string why = failure({{32, 8, 12, 0}});
  EXPECT_TRUE(has(why, "preferredCoscheduledSmCount 12")) << why;
  EXPECT_TRUE(has(why, "use 8")) << why;
  EXPECT_EQ(failure({{32, 8, 16, 0}}), "");
}

TEST(GroupParams, UnknownFlagsAreInvalidValue) {
  std::vector<sm_group_params> g{{16, 0, 0, 2}};
  try {
    apply_group_defaults(g, h200);
    FAIL();
  } catch (const request_error &e) {
    EXPECT_EQ(e.code(), CUDA_ERROR_INVALID_VALUE);
    EXPECT_TRUE(has(e.what(), "unknown flags 2"));
  }
}

TEST(GroupParams, LaterGroupsAreNamedAndEarlierDefaultsStillWritten) {
  std::vector<sm_group_params> g{{16, 0, 0, 0}, {10, 0, 0, 0}};
  try {
    apply_group_defaults(g, h200);
    FAIL();
  } catch (const request_error &e) {
    EXPECT_TRUE(has(e.what(), "group 1")) << e.what();
    EXPECT_EQ(e.code(), CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION);
  }
  EXPECT_EQ(g[0].coscheduled_sm_count, 8u);
  EXPECT_EQ(g[1].coscheduled_sm_count, 8u);
}

} // namespace
} // namespace greenctx

namespace greenctx {
namespace {

TEST(ParseGroupParams, ReadsTheCliSyntax) {
  const auto g = parse_group_params("16:cosched=2:pref=2 0:backfill, 8");
  ASSERT_EQ(g.size(), 3u);
  EXPECT_EQ(g[0], (sm_group_params{16, 2, 2, 0}));
  EXPECT_EQ(g[1], (sm_group_params{0, 0, 0, sm_group_backfill}));
  EXPECT_EQ(g[2], (sm_group_params{8, 0, 0, 0}));
  EXPECT_EQ(to_string(g[0]), "{16, 2, 2, 0}");
}

TEST(ParseGroupParams, TheGuidesExamplesRoundTrip) {
  auto g = parse_group_params("28:cosched=4:pref=4 32:cosched=4:pref=4");
  apply_group_defaults(g, make_group_limits(132, {8, 8}, 9));
  EXPECT_EQ(to_string(g[0]) + " " + to_string(g[1]), "{28, 4, 4, 0} {32, 4, 4, 0}");
}

TEST(ParseGroupParams, BadItemsAreNamed) {
  const auto message = [](const char *text) {
    try {
      parse_group_params(text);
    } catch (const request_error &e) {
      EXPECT_EQ(e.code(), CUDA_ERROR_INVALID_VALUE);
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("").find("no groups"), std::string::npos);
  EXPECT_NE(message("x").find("not an SM count"), std::string::npos);
  EXPECT_NE(message("16:cosched=").find("needs a whole number"), std::string::npos);
  EXPECT_NE(message("16 8:clusters=4").find("group 1"), std::string::npos);
  EXPECT_NE(message("16:fast").find("unknown option 'fast'"), std::string::npos);
  EXPECT_NE(message("-4").find("not an SM count"), std::string::npos);
}

} // namespace
} // namespace greenctx

TEST(GroupParams, ClustersPromisedFollowTheGroupsUnitsAndBackfill) {
  using greenctx::clusters_promised;
  EXPECT_EQ(clusters_promised(16, 8, false), 2u);
  EXPECT_EQ(clusters_promised(28, 4, false), 7u);
  EXPECT_EQ(clusters_promised(28, 8, false), 3u); // only whole units
  EXPECT_EQ(clusters_promised(28, 8, true), 1u);  // Backfill promises one cluster
  EXPECT_EQ(clusters_promised(4, 8, false), 0u);  // smaller than one unit: nothing whole
  EXPECT_EQ(clusters_promised(16, 1, false), 0u); // no co-scheduling, no promise
  EXPECT_EQ(clusters_promised(16, 0, true), 0u);
}
