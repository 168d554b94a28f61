// SPDX-License-Identifier: Apache-2.0
#include "report/output.hpp"

#include <greenctx/plan/error.hpp>

#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>

namespace greenctx::cli {
namespace {

[[noreturn]] void reject(const std::string &command, const std::string &message) {
  throw request_error(CUDA_ERROR_INVALID_VALUE, command, message);
}

void check_writable(const std::string &command, const char *flag, const std::string &path) {
  if (path.empty())
    return;
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  std::error_code ec;
  if (!parent.empty() && !std::filesystem::is_directory(parent, ec))
    reject(command, fmt::format("cannot write {} '{}': the folder '{}' does not exist", flag, path,
                                parent.string()));
  if (std::filesystem::is_directory(path, ec))
    reject(command, fmt::format("cannot write {} '{}': it is a folder", flag, path));
}

void write_file(const std::string &command, const std::string &path, const std::string &text) {
  std::ofstream f(path);
  if (!f || !(f << text))
    reject(command, "cannot write '" + path + "': check that its folder exists");
}

constexpr const char *stdout_path = "-";

std::string kind_name(std::string_view kind) {
  return "greenctx." + std::string(kind);
}

std::string dumped(const auto &json, bool pretty) {
  return json.dump(pretty ? 2 : 1) + "\n";
}

// --json PATH: on stdout, indented, for "-"; else compact in the file. text(pretty) renders it.
void put_json(const std::string &command, const std::string &path,
              const std::function<std::string(bool pretty)> &text) {
  if (path == stdout_path)
    std::fputs(text(true).c_str(), stdout);
  else
    write_file(command, path, text(false));
}

} // namespace

bool json_replaces_text(const std::string &path) noexcept {
  return path == stdout_path;
}

void add_json_option(CLI::App &cmd, std::string &path, const std::string &what) {
  cmd.add_option("--json", path,
                 "Write " + what + " as JSON to FILE (-: print it instead of the text)")
      ->type_name("FILE");
}

void add_output_options(CLI::App &cmd, output_options &opt, const output_help &help) {
  add_json_option(cmd, opt.json, help.json);
  cmd.add_option("--csv", opt.csv, help.csv);
  cmd.add_option("--svg", opt.svg, help.svg);
  cmd.add_option("--markdown", opt.markdown, help.markdown);
  cmd.add_option("--from", opt.from, help.from);
}

void add_record_options(CLI::App &cmd, output_options &opt, const std::string &csv_table) {
  add_json_option(cmd, opt.json, "the result");
  cmd.add_option("--markdown", opt.markdown, "Write the report as markdown to FILE");
  cmd.add_option("--csv", opt.csv, "Write " + csv_table + " as CSV to FILE");
  cmd.add_option("--from", opt.from,
                 "Report again a result saved with --json FILE (no GPU needed)");
}

void check_argument_or_from(const std::string &command, const char *name, const std::string &value,
                            const output_options &opt) {
  if (opt.from.empty() && value.empty()) {
    // `--json 16,rest` takes the split as its FILE: say so rather than only that SPLIT is missing.
    const bool json_took_it = !opt.json.empty() && !json_replaces_text(opt.json) &&
                              opt.json.find_first_of("/.") == std::string::npos;
    reject(command,
           fmt::format("{} is required (or --from FILE, to report a saved result again){}", name,
                       json_took_it
                           ? fmt::format("; --json takes a FILE and took '{}': write "
                                         "--json - to print the JSON, --json FILE to save it",
                                         opt.json)
                           : ""));
  }
  if (!opt.from.empty() && !value.empty())
    reject(command,
           fmt::format("--from FILE reports a saved result again: give no {} ('{}')", name, value));
}

void refuse_beside_from(const CLI::App &cmd, std::initializer_list<const char *> kept) {
  const CLI::Option *from = cmd.get_option_no_throw("--from");
  if (!from || from->count() == 0)
    return;
  const auto is_kept = [&](const CLI::Option &o) {
    for (const char *name :
         {"--json", "--csv", "--svg", "--markdown", "--quiet", "--check-targets"})
      if (o.check_name(name))
        return true;
    for (const char *name : kept)
      if (o.check_name(name))
        return true;
    return false;
  };
  for (const CLI::Option *o : cmd.get_options())
    if (o != from && o->nonpositional() && o->count() > 0 && !is_kept(*o))
      throw CLI::ValidationError(o->get_name(), "--from reports a saved run as it was measured: "
                                                "leave this option out");
}

void check_json_path(const std::string &command, const std::string &path) {
  if (!json_replaces_text(path))
    check_writable(command, "--json", path);
}

void check_output_paths(const std::string &command, const output_options &opt) {
  check_json_path(command, opt.json);
  check_writable(command, "--csv", opt.csv);
  check_writable(command, "--svg", opt.svg);
  check_writable(command, "--markdown", opt.markdown);
}

namespace {

[[noreturn]] void not_a_file_of(const std::string &command, const std::string &path,
                                const char *why) {
  reject(command, "'" + path + "' is not a " + command + " JSON file: " + why);
}

nlohmann::ordered_json parsed(const std::string &command, const std::string &path) {
  std::ifstream f(path);
  if (!f)
    reject(command, "cannot read '" + path + "'");
  try {
    return nlohmann::ordered_json::parse(f);
  } catch (const nlohmann::json::exception &e) {
    not_a_file_of(command, path, e.what());
  }
}

// Refuses a document that names a kind other than `kind`.
void check_kind(const std::string &command, std::string_view kind, const std::string &path,
                const nlohmann::ordered_json &j) {
  if (j.is_object() && j.contains("kind") && j["kind"] != kind_name(kind))
    reject(command,
           fmt::format("'{}' holds a {} result, not a {} one", path,
                       j["kind"].is_string() ? j["kind"].get<std::string>() : j["kind"].dump(),
                       kind_name(kind)));
}

} // namespace

void print_record(const std::string &command, const output_options &opt, const report::record &r) {
  // Each rendering is made only when it is printed or its file was asked for.
  if (!json_replaces_text(opt.json)) {
    std::fflush(stdout); // after what a measured program printed
    std::fputs(report::to_text(r).c_str(), stdout);
  }
  if (!opt.markdown.empty())
    write_file(command, opt.markdown, report::to_markdown(r));
  if (!opt.json.empty())
    put_json(command, opt.json, [&](bool pretty) { return dumped(report::to_json(r), pretty); });
  if (!opt.csv.empty())
    write_file(command, opt.csv, report::to_csv(r));
  if (!opt.svg.empty())
    write_file(command, opt.svg, report::to_svg(r));
}

report::record read_record(const std::string &command, std::string_view kind,
                           const std::string &path) {
  const auto j = parsed(command, path);
  check_kind(command, kind, path, j);
  try {
    return report::from_json(j); // its kind, which from_json requires, is checked above
  } catch (const nlohmann::json::exception &e) {
    not_a_file_of(command, path, e.what());
  }
}

} // namespace greenctx::cli
