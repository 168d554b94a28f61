// SPDX-License-Identifier: Apache-2.0
// greenctx bench --comm without a GPU: the --sizes and --comm-sms lists, the modes, the bus
// bandwidth, the answers and the record on synthetic samples and on a real run's record (pure
// code).
#include "commands/bench/comm.hpp"
#include "saved_results.hpp"
#include "text_checks.hpp"
#include "golden_record.hpp"

#include <greenctx/plan/error.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>

namespace greenctx::cli::bench::comm {
namespace {

using greenctx_test::contains;
using greenctx_test::saved_record;

constexpr std::size_t MiB = std::size_t{1} << 20;

std::string refusal(const std::function<void()> &f) {
  try {
    f();
  } catch (const request_error &e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(CommSizes, UnitsAndPlainBytes) {
  EXPECT_EQ(parse_sizes("1M,16MiB,1G"), (std::vector<std::size_t>{MiB, 16 * MiB, 1024 * MiB}));
  EXPECT_EQ(parse_sizes("4096, 8K,1GiB"),
            (std::vector<std::size_t>{4096, 8192, std::size_t{1} << 30}));
  EXPECT_EQ(parse_sizes("016M"), (std::vector<std::size_t>{16 * MiB})); // decimal, not octal
  EXPECT_EQ(parse_sizes("4G"), (std::vector<std::size_t>{std::size_t{4} << 30}));
}

TEST(CommSizes, RefusalsSayWhichEntryAndWhatWorks) {
  std::string why = refusal([] { parse_sizes("1M,,4M"); });
  EXPECT_NE(why.find("entry 2"), std::string::npos) << why;
  EXPECT_NE(why.find("--sizes"), std::string::npos) << why;
  why = refusal([] { parse_sizes("1M,3T"); });
  EXPECT_NE(why.find("unit 'T'"), std::string::npos) << why;
  why = refusal([] { parse_sizes("1M,1M"); });
  EXPECT_NE(why.find("listed twice"), std::string::npos) << why;
  why = refusal([] { parse_sizes("6"); });
  EXPECT_NE(why.find("multiple of 4"), std::string::npos) << why;
  why = refusal([] { parse_sizes("5G"); });
  EXPECT_NE(why.find("more than 4 GiB"), std::string::npos) << why;
  why = refusal([] { parse_sizes("0"); });
  EXPECT_NE(why.find("less than 4 bytes"), std::string::npos) << why;
  for (const char *bad : {"", "0x10", "-1M", "1.5M", "M", "1e3"})
    EXPECT_NE(refusal([&] { parse_sizes(bad); }), "(accepted)") << bad;
}

TEST(CommSizes, DefaultsArePowersOfFourFromOneMiBToOneGiB) {
  EXPECT_EQ(default_sizes(false),
            (std::vector<std::size_t>{MiB, 4 * MiB, 16 * MiB, 64 * MiB, 256 * MiB, 1024 * MiB}));
  EXPECT_EQ(default_sizes(true), (std::vector<std::size_t>{MiB, 16 * MiB, 256 * MiB}));
  EXPECT_EQ(format_bytes(MiB), "1 MiB");
  EXPECT_EQ(format_bytes(std::size_t{1} << 30), "1 GiB");
  EXPECT_EQ(format_bytes(12), "12 B");
}

TEST(CommSmCounts, ListsOfDecimalCounts) {
  EXPECT_EQ(parse_sm_counts("8,16,24,32,48"), (std::vector<unsigned>{8, 16, 24, 32, 48}));
  EXPECT_EQ(parse_sm_counts("016"), (std::vector<unsigned>{16}));
  EXPECT_NE(refusal([] { parse_sm_counts("8,8"); }).find("lists 8 twice"), std::string::npos);
  EXPECT_NE(refusal([] { parse_sm_counts("8,0"); }).find("entry 2"), std::string::npos);
  for (const char *bad : {"", "0x10", "-8", "8,", "4097", "8;16"})
    EXPECT_NE(refusal([&] { parse_sm_counts(bad); }), "(accepted)") << bad;
}

TEST(CommModes, NamesRoundTrip) {
  const auto modes = all_modes({8, 16});
  ASSERT_EQ(modes.size(), 9u);
  EXPECT_EQ(modes[3].name(), "green-8");
  EXPECT_EQ(modes[5].name(), "green-ctas-8");
  EXPECT_TRUE(modes[5].on_partition() && modes[5].limits_ctas());
  EXPECT_EQ(modes[8].name(), "max-ctas-16");
  EXPECT_TRUE(!modes[8].on_partition() && modes[8].limits_ctas());
  for (const auto &m : modes)
    EXPECT_EQ(mode::from_name(m.name()), m) << m.name();
  EXPECT_FALSE(mode::from_name("green-0"));
  EXPECT_FALSE(mode::from_name("green-x"));
  EXPECT_FALSE(mode::from_name("green-ctas-"));
  EXPECT_FALSE(mode::from_name("other"));
}

TEST(CommBandwidth, BusBandwidthIsAlgorithmBandwidthTimesTwoNMinusOneOverN) {
  // 1 GB in 10 ms: 100 GB/s algorithm bandwidth; 2 GPUs: x1, 8 GPUs: x1.75.
  EXPECT_DOUBLE_EQ(bus_bandwidth_gbs(1'000'000'000, 10'000, 2), 100.0);
  EXPECT_DOUBLE_EQ(bus_bandwidth_gbs(1'000'000'000, 10'000, 8), 175.0);
  EXPECT_EQ(bus_bandwidth_gbs(1'000, 0, 2), 0.0);
}

point make(mode m, std::size_t bytes, double us, double tflops) {
  point p;
  p.m = m;
  p.bytes = bytes;
  for (int i = 0; i < 50; ++i)
    p.allreduce_us.push_back(us + (i % 5)); // p50 = us + 2
  p.gemm_tflops = tflops;
  if (m.on_partition())
    p.comm_sms = {m.k, m.k};
  return p;
}

results synthetic() {
  results r;
  r.gpus = 2;
  r.devices = {0, 1};
  r.ks = {8, 16, 32};
  r.sizes = {MiB, 256 * MiB};
  r.iterations = 50;
  r.warmup = 5;
  r.gemm_n = 8192;
  r.tolerance_percent = 10;
  r.gemm_alone_tflops = 600;
  for (std::size_t b : r.sizes) {
    const bool big = b > MiB;
    r.points.push_back(make({mode_kind::alone, 0}, b, big ? 2000 : 20, 0));
    r.points.push_back(make({mode_kind::shared, 0}, b, big ? 4000 : 400, 500));
    r.points.push_back(make({mode_kind::shared_high, 0}, b, big ? 2600 : 30, 520));
    // 1 MiB: 8 SMs are as good as the best; 256 MiB: 8 too slow, 16 within 10%, 32 the best.
    r.points.push_back(make({mode_kind::partitioned, 8}, b, big ? 4000 : 31, 580));
    r.points.push_back(make({mode_kind::partitioned, 16}, b, big ? 2150 : 30, 560));
    r.points.push_back(make({mode_kind::partitioned, 32}, b, big ? 2000 : 29, 520));
    r.points.push_back(make({mode_kind::max_ctas, 8}, b, big ? 3000 : 300, 540));
  }
  return r;
}

TEST(CommAnswers, SmallestKWithinTheToleranceOfTheBestMode) {
  const auto a = answers(synthetic());
  ASSERT_EQ(a.size(), 2u);
  ASSERT_TRUE(a[0].k);
  EXPECT_EQ(*a[0].k, 8u); // 33 us against the best 31 (green-32): within 10%
  EXPECT_EQ(a[0].best_mode, "green-32");
  EXPECT_NEAR(a[0].gemm_fraction, 580.0 / 600.0, 1e-9);
  ASSERT_TRUE(a[1].k);
  EXPECT_EQ(*a[1].k, 16u); // 2152 against 2002: within 10%; 8 SMs (4002) are not
  EXPECT_NE(a[1].text.find("16 SMs suffice"), std::string::npos) << a[1].text;
  // 'alone' has no GEMM running: it is never the best mode of an answer.
  for (const auto &x : a)
    EXPECT_NE(x.best_mode, "alone");
}

// green-ctas-k counts as k SMs too: at the smallest k that qualifies the faster of the two modes
// is named.
TEST(CommAnswers, GreenWithMatchingCtasIsAKSmAnswerToo) {
  results r = synthetic();
  r.points.push_back(make({mode_kind::partitioned_ctas, 8}, 256 * MiB, 2100, 575));
  r.points.push_back(make({mode_kind::partitioned_ctas, 16}, MiB, 28, 560));
  const auto a = answers(r);
  ASSERT_TRUE(a[1].k);
  EXPECT_EQ(*a[1].k, 8u); // 2102 against the best 2002: within 10%, where green-8 (4002) is not
  EXPECT_EQ(a[1].k_mode, "green-ctas-8");
  EXPECT_NE(a[1].text.find("8 SMs suffice (green-ctas-8)"), std::string::npos) << a[1].text;
  ASSERT_TRUE(a[0].k);
  EXPECT_EQ(*a[0].k, 8u); // green-8 still; green-ctas-16 (30) is the new best, 33 is within 10%
  EXPECT_EQ(a[0].k_mode, "green-8");
  EXPECT_EQ(a[0].best_mode, "green-ctas-16");
}

// A k the GPU cannot place exactly is rounded up (20 -> 24 on an H200): the answer is the SMs
// the partition obtained, and says what was asked for.
TEST(CommAnswers, AnswerIsTheSmsObtained) {
  results r = synthetic();
  for (auto &q : r.points) // 16 SMs no longer suffice at 256 MiB
    if (q.m == mode{mode_kind::partitioned, 16} && q.bytes == 256 * MiB)
      q.allreduce_us.assign(50, 3000);
  point p = make({mode_kind::partitioned, 20}, 256 * MiB, 2100, 570);
  p.comm_sms = {24, 24};
  r.points.push_back(p);
  const auto a = answers(r);
  ASSERT_TRUE(a[1].k);
  EXPECT_EQ(*a[1].k, 24u); // 2102 is within 10% of 2002, and 24 < 32
  EXPECT_NE(a[1].text.find("24 SMs suffice (green-20, 20 asked for, rounded up)"),
            std::string::npos)
      << a[1].text;
}

TEST(CommAnswers, NoKWithinToleranceSaysSo) {
  results r = synthetic();
  for (auto &p : r.points)
    if (p.m.kind == mode_kind::partitioned && p.bytes > MiB)
      p.allreduce_us.assign(50, 1e6); // every k is now far off the best mode, shared-high
  const auto a = answers(r);
  EXPECT_FALSE(a[1].k);
  EXPECT_NE(a[1].text.find("no k measured"), std::string::npos) << a[1].text;
}

const nlohmann::json h200 = {{"gpu", "NVIDIA H200"},
                             {"driver_version", "13.0"},
                             {"nccl_version", "2.27.3"},
                             {"date", "2026-12-01T00:00:00Z"}};

TEST(CommReport, RecordInEveryFormat) {
  const results r = synthetic();
  const report::record rec = comm_record(r, h200);
  greenctx_test::expect_golden_record(rec, "bench-comm");
  EXPECT_EQ(rec.kind, "bench-comm");
  const std::string text = report::to_text(rec);
  EXPECT_TRUE(contains(text, "256 MiB")) << text;
  EXPECT_TRUE(contains(text, "green-16")) << text;
  EXPECT_TRUE(contains(text, "How many SMs the all-reduce needs")) << text;
  EXPECT_TRUE(contains(text, "16 SMs suffice")) << text;
  EXPECT_TRUE(contains(text, "answers: 1 MiB: 8 SMs, 256 MiB: 16 SMs")) << text;
  EXPECT_TRUE(contains(text, "NCCL 2.27.3")) << text;
  // One row per mode and size: p50 (us + 2), bus bandwidth, what the GEMM kept of its 600.
  const report::series &points = *rec.table("points");
  ASSERT_EQ(points.rows.size(), r.points.size());
  const auto &green16 = points.rows[11]; // 256 MiB, green-16: 2150 + (0..4)
  EXPECT_EQ(green16[points.index("mode")], report::cell{std::string("green-16")});
  EXPECT_EQ(green16[points.index("p50_us")], report::cell{2152.0});
  EXPECT_EQ(green16[points.index("p99_us")], report::cell{2154.0});
  EXPECT_DOUBLE_EQ(std::get<double>(green16[points.index("busbw_gbs")]),
                   bus_bandwidth_gbs(256 * MiB, 2152, 2));
  EXPECT_DOUBLE_EQ(std::get<double>(green16[points.index("gemm_kept")]), 100 * 560.0 / 600);
  EXPECT_EQ(points.rows[0][points.index("gemm_tflops")], report::cell{}); // alone: no GEMM

  const auto j = report::to_json(rec);
  EXPECT_EQ(j["tables"]["answers"]["rows"].size(), 2u);
  EXPECT_EQ(j["tables"]["answers"]["rows"][1]["k"], 16);
  EXPECT_EQ(j["tables"]["samples"]["rows"].size(), r.points.size() * 50);
  EXPECT_EQ(j["tables"]["partitions"]["rows"].size(), 2u * 3 * 2); // 2 GPUs, green-8..32, 2 sizes
  EXPECT_EQ(j["tables"]["partitions"]["rows"][1]["gpu"], 1);
  const report::record back = report::from_json(nlohmann::ordered_json::parse(j.dump()));
  EXPECT_EQ(report::to_json(back), j);
  EXPECT_EQ(report::to_text(back), text);

  const std::string csv = report::to_csv(rec);
  EXPECT_EQ(static_cast<std::size_t>(std::count(csv.begin(), csv.end(), '\n')),
            r.points.size() + 1);
  EXPECT_EQ(csv.rfind("size,bytes,mode,comm_sms,samples,p50_us,p99_us,busbw_gbs,gemm_tflops,"
                      "gemm_kept,confined,failure\n",
                      0),
            0u)
      << csv;
  const std::string svg = report::to_svg(rec);
  EXPECT_EQ(svg.rfind("<svg", 0), 0u) << svg.substr(0, 80);
  EXPECT_TRUE(contains(svg, "</svg>"));
  EXPECT_TRUE(contains(svg, "max-ctas-8"));
  EXPECT_TRUE(contains(svg, "256 MiB")); // the sizes label the x axis
  EXPECT_TRUE(contains(svg, "GEMM alone"));
}

// A partitioned mode whose all-reduce ran outside its SMs (the confinement check) is no answer
// and no best mode; the report says which modes were checked and what was seen.
TEST(CommAnswers, ModesThatRanOutsideTheirPartitionAreNoAnswer) {
  results r = synthetic();
  for (auto &p : r.points)
    if (p.m.kind == mode_kind::partitioned) {
      p.confined = p.m.k != 8;
      p.confinement = p.m.k == 8 ? "NOT confined: ran on other SMs" : "confined: waited";
    }
  const auto a = answers(r);
  ASSERT_TRUE(a[0].k);
  EXPECT_EQ(*a[0].k, 16u); // 8 would qualify at 1 MiB, but its all-reduce was not on its 8 SMs
  const std::string text = report::to_text(comm_record(r, {}));
  EXPECT_TRUE(contains(text, "does the all-reduce stay on its k SMs?")) << text;
  EXPECT_TRUE(contains(text, "green-8   no        NOT confined: ran on other SMs")) << text;
  EXPECT_TRUE(contains(text, "green-16  yes       confined: waited")) << text;
  EXPECT_TRUE(contains(text, "8 (NOT confined)")) << text;
  EXPECT_TRUE(contains(report::to_csv(comm_record(r, {})), ",no,"));
}

// The two-GPU sweep of the H200 (tests/data/bench-comm.json): it reads back to the same JSON
// and keeps each size's answer.
TEST(CommReport, ARealRunReadsBack) {
  const auto j = saved_record("bench-comm.json");
  const report::record rec = report::from_json(j);
  EXPECT_EQ(report::to_json(rec), j);
  EXPECT_EQ(rec.table("points")->rows.size(), 108u);
  const report::series &answers = *rec.table("answers");
  ASSERT_EQ(answers.rows.size(), 6u);
  EXPECT_TRUE(contains(report::to_text(rec), "64 MiB: 32 SMs suffice (green-ctas-32)"));
  EXPECT_FALSE(report::to_svg(rec).empty());
}

// GREENCTX_COMM_ONE_GPU_TEST runs (the tool's own GPU check on one GPU) say in every report that
// their numbers answer nothing; an ordinary run's reports do not.
TEST(CommReport, OneGpuTestRunsSaySoInTextAndSvg) {
  const results r = synthetic();
  const nlohmann::json plain = {{"gpu", "NVIDIA H200"}};
  nlohmann::json test = plain;
  test["one_gpu_test"] = true;
  test["one_gpu_test_operation"] = "one-rank mean";
  EXPECT_FALSE(contains(report::to_text(comm_record(r, plain)), "One-GPU test run"));
  EXPECT_FALSE(contains(report::to_svg(comm_record(r, plain)), "ONE-GPU TEST RUN"));
  const report::record rec = comm_record(r, test);
  EXPECT_TRUE(contains(report::to_text(rec), "One-GPU test run"));
  EXPECT_TRUE(contains(report::to_text(rec), "(operation: one-rank mean)"));
  EXPECT_TRUE(contains(report::to_markdown(rec), "One-GPU test run"));
  EXPECT_TRUE(contains(report::to_svg(rec), "ONE-GPU TEST RUN"));
  EXPECT_EQ(report::to_json(rec)["environment"]["one_gpu_test"]["value"], "yes");
}

TEST(CommReport, FailedPointsAreShownWithTheirReason) {
  results r = synthetic();
  r.points[3].allreduce_us.clear();
  r.points[3].failure = "an all-reduce of 1 MiB did not finish within 30 s on GPU 0";
  const std::string text = report::to_text(comm_record(r, {}));
  EXPECT_TRUE(contains(text, "an all-reduce of 1 MiB did not finish within 30 s on GPU 0")) << text;
  const auto a = answers(r);
  ASSERT_TRUE(a[0].k);
  EXPECT_EQ(*a[0].k, 16u); // green-8 has no samples at 1 MiB now
}

// A saved run re-reported by the CLI without a GPU: `bench comm --from F`
// (the driver is pointed at nothing, so any driver call would fail with exit 3), and the record it
// writes read back to the same report.
TEST(CommReport, SavedRunIsReportedAgainByTheCli) {
  const auto dir =
      std::filesystem::temp_directory_path() /
      ("greenctx-comm-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" +
       std::to_string(std::rand()));
  std::filesystem::create_directories(dir);
  const std::string cli = std::getenv("GREENCTX_CLI") && *std::getenv("GREENCTX_CLI")
                              ? std::getenv("GREENCTX_CLI")
                              : GREENCTX_CLI_PATH;
  const auto run = [&](const std::string &from, const std::string &more, const char *out) {
    const std::string cmd = "GREENCTX_LIBCUDA=/nonexistent/libcuda.so.1 '" + cli +
                            "' bench --comm --from '" + from + "' " + more + " > '" +
                            (dir / out).string() + "' 2>&1";
    const int status = std::system(cmd.c_str());
    std::stringstream text;
    text << std::ifstream(dir / out).rdbuf();
    EXPECT_EQ(status, 0) << text.str();
    return text.str();
  };
  const std::string first = run(greenctx_test::data_path("bench-comm.json"),
                                "--svg '" + (dir / "comm.svg").string() + "' --json '" +
                                    (dir / "comm.json").string() + "'",
                                "first.txt");
  EXPECT_TRUE(contains(first, "64 MiB: 32 SMs suffice (green-ctas-32)")) << first;
  EXPECT_TRUE(std::filesystem::exists(dir / "comm.svg"));
  EXPECT_EQ(run((dir / "comm.json").string(), "", "again.txt"), first);
  std::filesystem::remove_all(dir);
}

} // namespace
} // namespace greenctx::cli::bench::comm
