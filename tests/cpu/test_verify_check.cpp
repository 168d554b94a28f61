// SPDX-License-Identifier: Apache-2.0
// verify.hpp, the pure half: checking measured SM usage and drawing the SM map.
#include "greenctx/plan/verify_check.hpp"

#include "text_checks.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using greenctx::partition_usage;
using greenctx_test::contains;
using greenctx_test::mentions_number;

// SM ids first, first + 1, ..., last.
std::vector<unsigned> ids(unsigned first, unsigned last) {
  std::vector<unsigned> out;
  for (unsigned id = first; id <= last; ++id)
    out.push_back(id);
  return out;
}

// "16,rest" on the 132-SM H200 as it should look: 0..15 and 16..131.
std::vector<partition_usage> clean_16_rest() {
  return {{"16", 16, 16, ids(0, 15)}, {"rest", 0, 116, ids(16, 131)}};
}

// ---- check_usage -------------------------------------------------------------------------------

TEST(CheckUsage, DisjointPartitionsWithinTheirShareAreOk) {
  const auto report = greenctx::check_usage(clean_16_rest(), 132);
  EXPECT_TRUE(report.ok());
  EXPECT_TRUE(report.violations.empty());
  EXPECT_TRUE(report.notes.empty());
  ASSERT_EQ(report.parts.size(), 2u);
  EXPECT_EQ(report.parts[0].label, "16");
  EXPECT_EQ(report.parts[1].label, "rest");
  EXPECT_EQ(report.parts[1].sms.size(), 116u);
}

TEST(CheckUsage, MoreSmsThanObtainedIsAViolation) {
  // "rest" holds 116 SMs but its blocks ran on 117.
  auto parts = clean_16_rest();
  parts[0].sms = ids(0, 14);
  parts[1].sms = ids(15, 131);
  const auto report = greenctx::check_usage(parts, 132);
  EXPECT_FALSE(report.ok());
  ASSERT_EQ(report.violations.size(), 1u);
  EXPECT_TRUE(contains(report.violations[0], "rest"));
  EXPECT_TRUE(mentions_number(report.violations[0], 117));
}

TEST(CheckUsage, AnSmUsedByTwoPartitionsIsAViolationNamingBothAndTheSm) {
  // Each partition stays within its count, but SM 5 appears in both.
  auto parts = clean_16_rest();
  parts[1].sms = ids(17, 131);
  parts[1].sms.insert(parts[1].sms.begin(), 5);
  ASSERT_EQ(parts[1].sms.size(), 116u);
  const auto report = greenctx::check_usage(parts, 132);
  EXPECT_FALSE(report.ok());
  ASSERT_EQ(report.violations.size(), 1u);
  const std::string &v = report.violations[0];
  EXPECT_TRUE(mentions_number(v, 16)); // partition "16"
  EXPECT_TRUE(contains(v, "rest"));
  EXPECT_TRUE(mentions_number(v, 5));
}

TEST(CheckUsage, SharingBetweenPartitionsThatAreNotNeighboursIsCaught) {
  // The first and the last partition share SM 3; the middle one is clean.
  std::vector<partition_usage> parts = {
      {"8", 8, 8, ids(0, 7)}, {"16", 16, 16, ids(8, 23)}, {"rest", 0, 108, ids(25, 131)}};
  parts[2].sms.insert(parts[2].sms.begin(), 3);
  ASSERT_EQ(parts[2].sms.size(), 108u);
  const auto report = greenctx::check_usage(parts, 132);
  EXPECT_FALSE(report.ok());
  ASSERT_EQ(report.violations.size(), 1u);
  const std::string &v = report.violations[0];
  EXPECT_TRUE(mentions_number(v, 8)); // partition "8"
  EXPECT_TRUE(contains(v, "rest"));
  EXPECT_TRUE(mentions_number(v, 3));
}

TEST(CheckUsage, FewerSmsThanObtainedIsANoteNotAViolation) {
  auto parts = clean_16_rest();
  parts[1].sms = ids(16, 115); // 100 of its 116
  const auto report = greenctx::check_usage(parts, 132);
  EXPECT_TRUE(report.ok());
  EXPECT_TRUE(report.violations.empty());
  ASSERT_EQ(report.notes.size(), 1u);
  EXPECT_TRUE(contains(report.notes[0], "rest"));
}

