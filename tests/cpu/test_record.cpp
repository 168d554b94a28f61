// SPDX-License-Identifier: Apache-2.0
// The report model (report/record.hpp): every rendering of one record, the JSON read back to the
// same record, refusals of documents of another shape; and tune's record (tune_report.hpp), with
// the tune files written before the record read back.
#include "report/output.hpp"
#include "report/record.hpp"
#include "saved_results.hpp"
#include "commands/tune/tune_record.hpp"
#include "golden_record.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace greenctx::cli {
namespace {

using report::cell;

report::record sample() {
  report::record r;
  r.kind = "sample";
  r.title = "a <sample> & its record";
  r.environment = {{"gpu", "GPU", "Synthetic H200", {}}, {"sm_count", "SMs", 132.0, {"", 0}}};
  r.config = {{"samples", "samples", 300.0, {"", 0}}, {"search", "search", "both", {}}};
  r.values = {{"p99_us", "p99", 41.25, {"us", 1}},
              {"missing", "not measured", cell{}, {"us", 1}},
              {"share", "share", 0.98765, {"", 3}},
              {"measurements", "measurements made", 7.0, {"", 0}, true}};
  report::series curve{"curve",
                       "the curve",
                       {{"sms", "SMs", {"", 0}},
                        {"p99_us", "p99", {"us", 1}},
                        {"rate", "rate", {"TFLOP/s", 2}},
                        {"note", "note", {}, align::left}}};
  curve.rows = {{8.0, 90.04, 612.345, "a, \"quoted\" note"},
                {16.0, 50.0, cell{}, ""},
                {24.0, 41.25, 598.0, "<- chosen"}};
  report::series order{"order", "in measuring order", {{"i", "#", {"", 0}}}};
  order.rows = {{1.0}, {2.0}};
  order.detail = true;
  r.tables = {curve, order};
  r.notes = {"use: 24,rest", "second note"};
  r.figures = {{"p99 by SMs",
                "curve",
                "sms",
                {"p99_us"},
                "us",
                {{"limit", "the bound", 60.0, {"us", 1}}},
                24.0}};
  return r;
}

TEST(Record, TextShowsTheTablesPeopleReadAndTheNotesLast) {
  const std::string t = report::to_text(sample());
  EXPECT_EQ(t.rfind("a <sample> & its record\n", 0), 0u) << t;
  EXPECT_NE(t.find("GPU Synthetic H200, SMs 132\n"), std::string::npos) << t;
  EXPECT_NE(t.find("asked: samples 300, search both\n"), std::string::npos) << t;
  EXPECT_NE(t.find("p99: 41.2 us\n"), std::string::npos) << t; // 41.25 to one decimal, as printf
  EXPECT_NE(t.find("not measured: -\n"), std::string::npos) << t;
  // Units in the headings, numbers aligned right, text left, nothing as "-".
  EXPECT_NE(t.find("SMs  p99 us  rate TFLOP/s  note\n"), std::string::npos) << t;
  EXPECT_NE(t.find("  8    90.0        612.35  a, \"quoted\" note\n"), std::string::npos) << t;
  EXPECT_NE(t.find(" 16    50.0             -\n"), std::string::npos) << t;
  EXPECT_EQ(t.find("in measuring order"), std::string::npos) << t; // a detail table
  EXPECT_EQ(t.find("measurements made"), std::string::npos) << t;  // a detail value
  EXPECT_NE(t.find("\nuse: 24,rest\nsecond note\n"), std::string::npos) << t;
}

TEST(Record, MarkdownHasEveryTable) {
  const std::string m = report::to_markdown(sample());
  EXPECT_EQ(m.rfind("# a <sample> & its record\n", 0), 0u) << m;
  EXPECT_NE(m.find("- SMs: 132\n"), std::string::npos) << m;
  EXPECT_NE(m.find("| SMs | p99 us | rate TFLOP/s | note |\n|---:|---:|---:|---|\n"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("## in measuring order"), std::string::npos) << m;
}

TEST(Record, CsvIsTheFirstTableWithExactNumbers) {
  EXPECT_EQ(report::to_csv(sample()), "sms,p99_us,rate,note\n"
                                      "8,90.04,612.345,\"a, \"\"quoted\"\" note\"\n"
                                      "16,50,,\n"
                                      "24,41.25,598,<- chosen\n");
}

TEST(Record, JsonReadsBackToTheSameRecord) {
  const report::record r = sample();
  const auto j = report::to_json(r);
  EXPECT_EQ(j["kind"], "greenctx.sample");
  EXPECT_EQ(j["values"]["p99_us"]["value"], 41.25);
  EXPECT_EQ(j["values"]["p99_us"]["unit"], "us");
  EXPECT_TRUE(j["values"]["missing"]["value"].is_null());
  EXPECT_TRUE(j["environment"]["sm_count"]["value"].is_number_integer());
  EXPECT_EQ(j["tables"]["curve"]["rows"][0]["rate"], 612.345);
  EXPECT_EQ(j["values"]["measurements"]["detail"], true);
  const auto again = report::from_json(nlohmann::ordered_json::parse(j.dump()));
  EXPECT_EQ(report::to_json(again), j);
  EXPECT_EQ(report::to_text(again), report::to_text(r));
  EXPECT_EQ(report::to_svg(again), report::to_svg(r));
}

// A detail field is a column of the JSON, the CSV and the markdown, not of the terminal's table.
TEST(Record, DetailFieldsAreLeftOffTheTerminal) {
  report::record r;
  r.kind = "sample";
  report::series s{"t", "", {{"n", "n", {"", 0}}, {"why", "why it is", {}, align::left, true}}};
  s.rows = {{1.0, "a long explanation"}};
  r.tables = {s};
  const std::string text = report::to_text(r);
  EXPECT_EQ(text.find("why it is"), std::string::npos) << text;
  EXPECT_EQ(text.find("a long explanation"), std::string::npos) << text;
  EXPECT_NE(report::to_markdown(r).find("| n | why it is |"), std::string::npos);
  EXPECT_EQ(report::to_csv(r), "n,why\n1,a long explanation\n");
  const auto j = report::to_json(r);
  EXPECT_EQ(j["tables"]["t"]["fields"]["why"]["detail"], true);
  EXPECT_FALSE(j["tables"]["t"]["fields"]["n"].contains("detail"));
  EXPECT_EQ(report::to_json(report::from_json(j)), j);
  EXPECT_EQ(report::to_text(report::from_json(j)), text);
}

// The GPU as titles name it, from what the environment has; a verdict read back.
TEST(Record, GpuDescribedAndVerdicts) {
  EXPECT_EQ(report::gpu_described({{"device", 1},
                                   {"gpu", "NVIDIA H200"},
                                   {"sm_count", 132},
                                   {"compute_capability", "9.0"}}),
            "GPU 1 (NVIDIA H200, 132 SMs, CC 9.0)");
  EXPECT_EQ(report::gpu_described({{"device", 0}}), "GPU 0");
  EXPECT_EQ(report::gpu_described(nlohmann::json()), "GPU ?");
  report::record r;
  r.values = {{"ok", "ok", "no", {}}, {"made", "made", "yes", {}}};
  EXPECT_TRUE(r.says_no("ok"));
  EXPECT_FALSE(r.says_no("made"));
  EXPECT_FALSE(r.says_no("absent"));
}

TEST(Record, DocumentsOfAnotherShapeAreRefused) {
  const auto good = report::to_json(sample());
  const auto refused = [&](auto change, const char *why) {
    auto j = good;
    change(j);
    // nlohmann's exceptions only: --from turns them into "not a ... JSON file" (the fuzz target
    // report_readers holds every reader to this).
    EXPECT_THROW(report::from_json(j), nlohmann::json::exception) << why;
  };
  refused([](auto &j) { j.erase("tables"); }, "no tables");
  refused([](auto &j) { j["kind"] = "sample"; }, "a kind without greenctx.");
  refused([](auto &j) { j["schema"] = 1.5; }, "a fractional schema");
  refused([](auto &j) { j["values"]["p99_us"]["digits"] = 1000000; }, "digits out of range");
  refused([](auto &j) { j["values"]["p99_us"]["value"] = nlohmann::ordered_json::array(); },
          "a list as a value");
  refused([](auto &j) { j["tables"]["curve"]["rows"][0] = 3; }, "a row that is not an object");
  refused([](auto &j) { j["tables"]["curve"]["fields"]["note"]["align"] = "middle"; },
          "an unknown alignment");
  refused([](auto &j) { j["figures"][0]["y"][0] = "nothing"; }, "a figure of an unknown field");
  refused([](auto &j) { j["figures"][0]["series"] = "nothing"; }, "a figure of an unknown table");
}

TEST(Record, SvgDrawsEachFigureWithItsRulesAndMark) {
  const std::string s = report::to_svg(sample());
  EXPECT_EQ(s.rfind("<svg", 0), 0u);
  EXPECT_NE(s.find("a &lt;sample&gt; &amp; its record"), std::string::npos);
  EXPECT_NE(s.find("p99 by SMs"), std::string::npos);
  EXPECT_NE(s.find("the bound"), std::string::npos);
  // The line is drawn in the plot's pixels: x from the left margin (90) to the right edge of the
  // plot (620) over SMs 8..24; the p99 of 90.04 us above 50 above 41.25, all inside the panel.
  const std::size_t at = s.find("<polyline points=\"");
  ASSERT_NE(at, std::string::npos) << s;
  std::istringstream pts(s.substr(at + 18, s.find('"', at + 18) - at - 18));
  std::vector<std::pair<double, double>> xy;
  for (std::string pair; pts >> pair;)
    xy.emplace_back(std::stod(pair.substr(0, pair.find(','))),
                    std::stod(pair.substr(pair.find(',') + 1)));
  ASSERT_EQ(xy.size(), 3u) << s;
  EXPECT_DOUBLE_EQ(xy.front().first, 90);
  EXPECT_DOUBLE_EQ(xy.back().first, 620);
  EXPECT_LT(xy[0].second, xy[1].second);
  EXPECT_LT(xy[1].second, xy[2].second);
  for (const auto &[x, y] : xy)
    EXPECT_GT(y, 60) << "below the heading"; // the heading is 60 px and more
  report::record empty = sample();
  empty.tables[0].rows.clear();
  EXPECT_NE(report::to_svg(empty).find("nothing measured to draw"), std::string::npos);
}

// A raw table (bench's samples) stays out of the text and is named, not listed, in markdown; the
// CSV holds it when it is the first table; the JSON keeps it and says so.
TEST(Record, RawTablesAreKeptInTheFilesNotListed) {
  report::record r = sample();
  report::series raw{"samples", "every sample", {{"at", "at", {"", 0}}, {"us", "us", {"us", 3}}}};
  raw.raw = true;
  raw.rows = {{0.0, 1.25}, {1.0, 2.5}, {2.0, 3.75}};
  r.tables.insert(r.tables.begin(), raw);
  const std::string t = report::to_text(r);
  EXPECT_EQ(t.find("every sample"), std::string::npos) << t;
  EXPECT_EQ(t.find("3.750"), std::string::npos) << t;
  EXPECT_NE(t.find("the curve:"), std::string::npos) << t;
  const std::string m = report::to_markdown(r);
  EXPECT_NE(m.find("## every sample\n\n3 rows (samples), in the JSON file and the CSV: not listed "
                   "here.\n"),
            std::string::npos)
      << m;
  EXPECT_EQ(m.find("3.750"), std::string::npos) << m;
  EXPECT_EQ(report::to_csv(r), "at,us\n0,1.25\n1,2.5\n2,3.75\n");
  const auto j = report::to_json(r);
  EXPECT_EQ(j["tables"]["samples"]["raw"], true);
  EXPECT_FALSE(j["tables"]["curve"].contains("raw")); // written only where it is so
  const auto back = report::from_json(nlohmann::ordered_json::parse(j.dump()));
  EXPECT_TRUE(back.tables[0].raw);
  EXPECT_EQ(report::to_json(back), j);
}

// A record of bars, boxes and grouped lines on log axes: what the SVG draws, and the JSON, which
// names the style, group, labels and log axes only where they are not the defaults.
report::record charts() {
  report::record r;
  r.kind = "charts";
  r.title = "charts";
  report::series rows{"rows",
                      "",
                      {{"name", "name", {}, align::left},
                       {"min", "min", {"us", 1}},
                       {"p50", "p50", {"us", 1}},
                       {"p90", "p90", {"us", 1}},
                       {"p99", "p99", {"us", 1}},
                       {"max", "max", {"us", 1}},
                       {"share", "share", {"", 3}},
                       {"met", "met", {}, align::left}}};
  rows.rows = {{std::string("first <row>"), 10.0, 20.0, 30.0, 40.0, 50.0, 0.5, std::string("yes")},
               {std::string("second"), 100.0, 200.0, 300.0, 4000.0, 5000.0, cell{},
                std::string("NO (isolation)")}};
  report::series points{"points",
                        "",
                        {{"size", "size", {}, align::left},
                         {"bytes", "bytes", {"", 0}},
                         {"mode", "mode", {}, align::left},
                         {"us", "p50", {"us", 1}}}};
  for (const char *mode : {"one", "two", "three"})
    for (double b : {1024.0, 1048576.0})
      points.rows.push_back({std::string(b > 2000 ? "1 MiB" : "1 KiB"), b, std::string(mode),
                             b / 100 * (mode[0] == 'o' ? 1 : 2)});
  r.tables = {rows, points};
  report::figure boxes{"distributions", "rows", "name", {"min", "p50", "p90", "p99", "max"}, "us"};
  boxes.style = report::figure_style::boxes;
  boxes.log_y = true;
  boxes.y_from_zero = false;
  report::figure bars{"shares", "rows", "name", {"share"}, "share", {{"at", "target", 0.8, {}}}};
  bars.style = report::figure_style::bars;
  bars.verdict = "met";
  report::figure lines{"by size", "points", "bytes", {"us"}, "us"};
  lines.group = "mode";
  lines.x_labels = "size";
  lines.log_x = lines.log_y = true;
  lines.y_from_zero = false;
  r.figures = {boxes, bars, lines};
  return r;
}

TEST(Record, SvgDrawsBarsBoxesAndGroupedLinesOnLogAxes) {
  const std::string s = report::to_svg(charts());
  EXPECT_NE(s.find("first &lt;row&gt;"), std::string::npos) << "row labels escaped";
  EXPECT_NE(s.find("p99 40.0"), std::string::npos) << "a box labelled with its p99";
  EXPECT_NE(s.find("p99 4000.0"), std::string::npos);
  EXPECT_NE(s.find(">0.500<"), std::string::npos) << "a bar labelled with its value";
  EXPECT_NE(s.find(">target<"), std::string::npos) << "the rule";
  EXPECT_NE(s.find(">10000<"), std::string::npos) << "decade ticks of the log axis";
  EXPECT_NE(s.find("us (log scale)"), std::string::npos);
  // One line per mode, named in the legend, over the two labelled sizes.
  std::size_t lines = 0;
  for (std::size_t at = s.find("<polyline"); at != std::string::npos;
       at = s.find("<polyline", at + 1))
    ++lines;
  EXPECT_EQ(lines, 3u) << s;
  for (const char *label : {">one<", ">two<", ">three<", ">1 KiB<", ">1 MiB<"})
    EXPECT_NE(s.find(label), std::string::npos) << label;
  // The bars are coloured by their verdict (the second row has no share, so no bar), the boxes
  // have no verdict and keep one colour.
  EXPECT_NE(s.find(R"(height="14" fill="#27ae60")"), std::string::npos) << "a met bar";
  EXPECT_EQ(s.find(R"(height="14" fill="#c0392b")"), std::string::npos) << s;
  EXPECT_NE(s.find(">every target met<"), std::string::npos) << "the verdict's legend";
  report::record missed = charts();
  missed.tables[0].rows[0].back() = std::string("NO (background)");
  EXPECT_NE(report::to_svg(missed).find(R"(height="14" fill="#c0392b")"), std::string::npos);
  if (const char *out = std::getenv("GREENCTX_TEST_CHARTS_SVG")) // for looking at it by hand
    std::ofstream(out) << s;
}

TEST(Record, FigureStylesReadBackAndAreChecked) {
  const auto j = report::to_json(charts());
  EXPECT_EQ(j["figures"][0]["style"], "boxes");
  EXPECT_EQ(j["figures"][0]["log_y"], true);
  EXPECT_FALSE(j["figures"][0].contains("log_x"));
  EXPECT_EQ(j["figures"][1]["style"], "bars");
  EXPECT_FALSE(j["figures"][2].contains("style")); // lines, the default
  EXPECT_EQ(j["figures"][2]["group"], "mode");
  EXPECT_EQ(j["figures"][2]["x_labels"], "size");
  EXPECT_EQ(j["figures"][1]["verdict"], "met");
  EXPECT_FALSE(j["figures"][0].contains("verdict"));
  EXPECT_FALSE(report::to_json(sample())["figures"][0].contains("style"));
  const auto back = report::from_json(nlohmann::ordered_json::parse(j.dump()));
  EXPECT_EQ(report::to_json(back), j);
  EXPECT_EQ(report::to_svg(back), report::to_svg(charts()));
  const auto refused = [&](auto change, const char *why) {
    auto bad = j;
    change(bad);
    EXPECT_THROW(report::from_json(bad), nlohmann::json::exception) << why;
  };
  refused([](auto &x) { x["figures"][1]["style"] = "pie"; }, "an unknown style");
  refused([](auto &x) { x["figures"][1]["y"].push_back("min"); }, "bars of two fields");
  refused([](auto &x) { x["figures"][0]["y"].erase(0); }, "boxes of four fields");
  refused([](auto &x) { x["figures"][2]["group"] = "nothing"; }, "a group of an unknown field");
  refused([](auto &x) { x["figures"][2]["x_labels"] = "nothing"; }, "labels of an unknown field");
  refused([](auto &x) { x["figures"][2]["log_x"] = "yes"; }, "log_x not a boolean");
  refused([](auto &x) { x["figures"][1]["verdict"] = "nothing"; }, "a verdict of an unknown field");
}

// Every record under tests/data/ (one of each command's kinds, from real runs) reads back and
// writes the same JSON again.
TEST(Record, SavedRecordsStillRead) {
  std::size_t read = 0;
  for (const auto &e :
       std::filesystem::recursive_directory_iterator(greenctx_test::source_dir() + "/tests/data")) {
    if (e.path().extension() != ".json")
      continue;
    std::ifstream f(e.path());
    const auto j = nlohmann::ordered_json::parse(f, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("tables") || !j.contains("kind"))
      continue;
    const report::record r = report::from_json(j);
    EXPECT_EQ(report::to_json(r), j) << e.path();
    EXPECT_FALSE(report::to_svg(r).empty());
    ++read;
  }
  EXPECT_GE(read, 10u);
}

// A tune over four sizes, both searches, the chosen split measured again.
measure::tune_result synthetic_tune() {
  measure::tune_result r;
  r.cfg.objective = {measure::tune_goal::p99_at_most_us, 60};
  r.cfg.search = measure::tune_search::both;
  r.critical_name = "kernel";
  r.background_name = "gemm";
  r.background_unit = "TFLOP/s";
  r.background_unit_scale = 1e12;
  r.device_sms = 132;
  r.candidates = {8, 16, 24, 32};
  r.alone.p50 = 28, r.alone.p99 = 30, r.alone.count = 1000;
  const auto point = [](unsigned n, double p99, double tflops) {
    measure::tune_point p;
    p.critical_sms = n;
    p.background_sms = 132 - n;
    p.critical.p99 = p99;
    p.critical.p50 = p99 - 5;
    p.critical.count = 1000;
    p.p99_interval = measure::interval{p99 - 1, p99 + 2};
    p.background_rate = tflops * 1e12;
    p.seconds = 0.2;
    return p;
  };
  r.curve = {point(8, 120, 600), point(16, 70, 590), point(24, 55, 580), point(32, 50, 560)};
  r.pareto = {8, 16, 24, 32};
  measure::tune_answer g;
  g.chosen = 24;
  g.limit_us = 60;
  g.reason = "24 SMs: critical p99 55.0 us <= 60.0 us";
  g.measured = {r.curve[1], r.curve[2], r.curve[3]};
  g.seconds = 0.6;
  measure::tune_answer e = g;
  e.measured = r.curve;
  e.seconds = 0.8;
  r.guided = g;
  r.exhaustive = e;
  r.repeat = point(24, 56, 579);
  r.repeat_meets = true;
  return r;
}

TEST(TuneRecord, HoldsTheCurveTheAnswerAndTheRepeat) {
  const measure::tune_result r = synthetic_tune();
  const report::record rec = tune_record(r, {{"gpu", "GPU", "Synthetic", {}}}, "p99 <= 60 us");
  greenctx_test::expect_golden_record(rec, "tune");
  EXPECT_EQ(rec.kind, "tune");
  ASSERT_NE(rec.find("split"), nullptr);
  EXPECT_EQ(std::get<std::string>(rec.find("split")->value), "24,rest");
  EXPECT_DOUBLE_EQ(std::get<double>(rec.find("time_share")->value), 0.75);
  EXPECT_EQ(std::get<std::string>(rec.find("repeat_meets")->value), "yes");
  const auto *curve = rec.table("curve");
  ASSERT_NE(curve, nullptr);
  ASSERT_EQ(curve->rows.size(), 4u);
  // Rates in the unit (TFLOP/s), the chosen row marked, the 95% interval of its p99.
  EXPECT_EQ(std::get<double>(curve->rows[2][curve->index("background_rate")]), 580);
  EXPECT_EQ(std::get<std::string>(curve->rows[2][curve->index("chosen")]), "<- chosen");
  EXPECT_EQ(std::get<double>(curve->rows[2][curve->index("p99_high_us")]), 57);
  EXPECT_EQ(std::get<std::string>(curve->rows[0][curve->index("meets")]), "no");
  EXPECT_EQ(rec.table("guided")->rows.size(), 3u);
  const std::string t = report::to_text(rec);
  EXPECT_NE(t.find("\nuse: 24,rest (greenctx split/PartitionSet, bench --critical-sms 24)\n"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("guided against exhaustive: 24 SMs against 24, background rate 1.000 of the "
                   "exhaustive choice's, in 0.75 of its time"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("measured again: 24 SMs, p99 56.0 us (within the bound 60.0 us)"),
            std::string::npos)
      << t;
  EXPECT_EQ(t.find("the guided search's measurements"), std::string::npos) << t; // detail
}

TEST(TuneRecord, NoSplitMeetingTheObjectiveLeavesNothingToUse) {
  measure::tune_result r = synthetic_tune();
  r.guided->chosen.reset();
  r.exhaustive->chosen.reset();
  r.exhaustive->closest = 32;
  r.repeat.reset();
  const report::record rec = tune_record(r, {}, "p99 <= 10 us");
  EXPECT_TRUE(std::holds_alternative<std::monostate>(rec.find("split")->value));
  EXPECT_EQ(std::get<double>(rec.find("closest_sms")->value), 32);
  EXPECT_EQ(rec.notes.back(), "no split to use: none met the objective");
  EXPECT_EQ(rec.find("repeat_p99_us"), nullptr);
}

// A tune of the H200 (tests/data/tune.json: both searches, 16 sizes): the answer and the figures
// read back.
TEST(TuneRecord, ARealRecordReadsBack) {
  const report::record rec = report::from_json(greenctx_test::saved_record("tune.json"));
  EXPECT_EQ(rec.table("curve")->rows.size(), 16u);
  EXPECT_EQ(std::get<std::string>(rec.find("gpu")->value), "NVIDIA H200");
  EXPECT_NE(report::to_text(rec).find("use: 40,rest"), std::string::npos);
  EXPECT_EQ(rec.figures.size(), 2u);
}

} // namespace
} // namespace greenctx::cli
