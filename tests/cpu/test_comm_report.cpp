// greenctx bench --comm without a GPU: the --sizes and --comm-sms lists, the modes, the bus
// bandwidth, the answers and the report on synthetic samples (pure code).
#include "bench/comm.hpp"

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

TEST(CommReport, MarkdownJsonCsvAndSvg) {
  const results r = synthetic();
  const nlohmann::json env = {{"gpu", "NVIDIA H200"},
                              {"driver_version", "13.0"},
                              {"nccl_version", "2.27.3"},
                              {"date", "2026-12-01T00:00:00Z"}};
  const std::string md = markdown(r, env);
  EXPECT_NE(md.find("## 256 MiB"), std::string::npos) << md;
  EXPECT_NE(md.find("green-16"), std::string::npos) << md;
  EXPECT_NE(md.find("How many SMs the all-reduce needs"), std::string::npos) << md;
  EXPECT_NE(md.find("16 SMs suffice"), std::string::npos) << md;

  const nlohmann::json j = to_json(r, env);
  EXPECT_EQ(j["answers"].size(), 2u);
  const results back = from_json(j);
  EXPECT_EQ(back.points.size(), r.points.size());
  EXPECT_EQ(back.points[3].m, r.points[3].m);
  EXPECT_EQ(back.points[3].allreduce_us, r.points[3].allreduce_us);
  EXPECT_EQ(markdown(back, env), md);

  const std::string csv = to_csv(r);
  EXPECT_EQ(static_cast<std::size_t>(std::count(csv.begin(), csv.end(), '\n')),
            r.points.size() + 1);
  const std::string svg = to_svg(r, env);
  EXPECT_EQ(svg.rfind("<svg", 0), 0u) << svg.substr(0, 80);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
  EXPECT_NE(svg.find("max-ctas-8"), std::string::npos);
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
  const std::string md = markdown(r, {});
  EXPECT_NE(md.find("Does the all-reduce stay on its k SMs?"), std::string::npos) << md;
  EXPECT_NE(md.find("- green-8: NOT confined: ran on other SMs"), std::string::npos) << md;
  EXPECT_NE(md.find("- green-16: confined: waited"), std::string::npos) << md;
  EXPECT_NE(md.find("8 (NOT confined)"), std::string::npos) << md;
  EXPECT_NE(to_csv(r).find(",no,"), std::string::npos);

  nlohmann::json j = to_json(r, {});
  const results back = from_json(j);
  EXPECT_EQ(back.points[3].confined, r.points[3].confined);
  EXPECT_EQ(back.points[3].confinement, r.points[3].confinement);
  EXPECT_FALSE(back.points[0].confined); // alone: never checked
  // A file from before the check has no "confined": read as not known.
  for (auto &q : j["points"]) {
    q.erase("confined");
    q.erase("confinement");
  }
  EXPECT_FALSE(from_json(j).points[3].confined.has_value());
}

// GREENCTX_COMM_ONE_GPU_TEST runs (the tool's own GPU check on one GPU) say in every report that
// their numbers answer nothing; an ordinary run's reports do not.
TEST(CommReport, OneGpuTestRunsSaySoInMarkdownAndSvg) {
  const results r = synthetic();
  const nlohmann::json plain = {{"gpu", "NVIDIA H200"}};
  nlohmann::json test = plain;
  test["one_gpu_test"] = true;
  EXPECT_EQ(markdown(r, plain).find("One-GPU test run"), std::string::npos);
  EXPECT_EQ(to_svg(r, plain).find("ONE-GPU TEST RUN"), std::string::npos);
  EXPECT_NE(markdown(r, test).find("One-GPU test run"), std::string::npos);
  EXPECT_NE(to_svg(r, test).find("ONE-GPU TEST RUN"), std::string::npos);
  EXPECT_EQ(to_json(r, test)["environment"]["one_gpu_test"], true);
}

TEST(CommReport, FailedPointsAreShownWithTheirReason) {
  results r = synthetic();
  r.points[3].allreduce_us.clear();
  r.points[3].failure = "an all-reduce of 1 MiB did not finish within 30 s on GPU 0";
  const std::string md = markdown(r, {});
  EXPECT_NE(md.find("failed: an all-reduce of 1 MiB did not finish"), std::string::npos) << md;
  const auto a = answers(r);
  ASSERT_TRUE(a[0].k);
  EXPECT_EQ(*a[0].k, 16u); // green-8 has no samples at 1 MiB now
}

// A saved run re-reported by the CLI without a GPU: `bench --comm --from F` (the driver is
// pointed at nothing, so any driver call would fail with exit 3).
TEST(CommReport, SavedRunIsReportedAgainByTheCli) {
  const auto dir =
      std::filesystem::temp_directory_path() /
      ("greenctx-comm-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" +
       std::to_string(std::rand()));
  std::filesystem::create_directories(dir);
  const nlohmann::json env = {{"gpu", "NVIDIA H200"}, {"driver_version", "13.0"}};
  std::ofstream(dir / "comm.json") << to_json(synthetic(), env).dump(1);
  const std::string cli = std::getenv("GREENCTX_CLI") && *std::getenv("GREENCTX_CLI")
                              ? std::getenv("GREENCTX_CLI")
                              : GREENCTX_CLI_PATH;
  const std::string cmd = "GREENCTX_LIBCUDA=/nonexistent/libcuda.so.1 '" + cli +
                          "' bench --comm --from '" + (dir / "comm.json").string() + "' --svg '" +
                          (dir / "comm.svg").string() + "' > '" + (dir / "out.md").string() +
                          "' 2>&1";
  const int status = std::system(cmd.c_str());
  std::stringstream out;
  out << std::ifstream(dir / "out.md").rdbuf();
  EXPECT_EQ(status, 0) << out.str();
  EXPECT_NE(out.str().find("16 SMs suffice"), std::string::npos) << out.str();
  EXPECT_TRUE(std::filesystem::exists(dir / "comm.svg"));
  std::filesystem::remove_all(dir);
}

} // namespace
} // namespace greenctx::cli::bench::comm
