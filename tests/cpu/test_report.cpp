// SPDX-License-Identifier: Apache-2.0
// The CLI's shared report writers (tools/greenctx/report/): tables, CSV, SVG pieces and the
// output options, on their own (pure code).
#include "report/json.hpp"
#include "report/output.hpp"
#include "report/svg.hpp"
#include "report/table.hpp"
#include "text_checks.hpp"

#include <greenctx/plan/error.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>

namespace greenctx::cli {
namespace {

using greenctx_test::contains;
using greenctx_test::rejection;

TEST(ReportTable, TextColumnsArePaddedAndTheLastMayStayUnpadded) {
  const std::vector<column> columns = {
      {"#", align::right, 3}, {"name", align::left, 6}, {"note", align::left, 0}};
  EXPECT_EQ(text_table(columns, {{"1", "ab", "x"}, {"12", "longer name", ""}}),
            "  #  name    note\n"
            "  1  ab      x\n"
            " 12  longer name\n");
  EXPECT_EQ(text_row(columns, {"1", "a", "b"}, " "), "  1 a      b\n");
}

TEST(ReportTable, MarkdownAlignsByColumn) {
  EXPECT_EQ(markdown_table({{"name", align::left}, {"value"}}, {{"a", "1"}, {"b", "2"}}),
            "| name | value |\n|---|---:|\n| a | 1 |\n| b | 2 |\n");
}

TEST(ReportTable, CsvQuotesOnlyWhereNeeded) {
  EXPECT_EQ(csv_line({"a", "1.5", ""}), "a,1.5,\n");
  EXPECT_EQ(csv_line({"a,b", "say \"hi\"", "two\nlines"}),
            "\"a,b\",\"say \"\"hi\"\"\",\"two\nlines\"\n");
}

TEST(ReportSvg, EscapesTextAndWritesShortNumbers) {
  EXPECT_EQ(xml_escape("a <b> & \"c\""), "a &lt;b&gt; &amp; &quot;c&quot;");
  EXPECT_EQ(svg::number(90), "90");
  EXPECT_EQ(svg::number(12.345), "12.3");
  EXPECT_EQ(svg::number(-0.01), "0");
  EXPECT_DOUBLE_EQ(nice_step(132, 8), 20);
  EXPECT_DOUBLE_EQ(nice_step(0, 5), 1);
  svg::document doc(100, 50);
  doc.text(1, 2, "x < y", {"#555", "end"});
  doc.series({{1, 2}, {3, 4}}, "#123456");
  const std::string s = doc.finish();
  EXPECT_EQ(s.rfind("<svg", 0), 0u);
  EXPECT_TRUE(
      contains(s, "<text x=\"1\" y=\"2\" text-anchor=\"end\" fill=\"#555\">x &lt; y</text>"));
  EXPECT_TRUE(contains(s, "points=\"1,2 3,4\""));
  EXPECT_EQ(s.substr(s.size() - 7), "</svg>\n");
}

TEST(ReportOutput, MissingFoldersAreFoundBeforeAnyWork) {
  output_options opt;
  opt.csv = "/nonexistent-greenctx-folder/x.csv";
  const std::string e = rejection([&] { check_output_paths("greenctx scale", opt); });
  EXPECT_TRUE(contains(e, "cannot write --csv '/nonexistent-greenctx-folder/x.csv'")) << e;
  opt.csv = std::filesystem::temp_directory_path().string();
  EXPECT_TRUE(
      contains(rejection([&] { check_output_paths("greenctx scale", opt); }), "it is a folder"));
}

TEST(ReportOutput, SavedFilesAreReadOrNamedAsWrong) {
  EXPECT_TRUE(
      contains(rejection([&] { read_record("greenctx bench", "bench", "/nonexistent.json"); }),
               "cannot read '/nonexistent.json'"));
  const std::string path =
      (std::filesystem::temp_directory_path() / "greenctx_test_read_record.json").string();
  std::ofstream(path) << R"({"answer": 7})"; // not a record
  EXPECT_TRUE(contains(rejection([&] { read_record("greenctx bench", "bench", path); }),
                       "is not a greenctx bench JSON file"));
  std::ofstream(path) << "not JSON";
  EXPECT_TRUE(contains(rejection([&] { read_record("greenctx bench", "bench", path); }),
                       "is not a greenctx bench JSON file"));
  report::record rec;
  rec.kind = "bench";
  rec.title = "a record";
  std::ofstream(path) << report::to_json(rec).dump();
  EXPECT_EQ(read_record("greenctx bench", "bench", path).title, "a record");
  std::remove(path.c_str());
}

TEST(ReportOutput, DocumentsSayWhatTheyHoldAndReadersRefuseAnotherKind) {
  const std::string path =
      (std::filesystem::temp_directory_path() / "greenctx_test_report_kind.json").string();
  report::record rec;
  rec.kind = "bench-comm";
  std::ofstream(path) << report::to_json(rec).dump();
  EXPECT_EQ(read_record("greenctx bench", "bench-comm", path).kind, "bench-comm");
  const std::string e = rejection([&] { read_record("greenctx scale", "scale", path); });
  EXPECT_TRUE(contains(e, "holds a greenctx.bench-comm result, not a greenctx.scale one")) << e;
  std::ofstream(path) << R"({"kind": 3, "answer": 7})";
  EXPECT_TRUE(contains(rejection([&] { read_record("greenctx scale", "scale", path); }),
                       "holds a 3 result"));
  std::remove(path.c_str());
}

// "-" is stdout, not a path: a folder named "-" in the working directory would refuse a path.
TEST(ReportOutput, JsonToStdoutIsNotCheckedAsAPath) {
  const std::filesystem::path before = std::filesystem::current_path();
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / "greenctx_test_json_stdout";
  std::filesystem::create_directories(dir / "-");
  std::filesystem::current_path(dir);
  output_options opt;
  opt.json = "-";
  EXPECT_NO_THROW(check_output_paths("greenctx scale", opt));
  EXPECT_NO_THROW(check_json_path("greenctx info", "-"));
  EXPECT_TRUE(json_replaces_text("-"));
  EXPECT_FALSE(json_replaces_text("out.json"));
  opt.json.clear();
  opt.csv = "-"; // the same name as a file path is the folder, refused
  EXPECT_TRUE(
      contains(rejection([&] { check_output_paths("greenctx scale", opt); }), "it is a folder"));
  std::filesystem::current_path(before);
  std::filesystem::remove_all(dir);
}

// --json FILE is the same on every command: FILE, or stdout with -; a bare --json is refused.
TEST(ReportOutput, JsonOptionTakesAFileOrMeansStdout) {
  const auto parse = [](std::vector<std::string> args) {
    CLI::App app;
    std::string path;
    add_json_option(app, path, "the result");
    std::string positional;
    app.add_option("REQUEST", positional);
    std::reverse(args.begin(), args.end());
    app.parse(args);
    return std::pair{path, positional};
  };
  EXPECT_EQ(parse({}).first, "");
  EXPECT_THROW(parse({"--json"}), CLI::ParseError);
  EXPECT_EQ(parse({"16", "--json", "-"}), (std::pair<std::string, std::string>{"-", "16"}));
  EXPECT_EQ(parse({"--json", "out.json"}).first, "out.json");
  EXPECT_EQ(parse({"--json=out.json", "16"}),
            (std::pair<std::string, std::string>{"out.json", "16"}));
}

// What a child answers as a count is the number written, or the answer is refused: nlohmann's
// get<T>() would truncate 8.5, wrap -1 and, for 1.44e75 (a fuzz finding), is undefined behaviour.
TEST(ReportJson, WholeNumbersAreReadExactlyOrRefused) {
  using nlohmann::json;
  EXPECT_EQ(whole<unsigned>(json(7)), 7u);
  EXPECT_EQ(whole<int>(json(-3)), -3);
  EXPECT_EQ(whole<std::uint64_t>(json(UINT64_MAX)), UINT64_MAX);
  EXPECT_THROW(whole<unsigned>(json(1.44e75)), json::type_error);
  EXPECT_THROW(whole<unsigned>(json(8.5)), json::type_error);
  EXPECT_THROW(whole<unsigned>(json(8.0)), json::type_error);
  EXPECT_THROW(whole<unsigned>(json("8")), json::type_error);
  EXPECT_THROW(whole<unsigned>(json(-1)), json::out_of_range);
  EXPECT_THROW(whole<unsigned>(json(std::uint64_t{1} << 32)), json::out_of_range);
  EXPECT_THROW(whole<int>(json(UINT64_MAX)), json::out_of_range);
  EXPECT_EQ(read_as<std::vector<unsigned>>(json{8, 16}), (std::vector<unsigned>{8, 16}));
  EXPECT_THROW(read_as<std::vector<unsigned>>(json{8, -16}), json::out_of_range);
  EXPECT_THROW(read_as<std::vector<unsigned>>(json(8)), json::type_error);
  EXPECT_EQ(read_as<std::vector<double>>(json{0.5}), std::vector<double>{0.5});
}

} // namespace
} // namespace greenctx::cli
