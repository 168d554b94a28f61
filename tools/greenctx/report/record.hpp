// SPDX-License-Identifier: Apache-2.0
// The report model: every result a command prints is one record (its kind, schema, environment,
// configuration, named values and tables of series, each number with its unit, and the figures
// to draw), rendered by one printer per format (text, markdown, CSV, JSON, SVG) and read back from
// its JSON by one reader (--from). A command builds the record; it writes no printer of its own.
#pragma once

#include "report/table.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace greenctx::cli::report {

/// One value: nothing (not measured, not applicable), a number or text.
using cell = std::variant<std::monostate, double, std::string>;

/// How a number is shown: its unit and the decimals of the text and markdown renderings (CSV and
/// JSON keep it exact). A number whose `digits` is 0 and that is whole is written as an integer.
struct number_format {
  std::string unit; ///< "us", "TFLOP/s"; empty: a count or a ratio
  int digits = 1;
};

/// A named value of the record (the configuration, the environment, a result).
struct quantity {
  std::string key;   ///< the JSON name: "alone_p99_us"
  std::string label; ///< for people: "critical p99 alone"
  cell value;
  number_format format;
  bool detail = false; ///< left out of the terminal's text (JSON and markdown keep it)
};

/// A column of a table.
struct field {
  std::string key;    ///< the JSON and CSV name: "p99_us"
  std::string header; ///< the text and markdown heading: "p99"
  number_format format;
  align side = align::right;
  bool detail = false; ///< left out of the terminal's text (JSON, CSV and markdown keep it)
};

/// A table of rows, one cell per field.
struct series {
  std::string key;   ///< the JSON name: "curve"
  std::string title; ///< for people
  std::vector<field> fields;
  std::vector<std::vector<cell>> rows;
  bool detail = false; ///< left out of the terminal's text (JSON and markdown keep it)
  /// Raw samples (bench keeps every one: thousands of rows): kept in the JSON, and in the CSV when
  /// it is the first table; the text leaves it out and markdown names it with its row count
  /// instead of listing every row.
  bool raw = false;
  /// The index of `key` in fields; throws std::out_of_range naming it when there is none.
  std::size_t index(const std::string &key) const;
};

/// How a figure draws its table.
enum class figure_style {
  lines, ///< each y against x (a number): one line per y field, and per group
  bars,  ///< one horizontal bar per row, labelled by x: y is one field, the bar's length
  /// One box per row, labelled by x, for a distribution: y is five fields, a thin line from the
  /// first to the fifth (min..max), a box from the second to the fourth (p50..p99) and a mark at
  /// the third (p90).
  boxes,
};

/// A chart of one series. `lines`: `y` against `x`, with horizontal rules and a marked x. `bars`
/// and `boxes`: a row of the chart per row of the table, the values along a horizontal axis, the
/// rules as vertical lines at their values.
struct figure {
  std::string title;
  std::string series; ///< its key
  std::string x;      ///< a field's key (bars and boxes: the label of each row)
  std::vector<std::string> y;
  std::string y_label;         ///< what the values are (lines: the y axis; bars, boxes: the x axis)
  std::vector<quantity> rules; ///< dashed lines at each value, labelled
  std::optional<double> mark = {}; ///< lines: a vertical line at this x (the choice)
  bool y_from_zero = true;         ///< the value axis starts at 0 (not on a log scale)
  figure_style style = figure_style::lines;
  /// lines: a field whose values split the rows into one line each (comm's modes); empty: none.
  std::string group = {};
  /// lines: a field naming each row's x ("1 MiB"): ticks at those x only; empty: numbered ticks.
  std::string x_labels = {};
  bool log_x = false; ///< lines: x on a log scale (rows with x <= 0 are not drawn)
  bool log_y = false; ///< the values on a log scale (those <= 0 are not drawn)
  /// bars and boxes: a text field that colours each row, green where it starts with "yes" (a
  /// target met), red where it starts with "NO" (missed); empty: one colour for every row.
  std::string verdict = {};
};

/// A command's result.
struct record {
  std::string kind; ///< "tune": the JSON's "kind" is "greenctx.tune"
  int schema = 2;   ///< of this kind's layout (raised when a field changes meaning or goes away)
  std::string title;
  std::vector<quantity> environment; ///< GPU, driver, clocks, commit, command, date
  std::vector<quantity> config;      ///< what was asked
  std::vector<quantity> values;      ///< what was found
  std::vector<series> tables;        ///< the first is the one CSV holds
  std::vector<std::string> notes;    ///< the conclusions, one line each, for people
  std::vector<figure> figures;
  /// The value of `key` in values, config or environment (in that order), or nullptr.
  const quantity *find(const std::string &key) const;
  /// The table `key`, or nullptr.
  const series *table(const std::string &key) const;
  /// Whether the value `key` says "no" (a verdict such as "ok"; false when there is none).
  bool says_no(const std::string &key) const;
};

/// The environment JSON the commands record (environment_json, with "date", "command", "commit"
/// and "clocks" where they were added) as the record's quantities, labelled, in a fixed order;
/// fields it does not know come last, by their names.
std::vector<quantity> environment_of(const nlohmann::json &env);

/// "GPU 0 (NVIDIA H200, 132 SMs, CC 9.0)" from the fields of environment_json; what is not there
/// is left out ("GPU ?" without a device).
std::string gpu_described(const nlohmann::json &env);

/// "12.3 us", "8", "yes", "-" for nothing: a cell for people, with its format.
std::string show(const cell &c, const number_format &f, bool with_unit = true);
/// "yes" or "no", as records say a verdict.
inline std::string yes_no(bool b) {
  return b ? "yes" : "no";
}
/// Decimals that show about four significant digits of numbers up to `largest` (0 to 6; 1 when
/// there is no positive number).
int decimals_for(double largest);
/// "label value, label value": what the terminal shows of a list of quantities (not the detail).
std::string joined(const std::vector<quantity> &qs);

/// The terminal's text: title, environment and configuration lines, values, the tables that are
/// neither detail nor raw, and the notes.
std::string to_text(const record &r);
/// The same as markdown, every table included (a raw one by its title and row count only).
std::string to_markdown(const record &r);
/// The first table as CSV: a heading line of field keys, then the rows with exact numbers.
std::string to_csv(const record &r);
/// The SVG of every figure, one panel each, under the title and the environment.
std::string to_svg(const record &r);
/// The JSON document, in the record's order: {"kind": "greenctx.<kind>", "schema", "title",
/// "environment", "config", "values" (each an object of {key: {"label", "value", "unit",
/// "digits"}}), "tables" ({key: {"title", "detail", "raw" (only when true), "fields", "rows"}},
/// each row an object keyed by field), "notes", "figures" (each {"title", "series", "x", "y",
/// "y_label", "rules", "mark", "y_from_zero"}, and "style", "group", "x_labels", "log_x", "log_y"
/// only where they are not the defaults, so that tune's and scale's records read as before)}.
nlohmann::ordered_json to_json(const record &r);
/// The record a to_json document holds. Throws nlohmann::json::exception for any other shape
/// (a missing or mistyped member, digits outside 0..17, a row that is not an object, a figure
/// naming a table or field that is not there, an unknown style, bars without exactly one y or
/// boxes without five).
record from_json(const nlohmann::ordered_json &j);

} // namespace greenctx::cli::report
