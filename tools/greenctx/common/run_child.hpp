// SPDX-License-Identifier: Apache-2.0
// Running an unmodified program confined to N SMs (greenctx run, greenctx scale): the preload
// library (tools/preload) confines the program's CUDA work; the CLI only checks the request, sets
// the environment of tools/run_protocol.hpp and starts the program. `greenctx run` becomes the
// program (exec_confined); `greenctx scale` times many runs as children (run_child). Defined in
// run_child.cpp, preload_library.cpp (finding and loading the library) and child_tee.cpp (a
// child's stdout teed); the report file is run_report.hpp's.
#pragma once

#include "common/run_report.hpp"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace greenctx::cli {

/// What to run and how to confine it.
struct confinement {
  unsigned sms = 0; ///< 0: do not confine (the unconfined baseline)
  int device = 0;
  bool ignore_coscheduling = false;
  /// The preload library times the program's GPU phase (run_report::first_work_ns and
  /// last_sync_ns). With sms 0 too: then the library is loaded in measure-only mode
  /// (GREENCTX_RUN_MEASURE without GREENCTX_RUN_SMS) and confines nothing.
  bool measure = false;
  /// The program is told the device's SM count, not its partition's (GREENCTX_RUN_REAL_SM_COUNT;
  /// confined runs only: an unconfined program sees the device's anyway).
  bool real_sm_count = false;
};

/// Where a child's stdout goes.
enum class child_output {
  inherit, ///< greenctx's own stdout, untouched
  tee,     ///< a pipe greenctx reads: copied to greenctx's stdout and kept in child_result::out
};

/// How a child ended, and its report.
struct child_result {
  int exit_code = 0; ///< valid when signal == 0
  int signal = 0;    ///< the signal that ended it, or 0
  double wall_s = 0; ///< from start to exit
  run_report report; ///< empty when the preload library was not loaded (unconfined, no measure)
  std::string out;   ///< with child_output::tee: what the program wrote to stdout (its last 16 MiB)
};

/// Checks `c` against device `c.device` before anything runs: N must be a size one split gives
/// exactly (else request_error naming the device and its valid sizes near N). Returns the SMs a
/// group really has. Calls the driver.
unsigned check_confinement(const confinement &c);

/// The preload library to put in LD_PRELOAD, as an absolute path where it resolves:
/// $GREENCTX_PRELOAD, or libgreenctx_preload.so beside the greenctx binary, in ../lib or
/// ../preload. Checks the path only (check_preload_loads loads it): throws request_error (exit 2)
/// for a GREENCTX_PRELOAD without a folder, or a path with a space or a colon (the loader splits
/// LD_PRELOAD on both); error with CUDA_ERROR_NOT_SUPPORTED (exit 4) when there is no default
/// library.
std::string preload_library();

/// Loads `path` with dlopen(RTLD_NOW | RTLD_LOCAL) and closes it again, so that a missing file, a
/// folder, a file that is not a library, or a library of another architecture is refused (with
/// dlerror's text) before any program starts: request_error (exit 2) when GREENCTX_PRELOAD named
/// it, else error with CUDA_ERROR_NOT_SUPPORTED (exit 4: the installation lacks it). Call it in a
/// check_in_child: loading runs the library's constructors, which have no business in greenctx's
/// own process.
void check_preload_loads(const std::string &path);

/// Runs `check` in a child process (process::fork_call) and waits for it.
/// A greenctx::error in the child is printed there ("greenctx: ...") and the child exits with its
/// exit code (exit_code_for). Returns that code: exit_ok when the check passed, else the code to
/// end greenctx with (the message is already out). Keeps what a check loads (the driver, the
/// preload library) out of the process that `greenctx run` turns into the program.
int check_in_child(const std::function<void()> &check);

/// The protocol's variables (tools/run_protocol.hpp) present in the environment: what
/// `greenctx run` and run_child remove before they set their own.
std::vector<std::string> protocol_variables_in_environment();

/// Runs argv[0] with argv as a child (process::spawn), its stdin, stdout and stderr those of
/// greenctx, under `c` (the preload library and the protocol's variables in its environment;
/// nothing of the kind when c.sms == 0 and not c.measure), and waits for it. With
/// child_output::tee its stdout is a pipe that greenctx copies to its own stdout as it comes and
/// keeps in child_result::out; output that processes the program left behind write after it
/// exits is not waited for (its end is noticed within 50 ms of silence on the pipe). The signals
/// greenctx receives are passed on to the child (process::signal_forwarding). Reads and removes
/// the report file when the library was loaded. Throws error when the program cannot start.
child_result run_child(const std::vector<std::string> &argv, const confinement &c,
                       child_output output = child_output::inherit);

} // namespace greenctx::cli
