// SPDX-License-Identifier: Apache-2.0
// greenctx scale --metric: the option and its refusals, figures taken from a run's stdout and from
// the preload library's GPU phase, speed-ups of times and of rates, the start-up warning, the
// SM count the program was told, the record's JSON (old files too), and the SVG's long title.
#include "commands/scale/metric.hpp"
#include "commands/scale/scale_record.hpp"
#include "scale_outputs.hpp"
#include "text_checks.hpp"

#include <greenctx/plan/error.hpp>

#include <gtest/gtest.h>

#include <functional>

namespace greenctx::cli::scale {
namespace {

using greenctx_test::contains;
using greenctx_test::rejection;

std::string refusal(std::string_view spec, std::optional<std::string> unit = std::nullopt,
                    std::optional<better> direction = std::nullopt) {
  return rejection([&] { parse_metric(spec, unit, direction); });
}

metric parse(std::string_view spec, std::optional<std::string> unit = std::nullopt,
             std::optional<better> direction = std::nullopt) {
  return parse_metric(spec, unit, direction);
}

// ---- --metric ----------------------------------------------------------------------------------

TEST(ScaleMetric, ParsesEveryKind) {
  metric m = parse("wall");
  EXPECT_EQ(m.kind, metric_kind::wall);
  EXPECT_EQ(m.unit, "s");
  EXPECT_EQ(m.direction, better::lower);
  EXPECT_FALSE(m.reads_stdout());
  EXPECT_EQ(parse("gpu-time").kind, metric_kind::gpu_time);
  EXPECT_TRUE(parse("gpu-time").reads_report());

  m = parse("regex:took ([0-9.]+) ms", "ms");
  EXPECT_EQ(m.kind, metric_kind::regex);
  EXPECT_EQ(m.source, "took ([0-9.]+) ms");
  EXPECT_TRUE(m.reads_stdout());
  EXPECT_TRUE(m.is_time());
  EXPECT_DOUBLE_EQ(m.seconds_per_unit(), 1e-3);
  EXPECT_EQ(m.direction, better::lower);
  EXPECT_EQ(m.spec(), "regex:took ([0-9.]+) ms");
  EXPECT_EQ(m.description(), "printed number 'took ([0-9.]+) ms'");
  EXPECT_EQ(parse("regex:(?:took|ran) (\\d+) s").source, "(?:took|ran) (\\d+) s")
      << "a non-capturing group does not count";

  m = parse("json:timing.seconds");
  EXPECT_EQ(m.kind, metric_kind::json);
  EXPECT_EQ(m.source, "timing.seconds");
  EXPECT_EQ(m.unit, "s") << "a printed number is in seconds unless told";

  m = parse("json:tokens_per_s", "tokens/s");
  EXPECT_EQ(m.direction, better::higher) << "a rate per second is better higher";
  EXPECT_FALSE(m.is_time());
  EXPECT_EQ(parse("json:score", "points", better::higher).direction, better::higher);
  EXPECT_EQ(parse("json:loss", "nats", better::lower).direction, better::lower);
  EXPECT_EQ(parse("json:t", "s", better::higher).direction, better::higher) << "as told";
}

TEST(ScaleMetric, RefusesWhatCannotWorkAndSaysWhatWould) {
  std::string e = refusal("bogus");
  EXPECT_TRUE(contains(e, "--metric 'bogus' is not a figure greenctx scale knows")) << e;
  for (const char *kind : {"wall", "gpu-time", "regex:", "json:"})
    EXPECT_TRUE(contains(e, kind)) << e;
  EXPECT_TRUE(contains(refusal("gpu"), "is not a figure"));
  EXPECT_TRUE(contains(refusal(""), "is not a figure"));
  EXPECT_TRUE(contains(refusal("Wall"), "is not a figure"));

  EXPECT_TRUE(contains(refusal("regex:"), "needs an expression"));
  e = refusal("regex:took ([0-9.]+ s");
  EXPECT_TRUE(contains(e, "does not compile")) << e;
  EXPECT_TRUE(contains(e, "ECMAScript")) << e;
  e = refusal("regex:took [0-9.]+ s");
  EXPECT_TRUE(contains(e, "has 0 capture groups: give exactly one")) << e;
  e = refusal("regex:(took) ([0-9.]+) s");
  EXPECT_TRUE(contains(e, "has 2 capture groups")) << e;
  EXPECT_TRUE(contains(e, "(?:...)")) << e;

  EXPECT_TRUE(contains(refusal("json:"), "needs a key"));
  for (const char *bad : {"json:a..b", "json:.a", "json:a."})
    EXPECT_TRUE(contains(refusal(bad), "has an empty part")) << bad;

  e = refusal("wall", "ms");
  EXPECT_TRUE(contains(e, "--metric-unit is for a printed number")) << e;
  EXPECT_TRUE(contains(refusal("gpu-time", "s"), "the GPU phase is in seconds"));
  e = refusal("gpu-time", std::nullopt, better::higher);
  EXPECT_TRUE(contains(e, "--higher-is-better and --lower-is-better are for a printed number"))
      << e;
  e = refusal("json:score", "points");
  EXPECT_TRUE(contains(e, "neither a time")) << e;
  EXPECT_TRUE(contains(e, "--higher-is-better or --lower-is-better")) << e;
  EXPECT_TRUE(contains(refusal("json:x", ""), "--metric-unit ''"));
}

// ---- figures from stdout -----------------------------------------------------------------------

TEST(ScaleMetric, RegexTakesTheLastMatch) {
  const metric m = parse("regex:took ([0-9.eE+-]+) s");
  EXPECT_EQ(figure_from_stdout(m, "took 1.5 s\nwarm\ntook 2.5 s\r\nbye\n").value, 2.5);
  EXPECT_EQ(figure_from_stdout(m, "took 1 s, then took 3 s").value, 3) << "last on its line";
  EXPECT_EQ(figure_from_stdout(m, "took 2e-3 s").value, 2e-3);
  EXPECT_EQ(figure_from_stdout(m, "took +4 s").value, 4);
  EXPECT_EQ(figure_from_stdout(parse("regex:^t=(\\S+)$"), "x t=1\nt=7\n").value, 7)
      << "^ and $ are a line's ends";
}

TEST(ScaleMetric, RegexWithoutAUsableMatchSaysWhy) {
  const metric m = parse("regex:took ([0-9.]+) s");
  extracted x = figure_from_stdout(m, "starting\ndone in 3 seconds\n");
  EXPECT_FALSE(x.value);
  EXPECT_TRUE(contains(x.why_not, "printed nothing matching 'took ([0-9.]+) s'")) << x.why_not;
  EXPECT_TRUE(contains(x.why_not, "2 lines on stdout; the last: 'done in 3 seconds'")) << x.why_not;
  x = figure_from_stdout(m, "");
  EXPECT_TRUE(contains(x.why_not, "its stdout was empty")) << x.why_not;
  x = figure_from_stdout(m, "took . s\n");
  EXPECT_FALSE(x.value);
  EXPECT_TRUE(contains(x.why_not, "capture '.' is not a finite number")) << x.why_not;
  x = figure_from_stdout(parse("regex:took (\\d+)? s"), "took  s\n");
  EXPECT_TRUE(contains(x.why_not, "capture group matched nothing")) << x.why_not;
}

TEST(ScaleMetric, JsonTakesTheLastLineWithTheKey) {
  const metric m = parse("json:timing.seconds");
  const std::string out = "loading\n"
                          "{\"timing\": {\"seconds\": 1.5}}\n"
                          "  {\"timing\": {\"seconds\": 2}, \"n\": 3}  \n"
                          "{\"other\": 1}\n"
                          "[1, 2]\n"
                          "{not json\n";
  EXPECT_EQ(figure_from_stdout(m, out).value, 2.0);
  EXPECT_EQ(figure_from_stdout(parse("json:n", "items", better::higher), out).value, 3.0);

  extracted x = figure_from_stdout(parse("json:timing.ms"), out);
  EXPECT_FALSE(x.value);
  EXPECT_TRUE(contains(x.why_not, "printed no JSON object with the key 'timing.ms'")) << x.why_not;
  EXPECT_TRUE(contains(x.why_not, "3 lines held a JSON object")) << x.why_not;
  x = figure_from_stdout(m, "{\"timing\": {\"seconds\": \"fast\"}}\n");
  EXPECT_TRUE(contains(x.why_not, "must be a number")) << x.why_not;
  EXPECT_TRUE(contains(x.why_not, "string")) << x.why_not;
  x = figure_from_stdout(m, "{\"timing\": 5}\n");
  EXPECT_TRUE(contains(x.why_not, "no JSON object with the key")) << x.why_not;
}

// ---- the GPU phase -----------------------------------------------------------------------------

TEST(ScaleMetric, GpuPhaseFromTheReport) {
  EXPECT_DOUBLE_EQ(*gpu_phase_figure(3, 1'000'000'000, 3'500'000'000).value, 2.5);
  extracted x = gpu_phase_figure(0, 0, 0);
  EXPECT_FALSE(x.value);
  EXPECT_TRUE(contains(x.why_not, "left no report of the preload library")) << x.why_not;
  x = gpu_phase_figure(2, 0, 0);
  EXPECT_TRUE(contains(x.why_not, "launched no kernel")) << x.why_not;
  EXPECT_TRUE(contains(x.why_not, "2 processes reported")) << x.why_not;
  x = gpu_phase_figure(1, 100, 0);
  EXPECT_TRUE(contains(x.why_not, "never waited for them")) << x.why_not;
  x = gpu_phase_figure(1, 2'000'000'000, 1'000'000'000);
  EXPECT_TRUE(contains(x.why_not, "1.000000 s before its first kernel launch")) << x.why_not;
}

// ---- records -----------------------------------------------------------------------------------

point make_point(unsigned sms, std::vector<double> figures, bool baseline = false) {
  point p{sms, baseline, {}};
  for (std::size_t i = 0; i < figures.size(); ++i) {
    run_record r;
    r.repeat = static_cast<unsigned>(i);
    r.wall_s = 10 + figures[i];
    r.figure = figures[i];
    r.cuda_used = !baseline;
    if (!baseline)
      r.confined_devices = {0}, r.green_contexts = 1;
    p.runs.push_back(r);
  }
  return p;
}

results make_results(const metric &m, std::vector<point> points) {
  results r;
  r.program = {"./app", "--n", "5"};
  r.measure = m;
  r.device_sms = 132;
  r.repeat = 3;
  r.warmup_sms = 132;
  r.points = std::move(points);
  return r;
}

const nlohmann::json env{{"gpu", "Test GPU"}, {"driver_version", "13.0"}, {"date", "today"}};

TEST(ScaleMetric, SpeedUpsOfTimesAndOfRates) {
  EXPECT_DOUBLE_EQ(speedup(better::lower, 4, 1), 4);
  EXPECT_DOUBLE_EQ(speedup(better::higher, 100, 400), 4);

  const results rates =
      make_results(parse("json:tps", "tokens/s"),
                   {make_point(16, {100, 90, 110}), make_point(64, {400, 380, 420}),
                    make_point(132, {800, 800, 800}, true)});
  const auto s = summarize(rates);
  EXPECT_DOUBLE_EQ(*s[1].vs_smallest, 4) << "400 tokens/s is 4x better than 100";
  EXPECT_DOUBLE_EQ(*s[0].vs_baseline, 0.125);
  EXPECT_DOUBLE_EQ(*s[2].vs_smallest, 8);
  EXPECT_DOUBLE_EQ(s[1].wall.p50, 410) << "the wall times are summarized too";

  const results times = make_results(
      parse("gpu-time"), {make_point(16, {4}), make_point(64, {1}), make_point(132, {0.5}, true)});
  EXPECT_DOUBLE_EQ(*summarize(times)[1].vs_smallest, 4);
  EXPECT_DOUBLE_EQ(*summarize(times)[0].vs_baseline, 0.125);

  const std::string t = text_table(rates, env);
  EXPECT_TRUE(contains(t, "median tokens/s")) << t;
  EXPECT_TRUE(contains(t, "  4.00  ")) << t;
  EXPECT_TRUE(contains(t, "speed-up: median here / median there (higher is better)")) << t;
}

TEST(ScaleMetric, ARunWithoutAFigureIsNamed) {
  results r = make_results(parse("gpu-time"), {make_point(16, {4, 5}), make_point(132, {1}, true)});
  r.points[0].runs[1].figure.reset();
  r.points[0].runs[1].no_figure = "submitted no GPU work";
  const auto s = summarize(r);
  EXPECT_EQ(s[0].figure.count, 1u);
  EXPECT_EQ(s[0].wall.count, 2u);
  EXPECT_EQ(s[0].status, "run 2: no figure");
  const auto j = record_json(r, env);
  EXPECT_TRUE(j["tables"]["runs"]["rows"][1]["figure"].is_null());
  EXPECT_EQ(j["tables"]["runs"]["rows"][1]["no_figure"], "submitted no GPU work");
}

// The rule: wall metric, fewest SMs' median at most 1.3x the unconfined one, 4x the SMs or more.
TEST(ScaleMetric, WarnsWhenStartUpCouldDominate) {
  const auto warning = [](const metric &m, unsigned fewest, double at_fewest) {
    results r = make_results(
        m, {make_point(fewest, {at_fewest}), make_point(132, {1.0}), make_point(132, {1.0}, true)});
    for (auto &p : r.points)
      for (auto &run : p.runs)
        run.wall_s = *run.figure;
    return startup_warning(r, summarize(r));
  };
  const metric wall;
  const std::string w = warning(wall, 16, 1.16);
  EXPECT_TRUE(contains(w, "16 SMs: 1.16x the unconfined time with 8.2x fewer SMs")) << w;
  EXPECT_TRUE(contains(w, "--metric gpu-time")) << w;
  EXPECT_TRUE(contains(w, "--metric 'regex:")) << w;
  EXPECT_FALSE(warning(wall, 16, 1.3).empty()) << "at the limit";
  EXPECT_FALSE(warning(wall, 16, 0.9).empty()) << "faster on fewer SMs: flat too";
  EXPECT_TRUE(warning(wall, 16, 1.31).empty());
  EXPECT_TRUE(warning(wall, 16, 6.5).empty()) << "a curve that scales";
  EXPECT_FALSE(warning(wall, 32, 1.0).empty()) << "132 SMs are 4.1x 32";
  EXPECT_TRUE(warning(wall, 40, 1.0).empty()) << "132 SMs are only 3.3x 40";
  EXPECT_TRUE(warning(parse("gpu-time"), 16, 1.0).empty()) << "only for the wall time";

  results r = make_results(wall, {make_point(16, {1.1}), make_point(132, {1.0}, true)});
  for (auto &p : r.points)
    p.runs[0].wall_s = *p.runs[0].figure;
  EXPECT_TRUE(contains(text_table(r, env), "\nwarning: the wall time hardly depends on the SMs"));
  EXPECT_TRUE(contains(markdown(r, env), "warning: the wall time hardly depends"));
  EXPECT_TRUE(contains(to_svg(r, env), "warning: the wall time hardly"));
}

TEST(ScaleMetric, ReportsSayWhichFigureTheyShow) {
  const results r = make_results(parse("gpu-time"), {make_point(16, {0.8}), make_point(64, {0.2}),
                                                     make_point(132, {0.1}, true)});
  const std::string t = text_table(r, env);
  EXPECT_TRUE(contains(t,
                       "figure: GPU phase (first kernel launch to last synchronization), ms, lower "
                       "is better"))
      << t;
  EXPECT_TRUE(contains(t, "median ms")) << t;
  EXPECT_TRUE(contains(t, "800.00")) << t;
  EXPECT_TRUE(contains(t, "wall s")) << "the wall time beside another figure\n" << t;
  EXPECT_TRUE(contains(t, "10.800")) << t;
  const std::string md = markdown(r, env);
  EXPECT_TRUE(contains(md, "figure: GPU phase (first kernel launch to last synchronization)"))
      << md;
  EXPECT_TRUE(contains(md, "| wall s |")) << md;
  const std::string csv = to_csv(r);
  EXPECT_TRUE(
      csv.starts_with("sms,median,min,max,rsd,wall,vs_smallest,ideal,vs_unconfined,runs,status\n"))
      << csv;
  EXPECT_TRUE(contains(csv, "\n16,800,800,800,0,")) << "exact, in the table's unit (ms)\n" << csv;
  const std::string svg = to_svg(r, env);
  EXPECT_TRUE(contains(svg, "Median GPU phase (first kernel launch to last synchronization) (ms)"))
      << svg;
  EXPECT_TRUE(contains(svg, "GPU phase (first kernel launch to last synchronization), ms")) << svg;

  const results printed = make_results(parse("regex:took ([0-9.]+) ms", "ms"),
                                       {make_point(16, {80}), make_point(132, {10}, true)});
  EXPECT_TRUE(contains(text_table(printed, env), "figure: printed number 'took ([0-9.]+) ms', ms"));
  EXPECT_TRUE(contains(text_table(printed, env), "80.00")) << "80 ms shown in ms";
  EXPECT_FALSE(contains(text_table(make_results(metric{}, {make_point(16, {1})}), env), "wall s"))
      << "no wall column when the figure is the wall time";
}

TEST(ScaleMetric, SaysWhichSmCountTheProgramWasTold) {
  results r = make_results(
      metric{}, {make_point(16, {4}), make_point(64, {1}), make_point(132, {0.5}, true)});
  const std::string partition =
      "the program was told 16 to 64 SMs (the partition's; unconfined, the device's 132)";
  EXPECT_EQ(sm_count_note(r), partition);
  EXPECT_TRUE(contains(text_table(r, env), partition));
  EXPECT_TRUE(contains(markdown(r, env), partition));
  EXPECT_EQ(record_json(r, env)["config"]["sm_count_told"]["value"], "partition");
  r.real_sm_count = true;
  EXPECT_EQ(sm_count_note(r), "the program was told the device's 132 SMs (--real-sm-count)");
  EXPECT_EQ(record_json(r, env)["config"]["sm_count_told"]["value"], "device");
}

// ---- the JSON file -----------------------------------------------------------------------------

TEST(ScaleMetric, JsonKeepsTheMetricAndEachFigure) {
  const results r = make_results(parse("regex:([0-9.]+) tokens/s", "tokens/s"),
                                 {make_point(16, {100, 110, 90}), make_point(132, {800}, true)});
  const auto j = record_json(r, env);
  EXPECT_EQ(j["config"]["metric_spec"]["value"], "regex:([0-9.]+) tokens/s");
  EXPECT_EQ(j["config"]["metric_unit"]["value"], "tokens/s");
  EXPECT_EQ(j["config"]["better"]["value"], "higher");
  EXPECT_EQ(j["tables"]["runs"]["rows"][0]["figure"], 100.0);
  EXPECT_EQ(j["tables"]["runs"]["rows"][0]["wall_s"], 110.0);
  EXPECT_EQ(j["tables"]["runs"]["rows"][2]["figure"], 90.0);
  const report::record back = report::from_json(nlohmann::ordered_json::parse(j.dump()));
  EXPECT_EQ(report::to_text(back), text_table(r, env));
  EXPECT_EQ(report::to_csv(back), to_csv(r));
}

// ---- the SVG's title ---------------------------------------------------------------------------

// The content of the first <text> element drawn at `size` px.
std::string text_at_size(const std::string &svg, const std::string &size) {
  const std::size_t at = svg.find("font-size=\"" + size + "\"");
  if (at == std::string::npos)
    return {};
  const std::size_t start = svg.find('>', at) + 1;
  return svg.substr(start, svg.find("</text>", start) - start);
}

std::size_t characters(const std::string &s) {
  std::size_t n = 0;
  for (unsigned char c : s)
    n += (c & 0xC0) != 0x80;
  return n;
}

// The report model's SVG wraps a long title and heading into lines that fit its width (it used to
// cut them with an ellipsis): every line of the 17 px title and the 13 px heading fits 780 px.
TEST(ScaleMetric, SvgTitleFitsItsWidthForALongCommand) {
  results r = make_results(parse("regex:" + std::string(150, 'x') + "([0-9.]+)"),
                           {make_point(16, {4}), make_point(132, {1}, true)});
  r.program = {"python3", "-c", std::string(300, 'a')};
  const std::string svg = to_svg(r, env);
  const std::string title = text_at_size(svg, "17");
  ASSERT_FALSE(title.empty()) << svg;
  EXPECT_EQ(title, "greenctx scale on GPU 0: python3 -c") << "the rest on the next lines";
  // 820 px wide, text from x = 20: at most 780 px of 17 px bold, about 0.6 em a character.
  EXPECT_LE(characters(title) * 17 * 0.6, 780.0) << title;
  for (std::size_t at = svg.find("<text "); at != std::string::npos;
       at = svg.find("<text ", at + 1)) { // every line drawn, at its size
    const std::size_t start = svg.find('>', at) + 1;
    const std::string tag = svg.substr(at, start - at);
    const std::string line = svg.substr(start, svg.find("</text>", start) - start);
    const std::size_t size_at = tag.find("font-size=\"");
    const double px = size_at == std::string::npos ? 13 : std::stod(tag.substr(size_at + 11));
    const double em = contains(tag, "bold") ? 0.6 : 0.55;
    EXPECT_LE(characters(line) * px * em, 780.0) << line;
  }
  EXPECT_EQ(svg.substr(svg.size() - 7), "</svg>\n");
  r.program = {"./app"};
  EXPECT_TRUE(contains(to_svg(r, env), ">greenctx scale on GPU 0: ./app</text>"))
      << "short: kept whole";
}

} // namespace
} // namespace greenctx::cli::scale
