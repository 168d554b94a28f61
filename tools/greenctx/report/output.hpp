// SPDX-License-Identifier: Apache-2.0
// How every command's results leave it: each command builds one record of the report model
// (report/record.hpp) and prints it here (print_record), and --from reads one back (read_record).
// Each JSON document carries "kind" ("greenctx.bench") and "schema" (the record's), and `--json
// FILE` means the same everywhere: the file, or stdout in place of the text with `-`. --csv,
// --svg, --markdown and --from are registered, checked, written and read back the same way for
// each command.
#pragma once

#include "report/record.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <initializer_list>
#include <string>
#include <string_view>

namespace greenctx::cli {

/// Adds --json FILE, the same on every command: `what` ("the result") as JSON to FILE, or on
/// stdout instead of the text with `-`.
void add_json_option(CLI::App &cmd, std::string &path, const std::string &what);

/// Whether --json `path` ("-") prints the JSON on stdout in place of the text.
bool json_replaces_text(const std::string &path) noexcept;

/// Rejects, before any work, a --json path whose folder does not exist or that is a folder ("-"
/// and empty pass). Throws request_error naming `command`.
void check_json_path(const std::string &command, const std::string &path);

/// Where to write the report's files (empty: not asked), and a saved run to report again.
struct output_options {
  std::string json, csv, svg, markdown, from;
};

/// What each option's --help says for one command (json: what the JSON holds, "the record").
struct output_help {
  std::string json, csv, svg, markdown, from;
};

/// Adds --json, --csv, --svg, --markdown and --from FILE to `cmd`, bound to `opt`.
void add_output_options(CLI::App &cmd, output_options &opt, const output_help &help);

/// Adds the outputs of a command whose record draws no figure (info, verify, split): --json FILE
/// as add_json_option, --markdown FILE, --csv FILE (`csv_table` says what it holds: "the GPUs'
/// table") and --from FILE (a result saved with --json, printed again), bound to `opt`.
void add_record_options(CLI::App &cmd, output_options &opt, const std::string &csv_table);

/// The positional argument `name` ("SPLIT") of a command that also reads --from: required without
/// --from, refused beside it. Throws request_error naming `command`.
void check_argument_or_from(const std::string &command, const char *name, const std::string &value,
                            const output_options &opt);

/// With --from: refuses, as a parse error, every option of `cmd` given beside it but the outputs,
/// --quiet, --check-targets and `kept` (those that choose which record is read: bench's --comm,
/// verify's --processes): a saved run is reported as it was measured, so they would change nothing.
void refuse_beside_from(const CLI::App &cmd, std::initializer_list<const char *> kept = {});

/// Rejects, before a measurement that can take minutes, an output path whose folder does not
/// exist or that is a folder. Throws request_error naming `command` ("greenctx scale").
void check_output_paths(const std::string &command, const output_options &opt);

/// Prints the record on stdout (report::to_text, or its JSON with `--json -`) and writes every
/// file `opt` asks for. Throws request_error when one cannot be written.
void print_record(const std::string &command, const output_options &opt, const report::record &r);

/// --from FILE of a command that prints records: the record FILE holds. A document of another
/// kind is refused, naming it. Throws request_error when the file cannot be read or is not a
/// record: "'FILE' is not a <command> JSON file: ...".
report::record read_record(const std::string &command, std::string_view kind,
                           const std::string &path);

} // namespace greenctx::cli
