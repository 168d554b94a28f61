// SPDX-License-Identifier: Apache-2.0
// greenctx run --sms N -- PROGRAM ARGS...: runs an unmodified CUDA program on N SMs (or, with
// --split S --piece I, on piece I of the split S, so that processes given the pieces of one
// split run on disjoint SMs). greenctx
// checks the request, sets the environment of tools/run_protocol.hpp and execs the program, so
// that the program is the process: its pid, signals and exit status are those of a plain run. The
// preload library in it confines its CUDA work and prints the summary when it exits.
#include "common/cli_common.hpp"
#include "common/help.hpp"
#include "commands/commands.hpp"
#include "common/process.hpp"
#include "common/run_child.hpp"

#include <run_protocol.hpp>

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string_view>
#include <unistd.h>

namespace greenctx::cli {
namespace {

namespace protocol = run_protocol;

constexpr const char *api = "greenctx run";

struct run_options {
  unsigned sms = 0;
  std::string split;             ///< --split: a piece of this split...
  std::optional<unsigned> piece; ///< ...this one
  std::string devices = "all";
  bool ignore_coscheduling = false;
  bool strict = false;
  bool quiet = false;
  bool real_sm_count = false;
  bool cuda_13_1 = false;
  std::vector<std::string> command;

  bool confines() const { return sms != 0 || !split.empty() || piece.has_value(); }
};

// With the driver, in the check child: the split gives device `d` the piece (made as the
// preload library will make it, by the same planner), and processes on its pieces can run side by
// side there (MPS): without MPS they time-slice, which is said, and refused with --strict.
void check_piece(const run_options &opt, const partition_request &split, int d) {
  const device dev(d);
  const split_flags flags =
      opt.ignore_coscheduling ? split_flags::ignore_sm_coscheduling : split_flags::none;
  const described_partitions parts = describe_partitions(dev, split, flags);
  const unsigned piece = *opt.piece;
  if (piece >= parts.parts.size())
    throw request_error(CUDA_ERROR_INVALID_VALUE, api,
                        fmt::format("--piece {}: '{}' has {} pieces, 0 to {}", piece, opt.split,
                                    parts.parts.size(), parts.parts.size() - 1));
  const std::optional<bool> mps = mps_active(dev);
  if (mps.value_or(true))
    return;
  const std::string why = fmt::format(
      "MPS is not active on device {}: processes on pieces of '{}' would take turns on the GPU "
      "(time-slicing), not run side by side; {}",
      d, opt.split, mps_start_hint);
  if (opt.strict)
    throw request_error(CUDA_ERROR_NOT_SUPPORTED, api, why + " (--strict refuses to run without)");
  std::fprintf(stderr, "greenctx run: %s\n", why.c_str());
}

// With the driver, in the check child, for --cuda-13.1: what it can do on this driver, said on
// stderr where it changes nothing; refused below CUDA 12.4 (no green contexts at all).
void check_cuda_13_1() {
  const int version = query_driver().version;
  if (version < 12040)
    throw error(CUDA_ERROR_NOT_SUPPORTED, api,
                fmt::format("--cuda-13.1: the driver is CUDA {}, which has no green contexts "
                            "(CUDA 12.4 or newer has them)",
                            format_cuda_version(version)));
  if (version >= 13010)
    std::fprintf(stderr,
                 "greenctx run: --cuda-13.1: the driver is CUDA %s, which has the 13.1 "
                 "green-context entry points itself: the program uses them, nothing is "
                 "provided\n",
                 format_cuda_version(version).c_str());
  else if (version < 13000)
    std::fprintf(stderr,
                 "greenctx run: --cuda-13.1: the driver is CUDA %s: programs on the driver API "
                 "get the 13.1 entry points, but CUDA 13 runtimes refuse drivers older than 13.0 "
                 "(cudaErrorInsufficientDriver) whatever greenctx does\n",
                 format_cuda_version(version).c_str());
}

// With the driver, in the check child: every device to confine exists and --sms is a size a
// split of each gives (or --split S has piece --piece on each).
void check_devices(const run_options &opt, const std::optional<partition_request> &split,
                   const std::optional<std::vector<int>> &devices) {
  const int count = device::count();
  if (count == 0)
    throw error(CUDA_ERROR_NO_DEVICE, api,
                "the driver sees no GPU" + visible_devices_note() + ": nothing to run on");
  std::vector<int> ordinals;
  if (devices) {
    ordinals = *devices;
    for (int d : ordinals)
      if (d >= count)
        throw request_error(
            CUDA_ERROR_INVALID_DEVICE, api,
            fmt::format("--device {}: the driver sees {} GPU{} ({}){}; leave --device out to "
                        "confine every GPU the program uses",
                        d, count, count == 1 ? "" : "s",
                        count == 1 ? "ordinal 0" : fmt::format("ordinals 0 to {}", count - 1),
                        visible_devices_note()));
  } else {
    for (int d = 0; d < count; ++d)
      ordinals.push_back(d);
  }
  for (int d : ordinals) {
    // Held through the checks below, so that their own handles of the device find its primary
    // context made, not made again.
    const device dev(d);
    refuse_mps_percentage(dev, api);
    if (!split) {
      check_confinement({opt.sms, d, opt.ignore_coscheduling});
      continue;
    }
    check_piece(opt, *split, d);
  }
}

int run_run(const run_options &opt) {
  // Bad input is rejected before anything runs: the program, --device, the preload library, and
  // then, with the driver, --sms on each device to confine.
  if (opt.command.empty())
    throw request_error(CUDA_ERROR_INVALID_VALUE, api,
                        "no program: greenctx run --sms N -- PROGRAM ARGS...");
  if ((opt.confines() || !opt.cuda_13_1) &&
      (opt.split.empty() == (opt.sms == 0) || opt.split.empty() == opt.piece.has_value()))
    throw request_error(CUDA_ERROR_INVALID_VALUE, api,
                        "give either --sms N or --split S with --piece I (a piece of a split, "
                        "such as --split 16,rest --piece 1), or --cuda-13.1 alone");
  // A malformed split is bad input, before the driver; parsed once, given on as text to the
  // preload library.
  std::optional<partition_request> split;
  if (!opt.split.empty())
    split = parse_partition_request(opt.split);
  const std::string program = process::find_program(opt.command.front(), api);
  const std::optional<std::vector<int>> devices = parse_device_list(opt.devices, api);
  // Variables a greenctx run around this one (or a stale shell) left: the library would read them.
  for (const std::string &name : protocol_variables_in_environment())
    unsetenv(name.c_str());
  const std::string library = preload_library();
  if (const int rc = check_in_child([&] {
        check_preload_loads(library);
        if (opt.cuda_13_1)
          check_cuda_13_1();
        if (opt.confines())
          check_devices(opt, split, devices);
      });
      rc != exit_ok)
    return rc;

  const auto set = [](const char *name, const std::string &value) {
    setenv(name, value.c_str(), 1);
  };
  const char *existing = std::getenv("LD_PRELOAD");
  set("LD_PRELOAD", library + (existing && *existing ? ":" + std::string(existing) : ""));
  const split_flags flags =
      opt.ignore_coscheduling ? split_flags::ignore_sm_coscheduling : split_flags::none;
  if (split) {
    set(protocol::env_split, split->to_string());
    set(protocol::env_piece, std::to_string(*opt.piece));
  } else if (opt.sms) {
    set(protocol::env_sms, std::to_string(opt.sms));
  }
  if (opt.confines()) {
    set(protocol::env_devices, devices ? join_ordinals(*devices) : "all");
    set(protocol::env_split_flags, std::to_string(static_cast<unsigned>(flags))); // CUDA's bits
  }
  if (opt.cuda_13_1)
    set(protocol::env_cuda_13_1, "1");
  if (opt.strict)
    set(protocol::env_strict, "1");
  if (opt.quiet)
    set(protocol::env_quiet, "1");
  if (opt.real_sm_count)
    set(protocol::env_real_sm_count, "1");
  const std::string report = make_report_file();
  set(protocol::env_report, report);
  set(protocol::env_root_pid, std::to_string(getpid()));
  std::fflush(stdout);
  std::fflush(stderr);

  const int e = process::exec_program(program, opt.command);
  unlink(report.c_str());
  const bool missing = e == ENOENT;
  print_error(fmt::format("cannot run '{}' ({}): {}{}", opt.command.front(), program,
                          std::strerror(e),
                          missing ? " (for a script, check the interpreter on its #! line)" : ""));
  return missing ? exit_not_found : exit_not_executable;
}

} // namespace

void add_run(CLI::App &app, action &run) {
  const auto [cmd, opt] = add_command<run_options>(
      app, "run",
      "Run an unmodified CUDA program with its kernels on N SMs of each GPU it uses. greenctx "
      "checks the request, then becomes the program (exec): its pid, output, exit status and "
      "signals are those of a plain run",
      fmt::format(
          "Example: greenctx run --sms 16 -- python3 train.py --epochs 1\n"
          "A program built with CUDA 13.1+ that splits SMs, on a CUDA 13.0 driver: greenctx run "
          "--cuda-13.1 -- ./app\n"
          "Two processes on disjoint SMs (start MPS first): greenctx run --split 16,rest --piece 0 "
          "-- ./serve & greenctx run --split 16,rest --piece 1 -- ./train\n"
          "Before anything runs, greenctx checks the program, --device, the preload library (by "
          "loading it) and --sms on each GPU to confine; then it execs the program with "
          "libgreenctx_preload.so in LD_PRELOAD.\n{}",
          exit_footer("",
                      fmt::format("4 also when the preload library is missing, or with --cuda-13.1 "
                                  "on a driver without green contexts. Past its checks "
                                  "the exit status is the program's ({} with --strict when a "
                                  "guarantee cannot be kept; 126 when the program cannot be "
                                  "executed, 127 when its #! interpreter is not found)",
                                  protocol::exit_strict))));
  cmd->add_option("--sms", opt->sms,
                  "SMs to run on, in decimal: a size one split gives on each GPU to confine (see "
                  "greenctx info)")
      ->transform(decimal(1, 1u << 20, ""));
  cmd->add_option("--split", opt->split,
                  "With --piece: run on a piece of this split instead of on --sms SMs, in the form "
                  "of greenctx verify (16,rest; 8,24,rest). Processes given the pieces of one "
                  "split run on disjoint SMs, side by side under MPS");
  cmd->add_option("--piece", opt->piece,
                  "Which piece of --split, counted from 0 in its order (--split 16,rest --piece 1 "
                  "is the rest)")
      ->transform(decimal(0, 1u << 20, ""));
  cmd->add_option("-d,--device", opt->devices,
                  "GPUs to confine: all (every GPU the program sees), or ordinals in decimal "
                  "separated by commas (e.g. 0,1), as the program numbers them under "
                  "CUDA_VISIBLE_DEVICES. The program's work on other GPUs runs on all their SMs")
      ->check(device_list_check(api))
      ->capture_default_str();
  add_ignore_coscheduling_option(*cmd, opt->ignore_coscheduling);
  cmd->add_flag("--strict", opt->strict,
                fmt::format("A CUDA guarantee greenctx cannot keep on this driver, or a device it "
                            "cannot confine, ends the program with exit status {} instead of a "
                            "warning",
                            protocol::exit_strict));
  add_quiet_option(*cmd, opt->quiet,
                   "No summary on stderr when the program exits (problems are still reported)");
  cmd->add_flag("--real-sm-count", opt->real_sm_count,
                "Tell the program each confined GPU's real SM count (cuDeviceGetAttribute "
                "MULTIPROCESSOR_COUNT, the device's SM resource); by default it is told N, its "
                "partition's");
  cmd->add_flag("--cuda-13.1", opt->cuda_13_1,
                "Give the program the CUDA 13.1 green-context API on this older driver, without "
                "rebuilding it: cuDevSmResourceSplit and cuStreamGetDevResource made by greenctx "
                "(driver version 13010 told to driver-API code built for 13.1), and the shared "
                "CUDA runtime's cudaDevSmResourceSplit and cudaStreamGetDevResource answered in "
                "its place; a runtime linked in statically is out of reach. With or without --sms "
                "(docs/compat-13.1.md, \"Without recompiling\")");
  cmd->add_option("PROGRAM", opt->command, "The program and its arguments, after --")->expected(-1);
  run_with(*cmd, run, opt, run_run, [opt = opt, cmd = cmd] {
    // Options of the confinement, which --cuda-13.1 alone does not make.
    if (opt->cuda_13_1 && !opt->confines())
      for (const char *name : {"--device", "--ignore-coscheduling", "--real-sm-count"})
        if (cmd->get_option(name)->count() > 0)
          throw CLI::ValidationError(name, "says how to confine the program, and --cuda-13.1 "
                                           "alone confines nothing: add --sms N (or --split S "
                                           "--piece I), or leave it out");
  });
}

} // namespace greenctx::cli
