// The records of info, split and verify (pure code): what each table and note says, and the files
// older greenctx wrote, converted for --from.
#include "commands/info/info_record.hpp"
#include "commands/split/split_record.hpp"
#include "commands/verify/verify_record.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

namespace greenctx::cli {
namespace {

using report::cell;

const std::string results = std::string(GREENCTX_SOURCE_DIR) + "/bench/results/";

nlohmann::json saved(const std::string &path) {
  std::ifstream f(results + path);
  return nlohmann::json::parse(f);
}

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
  r.driver_version = "13.0";
  r.toolkit_version = "13.0";
  r.driver_library = "libcuda.so.1";
  r.device_count = 2;
  r.workqueue_config_provisioned = false;
  r.gpus = {{0, "H200", "9.0", "0000:10:00.0", 132, 8, 8, "8, 16, ..., 128, 132", 0, -5, false},
            {1, "H200", "9.0", "0000:11:00.0", 132, 8, 8, "8, 16, ..., 128, 132", 0, -5, true}};
  r.features = {{"green_contexts", "12.4", "native", "green contexts and split by count"}};
  return r;
}

TEST(InfoRecord, OneRowPerGpuAndWhatMpsMeansForEach) {
  const auto r = info::info_record(two_gpus(), {{"driver_version", "13.0"}}, "all");
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
  in.max_connections_in_effect = 32;
  in.visible_devices = "1,0";
  const auto r = info::info_record(in, {}, "0");
  EXPECT_TRUE(has_note(r, "CUDA_DEVICE_MAX_CONNECTIONS=32 (from the environment)"));
  EXPECT_EQ(r.find("visible_devices")->value, cell{"1,0"});
  EXPECT_EQ(r.find("max_connections")->value, cell{32.0});
}

// A file of 2026-11-29 (one GPU at the top level, before MPS and PCI were recorded) and one of
// 2026-12-01 (devices[] beside the first GPU's fields).
TEST(InfoRecord, OlderFilesAreConverted) {
  const auto old = saved("2026-11-29-h200/gpu-check/info.json");
  const auto r1 = info::info_record(info::from_json(old), info::environment_from_json(old), "-");
  EXPECT_EQ(r1.table("gpus")->rows.size(), 1u);
  EXPECT_EQ(number(at(r1, "gpus", 0, "sm_count")), 132);
  EXPECT_EQ(at(r1, "gpus", 0, "mps"), cell{"not recorded"});
  EXPECT_EQ(at(r1, "gpus", 0, "pci_bus_id"), cell{});
  EXPECT_EQ(r1.table("features")->rows.size(), old["features"].size());
  expect_round_trip(r1);
  const auto two = saved("2026-12-01-h200x2/info-verify/info-devices.json");
  const auto r2 = info::info_record(info::from_json(two), info::environment_from_json(two), "-");
  ASSERT_EQ(r2.table("gpus")->rows.size(), 2u);
  EXPECT_EQ(at(r2, "gpus", 1, "pci_bus_id"),
            cell{two["devices"][1]["pci_bus_id"].get<std::string>()});
  EXPECT_THROW(info::from_json(nlohmann::json::object()), nlohmann::json::exception);
}

split_report::results two_groups(bool checked, unsigned clusters) {
  split_report::results r;
  r.request = "16:cosched=2 0:backfill";
  r.split_calls = 1;
  split_report::group a;
  a.sm_count = a.requested = a.obtained = 16;
  a.coscheduled = 2;
  a.preferred = 8;
  a.made = true;
  a.piece_size = 8;
  a.pieces = "2 x 8";
  split_report::group b = a;
  b.sm_count = b.requested = 0;
  b.obtained = 116;
  b.backfill = true;
  b.pieces = "14 x 8 + 4";
  b.note = "discovered 14 pieces";
  if (checked) {
    a.check = split_report::group_check{16, 16, clusters, 8};
    b.check = split_report::group_check{116, 116, 58, 0};
  }
  r.groups = {a, b};
  return r;
}

TEST(SplitRecord, GroupsChecksAndTheVerdict) {
  const nlohmann::json env = {{"device", 0}, {"gpu", "H200"}, {"sm_count", 132}};
  auto r = split_report::split_record(two_groups(true, 8), env);
  EXPECT_EQ(r.title, "greenctx split '16:cosched=2 0:backfill' on GPU 0 (H200, 132 SMs)");
  EXPECT_EQ(at(r, "groups", 1, "requested"), cell{"all"});
  EXPECT_EQ(at(r, "groups", 1, "backfill"), cell{"backfill"});
  EXPECT_EQ(number(at(r, "groups", 0, "max_active_clusters")), 8);
  EXPECT_TRUE(has_note(r, "note: group 1: discovered 14 pieces"));
  EXPECT_TRUE(has_note(r, "OK: every group was made"));
  EXPECT_FALSE(r.says_no("ok"));
  expect_round_trip(r);
  // Fewer clusters than promised fails the check, and says by how much.
  r = split_report::split_record(two_groups(true, 7), env);
  EXPECT_TRUE(r.says_no("ok"));
  EXPECT_TRUE(has_note(r, "FAILED: group 0 runs 7 clusters of 2 SMs at once, 8 promised"));
  // A dry run has no checks: their columns stay off the terminal.
  r = split_report::split_record(two_groups(false, 0), env);
  EXPECT_EQ(report::to_text(r).find("clusters"), std::string::npos);
  EXPECT_FALSE(has_note(r, "OK:"));
}

TEST(SplitRecord, AGroupNotMadeMakesTheRequestInvalid) {
  auto in = two_groups(false, 0);
  in.groups[1].made = false;
  in.advice = "requests that can be made here: {64, 64}";
  const auto r = split_report::split_record(in, {});
  EXPECT_TRUE(r.says_no("all_made"));
  EXPECT_EQ(at(r, "groups", 1, "obtained"), cell{});
  EXPECT_TRUE(has_note(r, "advice: requests that can be made here"));
  EXPECT_TRUE(has_note(r, "INVALID: not every group can be made"));
}

TEST(SplitRecord, OlderFilesAreConverted) {
  const auto old = saved("2026-11-29-h200/compat-python/split-discover-8.json");
  const auto r = split_report::split_record(split_report::from_json(old), old["environment"]);
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

TEST(VerifyRecord, OlderFilesAreConverted) {
  for (const char *path : {"2026-11-29-h200/gpu-check/verify-16-8-rest.json",
                           "2026-12-01-h200x2/info-verify/verify-all.json"}) {
    SCOPED_TRACE(path);
    const auto old = saved(path);
    const auto in = verification::from_json(old);
    const auto r = verification::verify_record(in, verification::environment_from_json(old));
    const nlohmann::json &first = old.contains("devices") ? old["devices"][0] : old;
    const auto &parts = first["partitions"];
    for (std::size_t i = 0; i < parts.size(); ++i) {
      EXPECT_EQ(at(r, "partitions", i, "map"), cell{parts[i]["map"].get<std::string>()});
      EXPECT_EQ(number(at(r, "partitions", i, "used")), parts[i]["used"].get<double>());
      EXPECT_EQ(number(at(r, "partitions", i, "start_us")), parts[i]["start_us"].get<double>());
    }
    EXPECT_EQ(r.says_no("ok"), !old["ok"].get<bool>());
    EXPECT_EQ(in.gpus.size(), old.contains("devices") ? old["devices"].size() : 1u);
    expect_round_trip(r);
  }
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
  EXPECT_EQ(number(at(r, "pieces", 0, "work_beside_ms")), 420); // the median of two: the upper
  EXPECT_EQ(r.table("rounds")->rows.size(), 4u);
  EXPECT_TRUE(has_note(r, "MPS: not active"));
  EXPECT_TRUE(has_note(r, "VIOLATION: the pieces did not run side by side"));
  EXPECT_TRUE(r.says_no("ok"));
  expect_round_trip(r);
}

} // namespace
} // namespace greenctx::cli
