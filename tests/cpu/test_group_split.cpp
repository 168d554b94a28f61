// SPDX-License-Identifier: Apache-2.0
// The heterogeneous-split planner against a model of the H200 on driver 580: split-by-count with
// the default flags gives 15 pieces of 8 and 12 left from 132 SMs (measured, spec section 5);
// with IgnoreSmCoscheduling it gives as many pieces of the unit as fit.
#include "greenctx/plan/error.hpp"
#include "greenctx/plan/group_plan.hpp"
#include "greenctx/plan/split_advice.hpp"

#include <gtest/gtest.h>

#include <set>

namespace greenctx {
namespace {

constexpr granularity h200_grain{8, 8};

sm_resource fake_resource(unsigned sms, std::uint64_t origin = 0) {
  CUdevResource raw{};
  raw.type = CU_DEV_RESOURCE_TYPE_SM;
  raw.sm.smCount = sms;
  return sm_resource(raw, 0, h200_grain, 9, origin);
}

struct fake_h200 {
  std::uint64_t next_origin = 1;
  unsigned splits = 0, intermediate_contexts = 0;

  split_backend backend() {
    split_backend b;
    b.split = [this](const sm_resource &input, unsigned unit, bool ignore) {
      ++splits;
      const unsigned n = input.sm_count();
      // 132 SMs with the default flags, as measured (spec section 5): 15 pieces of 8 (not 16:
      // the GPCs' sizes), but 8 of 16, 5 of 24, 4 of 32, 2 of 64.
      unsigned count = n / unit;
      if (!ignore && n == 132)
        count = unit == 8 ? 15 : unit == 16 ? 8 : unit == 24 ? 5 : unit == 32 ? 4 : count;
      const std::uint64_t origin = next_origin++;
      std::vector<sm_resource> pieces(count, fake_resource(unit, origin));
      return std::pair{pieces, fake_resource(n - count * unit, origin)};
    };
    b.make_splittable = [this](std::span<const sm_resource> pieces) {
      ++intermediate_contexts;
      unsigned n = 0;
      for (const auto &p : pieces)
        n += p.sm_count();
      return fake_resource(n);
    };
    return b;
  }
};

group_split_result plan(std::vector<sm_group_params> &params, fake_h200 &gpu,
                        bool dry_run = false) {
  const auto limits = make_group_limits(132, h200_grain, 9);
  apply_group_defaults(params, limits);
  return plan_group_split(fake_resource(132), params, limits, gpu.backend(), dry_run);
}

std::vector<unsigned> counts(const group_split_result &r) {
  std::vector<unsigned> out;
  for (const auto &g : r.groups)
    out.push_back(g.sm_count());
  return out;
}

struct example {
  const char *name;
  std::vector<sm_group_params> params;
  std::vector<unsigned> sizes;
  unsigned remainder;
  unsigned runs;
  bool ignore_pieces;
};

// The five group-parameter examples of spec section 3, plus one that needs two split calls.
const example examples[] = {
    {"one_group_of_16_for_clusters", {{16, 0, 0, 0}}, {16}, 116, 1, false},
    {"16_without_clusters_and_remainder", {{16, 2, 2, 0}}, {16}, 116, 1, false},
    {"16_and_backfill_rest", {{16, 2, 2, 0}, {0, 2, 2, sm_group_backfill}}, {16, 116}, 0, 1, false},
    {"28_and_32_for_clusters_of_4", {{28, 4, 4, 0}, {32, 4, 4, 0}}, {28, 32}, 72, 1, true},
    {"discover_clusters_of_8", {{0, 8, 8, 0}}, {120}, 12, 1, false},
    {"8_then_discover_clusters_of_4", {{8, 2, 2, 0}, {0, 4, 4, 0}}, {8, 112}, 12, 1, false},
    {"12_for_2_then_discover_8", {{12, 2, 2, 0}, {0, 8, 8, 0}}, {12, 120}, 0, 2, true},
};

class GuideExamples : public ::testing::TestWithParam<example> {};

TEST_P(GuideExamples, give_the_planned_groups) {
  const example &e = GetParam();
  fake_h200 gpu;
  auto params = e.params;
  const auto r = plan(params, gpu);
  EXPECT_EQ(counts(r), e.sizes) << r.explanation();
  EXPECT_EQ(r.remainder_sms, e.remainder) << r.explanation();
  EXPECT_EQ(r.runs, e.runs);
  EXPECT_EQ(gpu.intermediate_contexts, e.runs - 1);
  EXPECT_EQ(r.groups.front().needs_cluster_check, e.ignore_pieces);
  for (std::size_t i = 0; i < params.size(); ++i) {
    EXPECT_EQ(params[i].sm_count, e.sizes[i]) << "discovered counts are written back";
    EXPECT_NE(params[i].coscheduled_sm_count, 0u) << "defaults are written back";
    EXPECT_EQ(r.groups[i].coscheduled, params[i].coscheduled_sm_count);
  }
  // Groups never overlap and never exceed the input.
  unsigned sum = r.remainder_sms;
  for (unsigned n : counts(r))
    sum += n;
  EXPECT_EQ(sum, 132u);
}

INSTANTIATE_TEST_SUITE_P(SpecSection3, GuideExamples, ::testing::ValuesIn(examples),
                         [](const auto &info) { return std::string(info.param.name); });

TEST(GroupSplit, one_run_means_every_piece_shares_one_split_call) {
  fake_h200 gpu;
  std::vector<sm_group_params> params{{16, 2, 2, 0}, {8, 2, 2, 0}};
  const auto r = plan(params, gpu);
  std::set<std::uint64_t> origins;
  for (const auto &g : r.groups)
    for (const auto &p : g.pieces)
      origins.insert(p.origin());
  for (const auto &p : r.remainder.pieces)
    origins.insert(p.origin());
  EXPECT_EQ(origins.size(), 1u);
  EXPECT_EQ(gpu.splits, 1u);
}

// 112 + 16 SMs for clusters of 2 do not fit in 15 pieces of 8, but do in 8
// pieces of 16 (128 SMs). Such groups carry no assumed promise: they are proved on creation.
TEST(GroupSplit, fixed_groups_that_pieces_of_8_cannot_place_use_larger_pieces) {
  fake_h200 gpu;
  std::vector<sm_group_params> params{{112, 2, 2, 0}, {16, 2, 2, 0}};
  const auto r = plan(params, gpu);
  EXPECT_EQ(counts(r), (std::vector<unsigned>{112, 16})) << r.explanation();
  EXPECT_EQ(r.remainder_sms, 4u);
  EXPECT_EQ(r.outcomes[0].unit, 16u);
  EXPECT_TRUE(r.groups[0].needs_cluster_check);
  EXPECT_TRUE(r.groups[1].needs_cluster_check);
  EXPECT_NE(r.explanation().find("pieces of 8 left too few SMs"), std::string::npos)
      << r.explanation();
}

TEST(GroupSplit, the_largest_common_piece_comes_first) {
  fake_h200 gpu;
  std::vector<sm_group_params> params{{64, 8, 8, 0}, {64, 8, 8, 0}};
  const auto r = plan(params, gpu);
  EXPECT_EQ(counts(r), (std::vector<unsigned>{64, 64})) << r.explanation();
  EXPECT_EQ(r.outcomes[1].unit, 64u);
}

TEST(GroupSplit, pieces_of_8_stay_when_they_place_every_group) {
  fake_h200 gpu;
  std::vector<sm_group_params> params{{16, 2, 2, 0}, {32, 2, 2, 0}};
  const auto r = plan(params, gpu);
  EXPECT_EQ(r.outcomes[0].unit, 8u);
  EXPECT_FALSE(r.groups[0].needs_cluster_check);
}

TEST(GroupSplit, default_coscheduled_count_is_the_device_alignment) {
  fake_h200 gpu;
  std::vector<sm_group_params> params{{16, 0, 0, 0}};
  plan(params, gpu);
  EXPECT_EQ(params[0], (sm_group_params{16, 8, 8, 0}));
}

TEST(GroupSplit, groups_that_do_not_fit_fail_with_915_and_say_why) {
  fake_h200 gpu;
  std::vector<sm_group_params> params{{64, 8, 8, 0}, {72, 8, 8, 0}};
  try {
    plan(params, gpu);
    FAIL() << "expected 915";
  } catch (const request_error &e) {
    EXPECT_EQ(e.code(), CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION);
    EXPECT_NE(std::string(e.what()).find("needs 9 pieces of 8 SMs, 7 left"), std::string::npos)
        << e.what();
  }
}

TEST(GroupSplit, dry_run_reports_instead_of_failing) {
  fake_h200 gpu;
  std::vector<sm_group_params> params{{64, 8, 8, 0}, {72, 8, 8, 0}};
  const auto r = plan(params, gpu, true);
  EXPECT_TRUE(r.groups.empty());
  EXPECT_TRUE(r.outcomes[0].ok());
  EXPECT_FALSE(r.outcomes[1].ok());
  EXPECT_FALSE(r.all_made());
  EXPECT_NE(r.explanation().find("cannot be made"), std::string::npos);
}

TEST(GroupSplit, discovery_after_everything_is_taken_gives_zero) {
  fake_h200 gpu;
  std::vector<sm_group_params> params{{0, 8, 8, 0}, {0, 8, 8, 0}};
  const auto r = plan(params, gpu, true);
  EXPECT_EQ(params[0].sm_count, 120u);
  EXPECT_EQ(params[1].sm_count, 0u) << "a dry run may succeed with a 0 count";
  EXPECT_THROW(plan(params = {{0, 8, 8, 0}, {0, 8, 8, 0}}, gpu), request_error)
      << "with a result, no group may be empty";
  (void)r;
}

TEST(GroupSplit, backfill_takes_the_smallest_set_that_reaches_the_count) {
  fake_h200 gpu;
  std::vector<sm_group_params> params{{20, 8, 8, sm_group_backfill}};
  EXPECT_EQ(counts(plan(params, gpu)), std::vector<unsigned>{20}); // 1 x 8 + 12 beats 3 x 8
  params = {{12, 8, 8, sm_group_backfill}};
  // 2 x 8: at least one whole piece, so the 12 unstructured SMs alone do not do.
  EXPECT_EQ(counts(plan(params, gpu)), std::vector<unsigned>{16});
  params = {{116, 8, 8, sm_group_backfill}};
  EXPECT_EQ(counts(plan(params, gpu)), std::vector<unsigned>{116}); // 13 x 8 + the 12 left
}

TEST(GroupSplit, coscheduled_counts_the_old_driver_cannot_guarantee_are_refused) {
  for (unsigned c : {16u, 32u, 6u}) {
    fake_h200 gpu;
    std::vector<sm_group_params> params{{c * 2, c, c, 0}};
    try {
      plan(params, gpu);
      FAIL() << "coscheduledSmCount " << c << " was accepted";
    } catch (const error &e) {
      EXPECT_EQ(e.code(), CUDA_ERROR_NOT_SUPPORTED) << e.what();
      EXPECT_NE(std::string(e.what()).find("cannot be guaranteed on this driver"),
                std::string::npos)
          << e.what();
    }
    EXPECT_EQ(gpu.splits, 0u) << "refused before any driver call";
  }
}

TEST(GroupSplit, invalid_parameters_are_refused_before_splitting) {
  fake_h200 gpu;
  std::vector<sm_group_params> params{{12, 8, 8, 0}};
  EXPECT_THROW(plan(params, gpu), request_error);
  EXPECT_EQ(gpu.splits, 0u);
}

TEST(GroupSplit, units_on_cc9_are_8_then_ignore_coscheduling_4_and_2) {
  const auto units = available_units(make_group_limits(132, h200_grain, 9));
  ASSERT_EQ(units.size(), 3u);
  EXPECT_EQ(units[0].size, 8u);
  EXPECT_FALSE(units[0].ignore_coscheduling);
  EXPECT_EQ(units[1].size, 4u);
  EXPECT_TRUE(units[1].ignore_coscheduling);
  EXPECT_EQ(units[2].size, 2u);
  EXPECT_EQ(available_units(make_group_limits(80, {4, 2}, 8)).size(), 1u);
}

// A Backfill group that would take the pieces a later group needs takes the unstructured SMs
// instead: {112 Backfill, 16} on the H200 is 13 x 8 + 12 SMs, then 2 x 8.
TEST(GroupSplit, a_backfill_group_leaves_whole_pieces_to_later_groups) {
  fake_h200 gpu;
  std::vector<sm_group_params> params{{112, 0, 0, sm_group_backfill}, {16, 0, 0, 0}};
  const auto r = plan(params, gpu);
  EXPECT_EQ(counts(r), (std::vector<unsigned>{116, 16})) << r.explanation();
  EXPECT_EQ(r.remainder_sms, 0u);
  EXPECT_FALSE(r.groups[0].needs_cluster_check) << "pieces of the alignment keep their promise";
  EXPECT_NE(r.outcomes[0].note.find("Backfill: 116 SMs"), std::string::npos) << r.outcomes[0].note;
}

// The advice for the guide's H100 example {112, 16} on the H200.
TEST(SplitAdvice, names_the_units_and_requests_that_work_here) {
  fake_h200 gpu;
  const auto limits = make_group_limits(132, h200_grain, 9);
  std::vector<sm_group_params> params{{112, 0, 0, 0}, {16, 0, 0, 0}};
  apply_group_defaults(params, limits);
  const request_prover proves = [](std::span<const sm_group_params>) { return true; };
  const std::string text =
      plan_split_advice(fake_resource(132), params, limits, gpu.backend(), proves);
  for (const char *part :
       {"15 co-scheduled units of 8 SMs (120 SMs) and 12 SMs outside whole units",
        "{104, 16} (whole co-scheduled units)", "{112 Backfill, 16} (Backfill on group 0)",
        "{112 cosched 2, 16 cosched 2} (coscheduledSmCount 2, clusters proved)"})
    EXPECT_NE(text.find(part), std::string::npos) << part << "\nnot in: " << text;
}

// A request that needs a cluster proof is named only when the prover proves it: without one,
// or when the proof fails, advice leaves it out rather than name a request that is then refused.
TEST(SplitAdvice, names_requests_that_need_a_proof_only_when_proved) {
  fake_h200 gpu;
  const auto limits = make_group_limits(132, h200_grain, 9);
  std::vector<sm_group_params> params{{112, 0, 0, 0}, {16, 0, 0, 0}};
  apply_group_defaults(params, limits);
  unsigned asked = 0;
  const request_prover refuse_all = [&](std::span<const sm_group_params>) {
    ++asked;
    return false;
  };
  for (const request_prover &prove : {request_prover{}, refuse_all}) {
    const auto alts = split_alternatives(fake_resource(132), params, limits, gpu.backend(), prove);
    ASSERT_EQ(alts.size(), 2u);
    EXPECT_EQ(to_short_string(alts[0].params, limits), "{104, 16}");
    EXPECT_EQ(to_short_string(alts[1].params, limits), "{112 Backfill, 16}");
  }
  EXPECT_EQ(asked, 1u) << "only the coscheduledSmCount 2 request needs a proof";
}

TEST(SplitAdvice, rounds_to_whole_units_for_a_promise_small_pieces_cannot_keep) {
  fake_h200 gpu;
  const auto limits = make_group_limits(132, h200_grain, 9);
  std::vector<sm_group_params> params{{28, 4, 4, 0}, {32, 4, 4, 0}};
  apply_group_defaults(params, limits);
  const auto alts = split_alternatives(fake_resource(132), params, limits, gpu.backend());
  ASSERT_FALSE(alts.empty());
  EXPECT_EQ(to_short_string(alts[0].params, limits), "{32 cosched 4, 32 cosched 4}");
  EXPECT_FALSE(alts[0].proved);
  EXPECT_EQ(to_request_text(alts[0].params, limits), "32:cosched=4:pref=4 32:cosched=4:pref=4");
  for (const auto &a : alts) // every alternative is a request the planner makes
    EXPECT_NE(to_short_string(a.params, limits), to_short_string(params, limits));
}

TEST(SplitAdvice, says_so_when_nothing_nearby_can_be_made) {
  fake_h200 gpu;
  const auto limits = make_group_limits(132, h200_grain, 9);
  std::vector<sm_group_params> params{{128, 0, 0, 0}, {8, 0, 0, 0}};
  apply_group_defaults(params, limits);
  // 136 SMs: rounding keeps 136, shrinking the largest finds {112, 8}; Backfill and units of 2
  // cannot reach 136 SMs on 132.
  const auto alts = split_alternatives(fake_resource(132), params, limits, gpu.backend());
  ASSERT_EQ(alts.size(), 1u);
  EXPECT_EQ(to_short_string(alts[0].params, limits), "{112, 8}");
}

} // namespace
} // namespace greenctx