TEST(CheckUsage, SmSpanCoversTheDevice) {
  auto parts = clean_16_rest();
  parts[1].sms = ids(16, 40);
  const auto report = greenctx::check_usage(parts, 132);
  EXPECT_GE(report.sm_span, 132u);
}

TEST(CheckUsage, SmSpanCoversTheLargestIdSeen) {
  // SM ids need not be dense: a span must still reach past the largest one.
  std::vector<partition_usage> parts = {{"8", 8, 8, {0, 2, 4, 6, 140}}};
  const auto report = greenctx::check_usage(parts, 132);
  EXPECT_GT(report.sm_span, 140u);
}

TEST(CheckUsage, NoPartitionsIsOk) {
  const auto report = greenctx::check_usage({}, 132);
  EXPECT_TRUE(report.ok());
  EXPECT_GE(report.sm_span, 132u);
}

// ---- check_usage: probe timing ------------------------------------------------------------------

// clean_16_rest() with the probes timed (us): "16" ran from start0 to end0, "rest" from start1 to
// end1.
std::vector<partition_usage> timed_16_rest(double start0, double end0, double start1, double end1) {
  auto parts = clean_16_rest();
  parts[0].start_us = start0;
  parts[0].end_us = end0;
  parts[1].start_us = start1;
  parts[1].end_us = end1;
  return parts;
}

TEST(CheckUsageTiming, OverlappingProbesAreTimedWithTheirOverlapAndNoNote) {
  // 0..100 and 10..120 overlap for 90 us.
  const auto report = greenctx::check_usage(timed_16_rest(0, 100, 10, 120), 132);
  EXPECT_TRUE(report.ok());
  EXPECT_TRUE(report.timed);
  EXPECT_DOUBLE_EQ(report.min_overlap_us, 90.0);
  EXPECT_TRUE(report.notes.empty());
  ASSERT_EQ(report.parts.size(), 2u);
  EXPECT_DOUBLE_EQ(report.parts[1].start_us, 10.0); // times are kept in the report
  EXPECT_DOUBLE_EQ(report.parts[1].end_us, 120.0);
}

TEST(CheckUsageTiming, OneProbeInsideAnotherOverlapsForItsWholeLength) {
  const auto report = greenctx::check_usage(timed_16_rest(0, 200, 50, 80), 132);
  EXPECT_TRUE(report.timed);
  EXPECT_DOUBLE_EQ(report.min_overlap_us, 30.0);
  EXPECT_TRUE(report.notes.empty());
}

TEST(CheckUsageTiming, MinOverlapIsTheShortestOverAllPairs) {
  // Pairs: (0,1) 80 us, (0,2) 10 us, (1,2) 30 us. The shortest is between the first and the last.
  std::vector<partition_usage> parts = {{"8", 8, 8, ids(0, 7), 0, 100},
                                        {"16", 16, 16, ids(8, 23), 20, 120},
                                        {"rest", 0, 108, ids(24, 131), 90, 200}};
  const auto report = greenctx::check_usage(parts, 132);
  EXPECT_TRUE(report.ok());
  EXPECT_TRUE(report.timed);
  EXPECT_DOUBLE_EQ(report.min_overlap_us, 10.0);
  EXPECT_TRUE(report.notes.empty());
}

TEST(CheckUsageTiming, ProbesDisjointInTimeGetANoteNotAViolation) {
  // The second probe started 50 us after the first ended.
  const auto report = greenctx::check_usage(timed_16_rest(0, 100, 150, 250), 132);
  EXPECT_TRUE(report.ok());
  EXPECT_TRUE(report.violations.empty());
  EXPECT_TRUE(report.timed);
  EXPECT_DOUBLE_EQ(report.min_overlap_us, -50.0); // negative: a gap
  ASSERT_EQ(report.notes.size(), 1u);
  EXPECT_TRUE(contains(report.notes[0], "overlap"));
}

TEST(CheckUsageTiming, ProbesThatOnlyTouchDidNotOverlap) {
  // One ends exactly when the other starts: an overlap of 0 is no overlap.
  const auto report = greenctx::check_usage(timed_16_rest(0, 100, 100, 200), 132);
  EXPECT_TRUE(report.ok());
  EXPECT_TRUE(report.timed);
  EXPECT_DOUBLE_EQ(report.min_overlap_us, 0.0);
  EXPECT_EQ(report.notes.size(), 1u);
}

