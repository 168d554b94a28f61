// Shared pieces of the greenctx command-line tool: exit codes, error reporting, small formatters.
#pragma once

#include <greenctx/greenctx.hpp>

#include <nlohmann/json.hpp>

#include <string>

namespace greenctx::cli {

/// Exit codes of every subcommand (documented in README.md and in `greenctx --help`).
enum exit_code : int {
  exit_ok = 0,
  exit_check_failed = 1, ///< verify found a violation, or demo's checks failed
  exit_usage = 2,        ///< bad flags or input: malformed split, impossible counts, unknown GPU
  exit_no_gpu = 3,       ///< no NVIDIA driver, or the driver sees no GPU
  exit_unsupported = 4,  ///< the driver lacks a feature the command needs
  exit_cuda_error = 5,   ///< any other failure of a driver call
};

/// The exit code for an exception thrown by greenctx.
int exit_code_for(const error &e) noexcept;

/// Prints "greenctx: <message>" to stderr.
void print_error(const std::string &message);

/// Environment every result carries: driver, toolkit, GPU, SMs, granularity.
nlohmann::json environment_json(const driver_info &drv, const device &dev);

/// The command line as typed (for result files), set once by main.
void set_command_line(int argc, char **argv);
const std::string &command_line();

/// "3.0 us" / "1.25 ms" for a duration in microseconds.
std::string format_us(double us);

} // namespace greenctx::cli
