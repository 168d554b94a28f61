// The output options of the commands that measure (bench, scale): --json, --csv, --svg,
// --markdown and --from, registered, checked, written and read back the same way for each.
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <functional>
#include <string>

namespace greenctx::cli {

/// Where to write the report's files (empty: not asked), and a saved run to report again.
struct output_options {
  std::string json, csv, svg, markdown, from;
};

/// What each option's --help says for one command.
struct output_help {
  std::string json, csv, svg, markdown, from;
};

/// Adds --json, --csv, --svg, --markdown and --from FILE to `cmd`, bound to `opt`.
void add_output_options(CLI::App &cmd, output_options &opt, const output_help &help);

/// Rejects, before a measurement that can take minutes, an output path whose folder does not
/// exist or that is a folder. Throws request_error naming `command` ("greenctx scale").
void check_output_paths(const std::string &command, const output_options &opt);

/// The report's renderings; each is called only when its file was asked for.
struct report_writers {
  std::function<std::string()> markdown, json, csv, svg;
};

/// Writes every file `opt` asks for. Throws request_error when one cannot be written.
void write_outputs(const std::string &command, const output_options &opt,
                   const report_writers &writers);

/// --from FILE: parses the saved JSON and hands it to `report`, which returns the exit code.
/// Throws request_error when the file cannot be read, or is not JSON of the shape `report`
/// reads (it throws nlohmann::json::exception): "'FILE' is not a <command> JSON file: ...".
int report_saved(const std::string &command, const std::string &path,
                 const std::function<int(const nlohmann::json &)> &report);

} // namespace greenctx::cli
