#include "report/output.hpp"

#include <greenctx/plan/error.hpp>

#include <fmt/format.h>

#include <filesystem>
#include <fstream>

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

} // namespace

void add_output_options(CLI::App &cmd, output_options &opt, const output_help &help) {
  cmd.add_option("--json", opt.json, help.json);
  cmd.add_option("--csv", opt.csv, help.csv);
  cmd.add_option("--svg", opt.svg, help.svg);
  cmd.add_option("--markdown", opt.markdown, help.markdown);
  cmd.add_option("--from", opt.from, help.from);
}

void check_output_paths(const std::string &command, const output_options &opt) {
  check_writable(command, "--json", opt.json);
  check_writable(command, "--csv", opt.csv);
  check_writable(command, "--svg", opt.svg);
  check_writable(command, "--markdown", opt.markdown);
}

void write_outputs(const std::string &command, const output_options &opt,
                   const report_writers &writers) {
  if (!opt.markdown.empty())
    write_file(command, opt.markdown, writers.markdown());
  if (!opt.json.empty())
    write_file(command, opt.json, writers.json());
  if (!opt.csv.empty())
    write_file(command, opt.csv, writers.csv());
  if (!opt.svg.empty())
    write_file(command, opt.svg, writers.svg());
}

int report_saved(const std::string &command, const std::string &path,
                 const std::function<int(const nlohmann::json &)> &report) {
  std::ifstream f(path);
  if (!f)
    reject(command, "cannot read '" + path + "'");
  try {
    return report(nlohmann::json::parse(f));
  } catch (const nlohmann::json::exception &e) {
    reject(command, "'" + path + "' is not a " + command + " JSON file: " + e.what());
  }
}

} // namespace greenctx::cli
