// SPDX-License-Identifier: Apache-2.0
// The records of info, split and verify (pure code): what each table and note says, and real
// runs' records read back.
#include "commands/info/info_record.hpp"
#include "commands/split/split_record.hpp"
#include "commands/verify/verify_record.hpp"
#include "saved_results.hpp"
#include "golden_record.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace greenctx::cli {
namespace {

using report::cell;

bool has_note(const report::record &r, const std::string &text) {
  return std::any_of(r.notes.begin(), r.notes.end(),
                     [&](const std::string &n) { return n.find(text) != std::string::npos; });
}

const cell &at(const report::record &r, const std::string &table, std::size_t row,
               const std::string &field) {
  const report::series *s = r.table(table);
  return s->rows.at(row).at(s->index(field));
}

double number(const cell &c) {
  return std::get<double>(c);
}

// Rendered in every format and read back from its JSON to the same JSON.
void expect_round_trip(const report::record &r) {
  EXPECT_FALSE(report::to_text(r).empty());
  EXPECT_FALSE(report::to_markdown(r).empty());
  EXPECT_FALSE(report::to_csv(r).empty());
  const auto j = report::to_json(r);
  EXPECT_EQ(report::to_json(report::from_json(j)), j);
}

info::results two_gpus() {
  info::results r;
  r.driver.version = 13000;
  r.driver.library = "libcuda.so.1";
  r.driver.features = {{feature::green_contexts, "green_contexts",
                        "green contexts and split by count", 12040, availability::native},
                       {feature::sm_partition_info, "sm_partition_info",
                        "minimum partition and alignment", 13000, availability::native},
                       {feature::workqueue_resources, "workqueue_resources", "work-queue resources",
                        13010, availability::greenctx}};
  r.device_count = 2;
  r.gpus = {{0, "H200", "9.0", "0000:10:00.0", 132, 8, 8, "8, 16, ..., 128, 132", 0, -5, false},
            {1, "H200", "9.0", "0000:11:00.0", 132, 8, 8, "8, 16, ..., 128, 132", 0, -5, true}};
  return r;
}

TEST(InfoRecord, OneRowPerGpuAndWhatMpsMeansForEach) {
  const auto r = info::info_record(two_gpus(), {{"driver_version", "13.0"}}, "all");
  greenctx_test::expect_golden_record(r, "info");
  EXPECT_EQ(r.kind, "info");
  EXPECT_EQ(r.tables.front().key, "gpus"); // the CSV one
  EXPECT_EQ(r.tables.front().rows.size(), 2u);
  EXPECT_EQ(at(r, "gpus", 1, "mps"), cell{"active"});
  EXPECT_EQ(number(at(r, "gpus", 0, "priority_greatest")), -5);
  EXPECT_TRUE(has_note(r, "GPU 0: MPS not active: processes on this GPU time-slice")) << r.notes[1];
  EXPECT_TRUE(has_note(r, "GPU 1: MPS active"));
  EXPECT_TRUE(has_note(r, "not provisioned by this driver"));
  EXPECT_TRUE(has_note(r, "the driver's default of 8 applies"));
  // The features' descriptions are in the JSON and markdown, not on the terminal.
  EXPECT_EQ(report::to_text(r).find("green contexts and split by count"), std::string::npos);
  EXPECT_NE(report::to_markdown(r).find("green contexts and split by count"), std::string::npos);
  expect_round_trip(r);
}

TEST(InfoRecord, TheEnvironmentVariablesAreSaid) {
  info::results in = two_gpus();
  in.max_connections_environment = 32;
  in.visible_devices = "1,0";
  const auto r = info::info_record(in, {}, "0");
  EXPECT_TRUE(has_note(r, "CUDA_DEVICE_MAX_CONNECTIONS=32 (from the environment)"));
  EXPECT_EQ(r.find("visible_devices")->value, cell{"1,0"});
  EXPECT_EQ(r.find("max_connections")->value, cell{32.0});
}

// Records of real runs (tests/data/): one GPU, and two GPUs of one machine.
TEST(InfoRecord, RealRecordsReadBack) {
  const auto one = report::from_json(greenctx_test::saved_record("info.json"));
  EXPECT_EQ(one.table("gpus")->rows.size(), 1u);
  EXPECT_EQ(number(at(one, "gpus", 0, "sm_count")), 132);
  expect_round_trip(one);
  const auto two = report::from_json(greenctx_test::saved_record("info-two-gpus.json"));
  ASSERT_EQ(two.table("gpus")->rows.size(), 2u);
  EXPECT_NE(at(two, "gpus", 0, "pci_bus_id"), at(two, "gpus", 1, "pci_bus_id"));
  expect_round_trip(two);
}

sm_resource pieces_of(unsigned sms) {
  CUdevResource raw{};
  raw.type = CU_DEV_RESOURCE_TYPE_SM;
  raw.sm.smCount = sms;
  return sm_resource(raw, 0, {8, 8}, 9);
}

// '16:cosched=2 0:backfill' on 132 SMs: 2 pieces of 8, then 14 of 8 and one of 4.
group_split_result two_groups() {
  group_split_result r;
  r.params = {{16, 2, 8, 0}, {0, 2, 8, sm_group_backfill}};
  r.outcomes = {{16, 16, 0, 8, false, ""}, {0, 116, 0, 8, false, "discovered 14 pieces"}};
  r.groups.resize(2);
  r.groups[0].pieces = {pieces_of(8), pieces_of(8)};
  for (int i = 0; i < 14; ++i)
    r.groups[1].pieces.push_back(pieces_of(8));
  r.groups[1].pieces.push_back(pieces_of(4));
  r.runs = 1;
  return r;
}

std::vector<split_report::group_check> checks(unsigned clusters) {
  return {{16, 16, clusters, 8}, {116, 116, 58, 0}};
}

TEST(SplitRecord, GroupsChecksAndTheVerdict) {
  const nlohmann::json env = {{"device", 0}, {"gpu", "H200"}, {"sm_count", 132}};
  const std::string request = "16:cosched=2 0:backfill";
  auto r = split_report::split_record(request, two_groups(), checks(8), env);
  greenctx_test::expect_golden_record(r, "split");
  EXPECT_EQ(r.title, "greenctx split '16:cosched=2 0:backfill' on GPU 0 (H200, 132 SMs)");
  EXPECT_EQ(at(r, "groups", 1, "requested"), cell{"all"});
  EXPECT_EQ(at(r, "groups", 1, "backfill"), cell{"backfill"});
  EXPECT_EQ(number(at(r, "groups", 0, "max_active_clusters")), 8);
  EXPECT_TRUE(has_note(r, "note: group 1: discovered 14 pieces"));
  EXPECT_TRUE(has_note(r, "OK: every group was made"));
  EXPECT_FALSE(r.says_no("ok"));
  expect_round_trip(r);
  // Fewer clusters than promised fails the check, and says by how much.
  r = split_report::split_record(request, two_groups(), checks(7), env);
  EXPECT_TRUE(r.says_no("ok"));
  EXPECT_TRUE(has_note(r, "FAILED: group 0 runs 7 clusters of 2 SMs at once, 8 promised"));
  // A dry run has no checks: their columns stay off the terminal.
  auto dry = two_groups();
  dry.dry_run = true;
  dry.groups.clear();
  r = split_report::split_record(request, dry, {}, env);
  EXPECT_EQ(report::to_text(r).find("clusters"), std::string::npos);
  EXPECT_FALSE(has_note(r, "OK:"));
}

TEST(SplitRecord, AGroupNotMadeMakesTheRequestInvalid) {
  auto in = two_groups();
  in.outcomes[1].obtained = 0;
  in.advice = "requests that can be made here: {64, 64}";
  const auto r = split_report::split_record("16:cosched=2 0:backfill", in, {}, {});
  EXPECT_TRUE(r.says_no("all_made"));
  EXPECT_EQ(at(r, "groups", 1, "obtained"), cell{});
  EXPECT_TRUE(has_note(r, "advice: requests that can be made here"));
  EXPECT_TRUE(has_note(r, "INVALID: not every group can be made"));
}

// A real split (tests/data/split.json: discovery by pieces of 8 on the H200, checked).
TEST(SplitRecord, ARealRecordReadsBack) {
  const auto r = report::from_json(greenctx_test::saved_record("split.json"));
  EXPECT_EQ(number(at(r, "groups", 0, "obtained")), 120);
  EXPECT_EQ(at(r, "groups", 0, "pieces"), cell{"15 x 8"});
  EXPECT_EQ(number(at(r, "groups", 0, "clusters_promised")), 15);
  EXPECT_EQ(r.find("remainder_sms")->value, cell{12.0});
  EXPECT_TRUE(has_note(r, "OK: every group was made"));
  expect_round_trip(r);
}

verification::gpu_result verified(int device, std::vector<unsigned> a, std::vector<unsigned> b) {
  verification::gpu_result g;
  g.environment = {{"device", device}, {"gpu", "H200"}, {"sm_count", 8}};
  g.piece_size = 4;
  g.groups = 1;
  g.rest = true;
  g.rounding = {"", "rounded up"};
  std::vector<partition_usage> parts = {{"4", 4, 4, std::move(a), 0, 10},
                                        {"rest", 0, 4, std::move(b), 5, 12}};
  g.report = check_usage(std::move(parts), 8);
  return g;
}

TEST(VerifyRecord, MapsCombinedAndOverlapsMarked) {
  verification::results in;
  in.split = "4,rest";
  in.gpus = {verified(0, {0, 1, 2, 3}, {4, 5, 6, 7})};
  auto r = verification::verify_record(in, in.gpus.front().environment);
  greenctx_test::expect_golden_record(r, "verify");
  EXPECT_EQ(r.title, "greenctx verify 4,rest on GPU 0 (H200, 8 SMs)");
  EXPECT_EQ(r.find("plan")->value,
            cell{"one split into 1 group of 4 SMs, the remainder as 'rest'"});
  EXPECT_EQ(at(r, "partitions", 2, "label"), cell{"all"});
  EXPECT_EQ(at(r, "partitions", 2, "map"), cell{"AAAABBBB"});
  EXPECT_EQ(at(r, "partitions", 1, "sms"), cell{"4 5 6 7"});
  EXPECT_TRUE(has_note(r, "note: partition 1 (rest): rounded up"));
  EXPECT_TRUE(has_note(r, "OK: every partition stayed within its SMs"));
  EXPECT_FALSE(r.says_no("ok"));
  expect_round_trip(r);
  // Two partitions on one SM: '!' in the combined map, a violation, the verdict.
  in.gpus = {verified(0, {0, 1, 2, 3}, {3, 4, 5, 6})};
  r = verification::verify_record(in, {});
  EXPECT_EQ(at(r, "partitions", 2, "map"), cell{"AAA!BBB."});
  EXPECT_TRUE(r.says_no("ok"));
  EXPECT_TRUE(has_note(r, "FAILED: 1 violation ('!' in the map"));
}

TEST(VerifyRecord, SeveralGpusAreNamedInTheirRowsAndNotes) {
  verification::results in;
  in.split = "4,rest";
  in.gpus = {verified(0, {0, 1, 2, 3}, {4, 5, 6, 7}), verified(1, {0, 1, 2, 3}, {3, 4, 5})};
  const auto r = verification::verify_record(in, {});
  EXPECT_EQ(r.title, "greenctx verify 4,rest on GPUs 0,1");
  EXPECT_EQ(number(at(r, "partitions", 3, "device")), 1);
  EXPECT_TRUE(has_note(r, "GPU 1: FAILED: 1 violation"));
  EXPECT_TRUE(has_note(r, "FAILED: 1 of 2 GPUs (0,1) passed"));
  EXPECT_EQ(r.find("gpus_passed")->value, cell{1.0});
}

// Real verifications (tests/data/): 16,8,rest on one GPU, and on each of two.
TEST(VerifyRecord, RealRecordsReadBack) {
  const auto one = report::from_json(greenctx_test::saved_record("verify.json"));
  EXPECT_FALSE(one.says_no("ok"));
  EXPECT_EQ(at(one, "partitions", 3, "map").index(), 2u); // the combined map is text
  EXPECT_TRUE(has_note(one, "OK: every partition stayed within its SMs"));
  expect_round_trip(one);
  const auto two = report::from_json(greenctx_test::saved_record("verify-two-gpus.json"));
  EXPECT_FALSE(two.says_no("ok"));
  expect_round_trip(two);
}

TEST(VerifyProcessesRecord, PiecesRoundsAndTheVerdict) {
  verification::process_results in;
  in.split = "16,rest";
  in.mps_active = false;
  in.spin_ms = 100;
  in.waves = 2;
  in.rounds = 2;
  in.expected_ns = 200e6;
  in.iterations = 4096;
  piece_measurement a{"16", 16, 16, 16, {0, 200e6}, {0, 200e6}, {{0, 400e6}, {0, 420e6}}};
  in.pieces = {a, a};
  in.pids = {11, 12};
  in.report.alone_ratio = {1.0, 1.0};
  in.report.slowdown = {2.05, 2.1};
  in.report.violations = {"the pieces did not run side by side"};
  const auto r = verification::processes_record(in, {{"device", 0}});
  greenctx_test::expect_golden_record(r, "verify-processes");
  EXPECT_EQ(number(at(r, "pieces", 0, "work_beside_ms")), 420); // the median of two: the upper
  EXPECT_EQ(r.table("rounds")->rows.size(), 4u);
  EXPECT_TRUE(has_note(r, "MPS: not active"));
  EXPECT_TRUE(has_note(r, "VIOLATION: the pieces did not run side by side"));
  EXPECT_TRUE(r.says_no("ok"));
  expect_round_trip(r);
}

} // namespace
} // namespace greenctx::cli
