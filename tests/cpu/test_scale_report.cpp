// SPDX-License-Identifier: Apache-2.0
// greenctx scale's pure code: the --sms list and its errors, valid counts, summaries and
// speed-ups, and each output (text, markdown, JSON, CSV, SVG) on synthetic runs.
#include "commands/scale/scale_record.hpp"
#include "scale_outputs.hpp"
#include "commands/scale/sm_list.hpp"
#include "golden_record.hpp"
#include "text_checks.hpp"

#include <greenctx/plan/error.hpp>
#include <greenctx/plan/granularity.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <functional>

namespace greenctx::cli::scale {
namespace {

using greenctx_test::contains;
using greenctx_test::rejection;

constexpr granularity hopper{8, 8};

std::string parse_error(std::string_view text) {
  return rejection([&] { parse_sm_list(text); });
}

std::string check_error(const std::vector<unsigned> &counts, unsigned device_sms = 132,
                        granularity g = hopper) {
  return rejection([&] { check_sm_list(counts, valid_counts(device_sms, g), device_sms); });
}

// ---- valid counts ------------------------------------------------------------------------------

TEST(ScaleCounts, NearestValidAndDescription) {
  const auto v = valid_counts(132, hopper);
  auto n = nearest_valid(12, v);
  EXPECT_EQ(n.below, 8u);
  EXPECT_EQ(n.above, 16u);
  n = nearest_valid(16, v);
  EXPECT_EQ(n.below, 16u);
  EXPECT_EQ(n.above, 16u);
  n = nearest_valid(3, v);
  EXPECT_FALSE(n.below);
  EXPECT_EQ(n.above, 8u);
  n = nearest_valid(140, v);
  EXPECT_EQ(n.below, 132u);
  EXPECT_FALSE(n.above);
  EXPECT_EQ(describe_counts(v), "8, 16, 24, ..., 128, 132");
  EXPECT_EQ(describe_counts({8, 16}), "8, 16");
}

// ---- --sms -------------------------------------------------------------------------------------

TEST(ScaleSmList, ParsesIncreasingCounts) {
  EXPECT_EQ(parse_sm_list("8,16,32"), (std::vector<unsigned>{8, 16, 32}));
  EXPECT_EQ(parse_sm_list(" 8, 16 ,132 "), (std::vector<unsigned>{8, 16, 132}));
  EXPECT_EQ(parse_sm_list("24"), std::vector<unsigned>{24});
  EXPECT_NO_THROW(check_sm_list({8, 16, 128, 132}, valid_counts(132, hopper), 132));
}

TEST(ScaleSmList, EmptyListOrEntry) {
  EXPECT_TRUE(contains(parse_error(""), "--sms is empty"));
  EXPECT_TRUE(contains(parse_error("  "), "--sms is empty"));
  const std::string e = parse_error("8,,16");
  EXPECT_TRUE(contains(e, "entry 2 is empty"));
  EXPECT_TRUE(contains(e, "'8,,16'"));
  EXPECT_TRUE(contains(parse_error("8,"), "entry 2 is empty"));
}

TEST(ScaleSmList, NotANumber) {
  for (const char *bad :
       {"16,abc", "16,12abc", "16,-8", "16,+8", "16,1.5", "16;32", "16,0x20", "16,1e3"}) {
    const std::string e = parse_error(bad);
    EXPECT_TRUE(contains(e, "is not a whole number of SMs")) << bad;
  }
  EXPECT_TRUE(contains(parse_error("16,abc"), "entry 2 ('abc')"));
  EXPECT_TRUE(contains(parse_error("99999999999999999999999"), "far more than any GPU"));
  EXPECT_TRUE(contains(parse_error("8,5000000"), "far more than any GPU"));
}

TEST(ScaleSmList, ZeroDuplicateAndOrder) {
  EXPECT_TRUE(contains(parse_error("0"), "asks for 0 SMs"));
  EXPECT_TRUE(contains(parse_error("8,0"), "entry 2 asks for 0 SMs"));
  const std::string dup = parse_error("8,16,16");
  EXPECT_TRUE(contains(dup, "lists 16 twice (entries 2 and 3)"));
  EXPECT_TRUE(contains(dup, "--sms 8,16"));
  const std::string order = parse_error("32,16,64");
  EXPECT_TRUE(contains(order, "increasing order"));
  EXPECT_TRUE(contains(order, "entry 2 (16) comes after entry 1 (32)"));
  EXPECT_TRUE(contains(order, "--sms 16,32,64")) << "suggests the sorted list";
}

TEST(ScaleSmList, AboveTheDevice) {
  const std::string e = check_error({8, 200});
  EXPECT_TRUE(contains(e, "entry 2 (200)"));
  EXPECT_TRUE(contains(e, "more than the GPU's 132 SMs"));
  EXPECT_TRUE(contains(e, "largest valid count is 132"));
}

TEST(ScaleSmList, CountNoSplitGivesNamesTheNearestValidCounts) {
  std::string e = check_error({8, 12});
  EXPECT_TRUE(contains(e, "entry 2 (12)"));
  EXPECT_TRUE(contains(e, "no split gives exactly 12 SMs"));
  EXPECT_TRUE(contains(e, "nearest valid counts are 8 and 16"));
  e = check_error({130});
  EXPECT_TRUE(contains(e, "nearest valid counts are 128 and 132"));
  e = check_error({4});
  EXPECT_TRUE(contains(e, "smallest valid count is 8"));
  EXPECT_NO_THROW(check_sm_list({12}, valid_counts(132, {2, 2}), 132)) << "fine steps allow 12";
  e = check_error({8}, 6);
  EXPECT_TRUE(contains(e, "no SM count can be split off"));
}

// ---- summaries ---------------------------------------------------------------------------------

run_record ok_run(unsigned repeat, double s, bool cuda = true) {
  run_record r;
  r.repeat = repeat;
  r.wall_s = s;
  r.figure = s; // --metric wall
  r.cuda_used = cuda;
  if (cuda) {
    r.confined_devices = {0};
    r.green_contexts = 1;
  }
  return r;
}

point make_point(unsigned sms, std::vector<double> times, bool baseline = false) {
  point p{sms, baseline, {}};
  for (std::size_t i = 0; i < times.size(); ++i)
    p.runs.push_back(ok_run(static_cast<unsigned>(i), times[i], !baseline));
  return p;
}

// 8 SMs: median 4 s; 16: 2 s; 132: 0.5 s; unconfined: 0.4 s.
results synthetic() {
  results r;
  r.program = {"./gemm", "8192", "--label", "a <b> & 'c'"};
  r.device = 0;
  r.device_sms = 132;
  r.repeat = 3;
  r.warmup = 1;
  r.warmup_sms = 132;
  r.warmups.push_back(ok_run(0, 0.9));
  r.points = {make_point(8, {4.2, 4.0, 3.8}), make_point(16, {2.0, 2.1, 1.9}),
              make_point(132, {0.5, 0.55, 0.45}), make_point(132, {0.4, 0.41, 0.39}, true)};
  return r;
}

const nlohmann::json env{{"gpu", "Test GPU"}, {"driver_version", "13.0"}, {"date", "today"}};

TEST(ScaleSummary, MediansSpreadAndSpeedUps) {
  const results r = synthetic();
  const auto s = summarize(r);
  ASSERT_EQ(s.size(), 4u);
  EXPECT_DOUBLE_EQ(s[0].figure.p50, 4.0);
  EXPECT_DOUBLE_EQ(s[0].figure.min, 3.8);
  EXPECT_DOUBLE_EQ(s[0].figure.max, 4.2);
  EXPECT_NEAR(s[0].figure.noise, 0.2 / 4.0, 1e-12); // stdev 0.2 around 4
  EXPECT_DOUBLE_EQ(*s[0].vs_smallest, 1.0);
  EXPECT_DOUBLE_EQ(*s[1].vs_smallest, 2.0);
  EXPECT_DOUBLE_EQ(*s[2].vs_smallest, 8.0);
  EXPECT_DOUBLE_EQ(*s[3].vs_smallest, 10.0);
  EXPECT_DOUBLE_EQ(*s[0].vs_baseline, 0.1);
  EXPECT_DOUBLE_EQ(*s[2].vs_baseline, 0.8);
  EXPECT_DOUBLE_EQ(*s[3].vs_baseline, 1.0);
  for (const auto &x : s)
    EXPECT_EQ(x.status, "ok");
}

TEST(ScaleSummary, FailedRunsAreLeftOutAndNamed) {
  results r = synthetic();
  r.points[1].runs[1].signal = SIGSEGV;
  r.points[2].runs.resize(1); // stopped after its first run
  r.points[3].runs.clear();   // never ran
  r.failure = "run 8 of 13 (16 SMs, repeat 2 of 3): ended with signal 11 (SIGSEGV)";
  const auto s = summarize(r);
  EXPECT_EQ(s[1].figure.count, 2u);
  EXPECT_DOUBLE_EQ(s[1].figure.p50, 1.95);
  EXPECT_EQ(s[1].status, "run 2: signal 11 (SIGSEGV)");
  EXPECT_EQ(s[2].status, "ok, 1 of 3 runs");
  EXPECT_EQ(s[3].status, "not run");
  EXPECT_EQ(s[3].figure.count, 0u);
  EXPECT_FALSE(s[3].vs_smallest);
  EXPECT_FALSE(s[0].vs_baseline) << "no baseline, no speed-up against it";

  const std::string table = text_table(r, env);
  EXPECT_TRUE(contains(table, "FAILED: run 8 of 13"));
  EXPECT_TRUE(contains(table, "not run"));
  EXPECT_TRUE(contains(markdown(r, env), "FAILED: run 8 of 13"));
  const nlohmann::ordered_json j = record_json(r, env);
  EXPECT_EQ(j["values"]["complete"]["value"], "no");
  EXPECT_EQ(j["tables"]["runs"]["rows"][4]["end"], "signal 11 (SIGSEGV)") << "16 SMs, run 2";
  EXPECT_TRUE(j["tables"]["points"]["rows"][3]["vs_smallest"].is_null());
  const std::string svg = to_svg(r, env);
  EXPECT_TRUE(contains(svg, "FAILED: run 8 of 13"));
  EXPECT_EQ(svg.substr(svg.size() - 7), "</svg>\n");
}

TEST(ScaleSummary, ConfinedRunWithoutCudaIsNamed) {
  results r = synthetic();
  r.points[0].runs[0].cuda_used = false;
  EXPECT_EQ(summarize(r)[0].status, "run 1: no CUDA");
  r.points[0].runs[0].cuda_used = true;
  r.points[3].runs[0].cuda_used = false; // unconfined: the preload library is not there to see
  EXPECT_EQ(summarize(r)[3].status, "ok");
}

// ---- outputs -----------------------------------------------------------------------------------

// `text` with every run of spaces made one space: the aligned table's cells in order.
std::string squashed(const std::string &text) {
  std::string out;
  for (char c : text)
    if (c != ' ' || out.empty() || out.back() != ' ')
      out += c;
  return out;
}

TEST(ScaleReport, TextTableHasEveryCountAndTheSpeedUps) {
  const std::string t = text_table(synthetic(), env);
  EXPECT_TRUE(t.starts_with("greenctx scale on GPU 0: ./gemm 8192 --label 'a <b> & 'c''\n")) << t;
  EXPECT_TRUE(contains(t, "GPU Test GPU, driver CUDA 13.0, date today")) << t;
  EXPECT_TRUE(contains(t, "timed runs per SM count 3, warm-up runs 1, warm-up on 132 SMs")) << t;
  EXPECT_TRUE(contains(t, "median s")) << t;
  EXPECT_TRUE(contains(t, "vs 8 SMs")) << t;
  EXPECT_TRUE(contains(t, "vs unconfined")) << t;
  EXPECT_TRUE(contains(t, "unconfined: all 132 SMs, no green context")) << t;
  // 8 SMs: median, min, max, rsd, vs itself, ideal, vs unconfined, runs, status.
  const std::string cells = squashed(t);
  EXPECT_TRUE(contains(cells, "\n 8 4.000 3.800 4.200 5.0 1.00 1.00 0.10 3 ok\n")) << t;
  EXPECT_TRUE(contains(cells, "\n 132 0.500 0.450 0.550 10.0 8.00 16.50 0.80 3 ok\n")) << t;
  EXPECT_TRUE(contains(cells, "\nunconfined 0.400 0.390 0.410 2.5 10.00 - 1.00 3 ok\n")) << t;
  EXPECT_FALSE(contains(t, "FAILED")) << t;
  EXPECT_FALSE(contains(t, "every timed run")) << "the runs are detail: files only";
}

TEST(ScaleReport, TheWholeRecordIsTheSavedOne) {
  greenctx_test::expect_golden_record(scale_record(synthetic(), env), "scale");
}

TEST(ScaleReport, UnitFollowsTheTimes) {
  results r = synthetic();
  for (auto &p : r.points)
    for (auto &run : p.runs)
      run.figure = run.wall_s /= 100; // 40 ms at 8 SMs
  const std::string t = text_table(r, env);
  EXPECT_TRUE(contains(t, "median ms")) << t;
  EXPECT_TRUE(contains(t, "40.00")) << t;
}

TEST(ScaleReport, ProblemsBecomeNotes) {
  results r = synthetic();
  r.points[1].runs[0].problems = {"cudaStreamPerThread launch"};
  r.points[1].runs[2].problems = {"cudaStreamPerThread launch"};
  const std::string t = text_table(r, env);
  EXPECT_TRUE(contains(t, "note: at 16 SMs: not confined: cudaStreamPerThread launch"));
  EXPECT_EQ(t.find("not confined"), t.rfind("not confined")) << "once per point and problem";
  const std::string md = markdown(r, env);
  EXPECT_TRUE(contains(md, "note: at 16 SMs: not confined")) << md;
  EXPECT_TRUE(contains(md, "| cudaStreamPerThread launch |")) << "in the runs table\n" << md;
}

TEST(ScaleReport, MarkdownHasEveryTable) {
  const std::string md = markdown(synthetic(), env);
  EXPECT_EQ(md.rfind("# greenctx scale on GPU 0: ./gemm 8192", 0), 0u) << md;
  EXPECT_TRUE(contains(md, "| SMs | median s | min s | max s | rsd % | vs 8 SMs | ideal | "
                           "vs unconfined | runs | status |"))
      << md;
  EXPECT_TRUE(contains(md, "| 8 | 4.000 | 3.800 | 4.200 | 5.0 | 1.00 | 1.00 | 0.10 | 3 | ok |"))
      << md;
  EXPECT_TRUE(contains(md, "| unconfined | 0.400 |")) << md;
  EXPECT_TRUE(contains(md, "## every timed run")) << md;
  EXPECT_TRUE(contains(md, "## the warm-up runs")) << md;
}

// The record's JSON (what --json writes now): every run, and read back by --from to the same
// renderings.
TEST(ScaleReport, RecordJsonKeepsEveryRunAndReadsBack) {
  const results r = synthetic();
  const nlohmann::ordered_json j = record_json(r, env);
  EXPECT_EQ(j["kind"], "greenctx.scale");
  EXPECT_EQ(j["schema"], 2);
  EXPECT_EQ(j["environment"]["gpu"]["value"], "Test GPU");
  EXPECT_EQ(j["config"]["program"]["value"], "./gemm 8192 --label 'a <b> & 'c''");
  EXPECT_EQ(j["config"]["sms"]["value"], "8,16,132");
  const auto &points = j["tables"]["points"]["rows"];
  ASSERT_EQ(points.size(), 4u);
  EXPECT_EQ(points[0]["median"], 4.0);
  EXPECT_EQ(points[3]["sms"], "unconfined");
  const auto &runs = j["tables"]["runs"]["rows"];
  ASSERT_EQ(runs.size(), 12u);
  EXPECT_EQ(runs[0]["sms"], 8);
  EXPECT_EQ(runs[0]["figure"], 4.2);
  EXPECT_EQ(runs[0]["end"], "exit 0");
  EXPECT_EQ(runs[0]["confined_devices"], "0");
  EXPECT_EQ(runs[11]["sms"], "unconfined");
  EXPECT_EQ(runs[11]["confined_devices"], "");
  EXPECT_EQ(j["tables"]["warmups"]["rows"].size(), 1u);
  const report::record back = report::from_json(nlohmann::ordered_json::parse(j.dump()));
  EXPECT_EQ(report::to_markdown(back), markdown(r, env));
  EXPECT_EQ(report::to_svg(back), to_svg(r, env));
}

TEST(ScaleReport, CsvIsThePointsTable) {
  const std::string csv = to_csv(synthetic());
  EXPECT_TRUE(
      csv.starts_with("sms,median,min,max,rsd,vs_smallest,ideal,vs_unconfined,runs,status\n"))
      << csv;
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 1 + 4) << csv;
  EXPECT_TRUE(contains(csv, "\n8,4,3.8,4.2,5.0000")) << "exact numbers\n" << csv;
  EXPECT_TRUE(contains(csv, ",1,1,0.1,3,ok\n")) << csv;
  EXPECT_TRUE(contains(csv, "\nunconfined,0.4,0.39,0.41,")) << csv;
}

TEST(ScaleReport, SvgPlotsTheFigureAndTheSpeedUp) {
  const std::string svg = to_svg(synthetic(), env);
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_EQ(svg.substr(svg.size() - 7), "</svg>\n");
  EXPECT_TRUE(contains(svg, "a &lt;b&gt; &amp;")) << "text is escaped";
  EXPECT_FALSE(contains(svg, "a <b>"));
  EXPECT_TRUE(contains(svg, "Median wall time of the whole program (start-up included) (s)"))
      << svg;
  EXPECT_TRUE(contains(svg, "Speed-up against 8 SMs")) << svg;
  EXPECT_TRUE(contains(svg, "unconfined 0.400 s")) << svg;
  EXPECT_TRUE(contains(svg, "unconfined 10.00x")) << svg;
  // Median, min and max; the speed-up and the ideal: each through the three confined counts.
  std::size_t lines = 0;
  for (auto at = svg.find("<polyline"); at != std::string::npos; at = svg.find("<polyline", at + 1))
    ++lines;
  EXPECT_EQ(lines, 5u);
  EXPECT_EQ(svg.find("nan"), std::string::npos);
  EXPECT_EQ(svg.find("inf"), std::string::npos);
  if (const char *out = std::getenv("GREENCTX_TEST_SCALE_SVG")) // for looking at it by hand
    std::ofstream(out) << svg;
}

TEST(ScaleReport, SvgWithoutSuccessfulRunsSaysSo) {
  results r = synthetic();
  for (auto &p : r.points)
    p.runs.clear();
  r.failure = "run 1 of 13 (warm-up 1 of 1, 132 SMs): the program never used CUDA";
  const std::string svg = to_svg(r, env);
  EXPECT_TRUE(contains(svg, "nothing measured to draw")) << svg;
  EXPECT_TRUE(contains(svg, "FAILED: run 1 of 13")) << "the last note heads the SVG";
  EXPECT_EQ(svg.substr(svg.size() - 7), "</svg>\n");
  EXPECT_TRUE(contains(text_table(r, env), "never used CUDA"));
}

} // namespace
} // namespace greenctx::cli::scale
