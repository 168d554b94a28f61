// SPDX-License-Identifier: Apache-2.0
// Shared pieces of the greenctx command-line tool: exit codes, error reporting, small formatters.
#pragma once

#include <greenctx/plan/decimal.hpp>
#include <greenctx/plan/names.hpp>

#include <greenctx/greenctx.hpp>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace greenctx::cli {

/// Exit codes of every subcommand (documented in docs/cli.md and in `greenctx --help`).
enum exit_code : int {
  exit_ok = 0,
  exit_check_failed = 1, ///< verify found a violation, or demo's checks failed
  exit_usage = 2,        ///< bad flags or input: malformed split, impossible counts, unknown GPU,
                         ///< a GREENCTX_PRELOAD that cannot be loaded
  exit_no_gpu = 3,       ///< no NVIDIA driver, or the driver sees no GPU
  exit_unsupported = 4,  ///< the driver lacks a feature the command needs (or run and scale
                         ///< their preload library)
  exit_cuda_error = 5,   ///< any other failure of a driver call
  // greenctx run becomes the program: past its checks, the exit status is the program's own
  // (run_protocol::exit_strict when --strict stopped it), or, as in a shell:
  exit_not_executable = 126, ///< run: the program was found but could not be executed
  exit_not_found = 127,      ///< run: the program (or its #! interpreter) was not found
};

/// Names separated by commas, each one of `all` (`name_of(x)` its name) and named once; anything
/// else is refused by `api` naming `option` and the names it knows (greenctx::pick_by_name).
template <class T, std::size_t N, class NameOf>
std::vector<T> parse_names(std::string_view text, const char *api, const char *option,
                           const T (&all)[N], NameOf name_of) {
  return pick_by_name(list_entries(text), api, option, all, name_of, " (separate them by commas)");
}

/// The exit code for an exception thrown by greenctx.
int exit_code_for(const error &e) noexcept;

/// Prints "greenctx: <message>" to stderr.
void print_error(const std::string &message);

/// Prints max_connections_warning() as "greenctx: warning: ..." when there is one: the commands
/// that measure green contexts call it before they start.
void warn_about_connections();

/// Environment every result carries: driver, toolkit, GPU, SMs, granularity, greenctx commit.
nlohmann::json environment_json(const driver_info &drv, const device &dev);

/// `env` with the run's "date" (utc_now) and "command" (command_line): the environment a result
/// records.
nlohmann::json with_date_and_command(nlohmann::json env);

/// The current time in UTC, "2026-12-01T03:00:00Z", for the date of a result.
std::string utc_now();

/// The command line as typed (for result files), set once by main.
void set_command_line(int argc, char **argv);
const std::string &command_line();

/// The check of every integer option: a whole number in decimal (read_decimal: digits only,
/// "016" is 16) from `min` to `max`, else CLI11's parse fails with decimal_problem's message after
/// the option's name, so the command exits with exit_usage before any driver call. It also
/// rewrites the value without leading zeros, because CLI11 itself would read "016" as octal and
/// "0x10" as hexadecimal. Apply it with ->transform(), in place of ->check(CLI::Range(...)).
/// `description` is what --help shows after the type ("in [min - max]" when not given).
CLI::Validator decimal(unsigned long long min, unsigned long long max,
                       std::optional<std::string> description = std::nullopt);

/// decimal() over the whole range of the option's type T, from `min`.
template <class T> CLI::Validator decimal_for(unsigned long long min = 0) {
  return decimal(min, static_cast<unsigned long long>(std::numeric_limits<T>::max()),
                 min == 0 ? std::string() : "at least " + std::to_string(min));
}

/// Adds the integer option `name` read by decimal(min, max), its default shown in --help.
template <class T>
CLI::Option *add_decimal(CLI::App &cmd, const std::string &name, T &value, const std::string &help,
                         unsigned long long min, unsigned long long max) {
  return cmd.add_option(name, value, help)->transform(decimal(min, max))->capture_default_str();
}

/// Adds `--device N` (a GPU ordinal in decimal, see decimal()) bound to `ordinal`.
void add_device_option(CLI::App &cmd, int &ordinal);

/// Adds `--ignore-coscheduling`, the same on every command that splits, bound to `flag`.
void add_ignore_coscheduling_option(CLI::App &cmd, bool &flag);

/// Adds `-q,--quiet` bound to `flag`; `help` says what it leaves out.
void add_quiet_option(CLI::App &cmd, bool &flag,
                      const std::string &help = "No progress lines on stderr");

/// `--device all|N|N,M`: "all" gives nullopt (every GPU the driver sees), else GPU ordinals in
/// decimal separated by commas, each named once. Throws request_error (exit_usage) naming `api`,
/// with a message that says what is wrong and what would work. Needs no driver.
std::optional<std::vector<int>> parse_device_list(std::string_view text, const char *api);

/// `--device` of a command that runs on one GPU: the one ordinal `text` names, or `fallback` when
/// it is empty. Throws request_error "--device TEXT: <why>" when it names all or several.
int one_device(const std::string &text, int fallback, const char *api, const std::string &why);

/// The ordinals `list` names (every ordinal below `count` when nullopt), each checked against the
/// `count` GPUs the driver sees. Throws error(CUDA_ERROR_NO_DEVICE) when `count` is 0, and
/// request_error(CUDA_ERROR_INVALID_DEVICE) naming the ordinal, the valid ones and
/// CUDA_VISIBLE_DEVICES when it is set, when an ordinal is not below `count`.
std::vector<int> resolve_device_list(const std::optional<std::vector<int>> &list, int count,
                                     const char *api);

/// A CLI11 check of `--device all|LIST` (parse_device_list), so that bad lists exit with
/// exit_usage in the parse, before any driver call.
CLI::Validator device_list_check(const char *api);

/// " (CUDA_VISIBLE_DEVICES=...: ...)" when it is set, else empty: for messages about ordinals.
std::string visible_devices_note();

/// Whether contexts made on `dev` are MPS clients (CU_DEVICE_ATTRIBUTE_MPS_ENABLED); nullopt where
/// the driver does not say.
std::optional<bool> mps_active(const device &dev);

/// The path of the running greenctx program (/proc/self/exe), or nullopt where it cannot be read.
std::optional<std::string> own_program_path();

/// Throws request_error (exit 2) when `dev` is an MPS client and CUDA_MPS_ACTIVE_THREAD_PERCENTAGE
/// is set below 100 (or to something else than a number): the driver then gives the process a
/// share of the SMs without co-scheduled units, so green-context splits fail, and a split made
/// without co-scheduling comes from SMs the percentage does not give (measured on the H200,
/// docs/run-design.md). `what` names the command in the message. A percentage the daemon sets as
/// its default, not through the variable, is not seen.
void refuse_mps_percentage(const device &dev, const char *what);

/// How to start MPS, for messages: the control daemon's command, and the option of `greenctx info`
/// that says whether it is active.
inline constexpr const char *mps_start_hint =
    "start the MPS control daemon first (nvidia-cuda-mps-control -d; `greenctx info` then says "
    "'MPS active'; stop it with: echo quit | nvidia-cuda-mps-control)";

/// "0,1,3".
std::string join_ordinals(const std::vector<int> &ordinals);

/// "3.0 us" / "1.25 ms" for a duration in microseconds.
std::string format_us(double us);

} // namespace greenctx::cli