TEST(CheckUsageTiming, OnePairApartIsEnoughForTheNote) {
  // The first two overlap, the third ran after both.
  std::vector<partition_usage> parts = {{"8", 8, 8, ids(0, 7), 0, 100},
                                        {"16", 16, 16, ids(8, 23), 10, 110},
                                        {"rest", 0, 108, ids(24, 131), 130, 200}};
  const auto report = greenctx::check_usage(parts, 132);
  EXPECT_TRUE(report.ok());
  EXPECT_TRUE(report.timed);
  EXPECT_DOUBLE_EQ(report.min_overlap_us, -30.0);
  EXPECT_EQ(report.notes.size(), 1u);
}

TEST(CheckUsageTiming, TimingNoteComesWithTheOtherNotesAndViolations) {
  // "rest" reached 100 of its 116 SMs (a note), SM 5 is shared (a violation), and the probes ran
  // one after the other (a note).
  auto parts = timed_16_rest(0, 100, 200, 300);
  parts[1].sms = ids(16, 114);
  parts[1].sms.push_back(5);
  const auto report = greenctx::check_usage(parts, 132);
  EXPECT_FALSE(report.ok());
  EXPECT_EQ(report.violations.size(), 1u);
  EXPECT_EQ(report.notes.size(), 2u);
  EXPECT_TRUE(report.timed);
  EXPECT_DOUBLE_EQ(report.min_overlap_us, -100.0);
}

TEST(CheckUsageTiming, UntimedProbesAreNotTimedAndGetNoTimingNote) {
  // Every start and end 0: the probes carried no times.
  const auto report = greenctx::check_usage(clean_16_rest(), 132);
  EXPECT_TRUE(report.ok());
  EXPECT_FALSE(report.timed);
  EXPECT_DOUBLE_EQ(report.min_overlap_us, 0.0);
  EXPECT_TRUE(report.notes.empty());
}

TEST(CheckUsageTiming, ProbesAreTimedOnlyWhenEveryOneIs) {
  // The second probe has no times, so nothing is said about overlap.
  const auto report = greenctx::check_usage(timed_16_rest(0, 100, 0, 0), 132);
  EXPECT_TRUE(report.ok());
  EXPECT_FALSE(report.timed);
  EXPECT_TRUE(report.notes.empty());
}

TEST(CheckUsageTiming, AnEndNotAfterTheStartIsNotATime) {
  EXPECT_FALSE(greenctx::check_usage(timed_16_rest(0, 100, 50, 50), 132).timed);
  EXPECT_FALSE(greenctx::check_usage(timed_16_rest(0, 100, 80, 40), 132).timed);
}

TEST(CheckUsageTiming, ASingleTimedProbeHasNothingToOverlapWith) {
  std::vector<partition_usage> parts = {{"rest", 0, 132, ids(0, 131), 0, 100}};
  const auto report = greenctx::check_usage(parts, 132);
  EXPECT_TRUE(report.ok());
  EXPECT_TRUE(report.timed);
  EXPECT_TRUE(report.notes.empty());
}

TEST(CheckUsageTiming, NoPartitionsAreNotTimed) {
  EXPECT_FALSE(greenctx::check_usage({}, 132).timed);
}

// ---- sm_map ------------------------------------------------------------------------------------

TEST(SmMap, MarksUsedIdsAndDotsTheRest) {
  EXPECT_EQ(greenctx::sm_map({0, 2, 5}, 8), "#.#..#..");
  EXPECT_EQ(greenctx::sm_map({7}, 8), ".......#");
}

TEST(SmMap, UsesTheGivenMark) {
  EXPECT_EQ(greenctx::sm_map({1, 2}, 4, 'r'), ".rr.");
}

TEST(SmMap, EmptyUsageIsAllDots) {
  EXPECT_EQ(greenctx::sm_map({}, 5), ".....");
}

TEST(SmMap, LengthIsAlwaysTheSpan) {
  EXPECT_EQ(greenctx::sm_map({}, 0), "");
  EXPECT_EQ(greenctx::sm_map({10}, 4), "....");
  const auto map = greenctx::sm_map(ids(16, 131), 132);
  ASSERT_EQ(map.size(), 132u);
  EXPECT_EQ(map.substr(0, 16), std::string(16, '.'));
  EXPECT_EQ(map.substr(16), std::string(116, '#'));
}

} // namespace
