// Running an unmodified program confined to N SMs (greenctx run, greenctx scale): the preload
// library (tools/preload) confines the program's CUDA work; the CLI only checks the request, sets
// the environment of tools/run_protocol.hpp and starts the program. `greenctx run` becomes the
// program (exec_confined); `greenctx scale` times many runs as children (run_child).
#pragma once

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
};

/// What the preload library reported, summed over every process of the program (the report file
/// of tools/run_protocol.hpp: one JSON line per process).
struct run_report {
  bool cuda_used = false;            ///< some process called the CUDA driver
  std::vector<int> confined_devices; ///< ordinals that got a confined context, ascending
  unsigned green_contexts = 0;       ///< green contexts the library created
  unsigned blocking_streams = 0;     ///< blocking streams it emulated
  unsigned per_thread_streams = 0;   ///< per-thread default streams it provided
  std::vector<std::string> problems; ///< what could not be kept, each once, sorted
  unsigned processes = 0;            ///< report lines read
};

/// How a child ended, and its report.
struct child_result {
  int exit_code = 0; ///< valid when signal == 0
  int signal = 0;    ///< the signal that ended it, or 0
  double wall_s = 0; ///< from start to exit
  run_report report; ///< empty for an unconfined run (no preload library)
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

/// Runs `check` in a child process (fork) and waits for it, with SIGCHLD at its default meanwhile.
/// A greenctx::error in the child is printed there ("greenctx: ...") and the child exits with its
/// exit code (exit_code_for). Returns that code: exit_ok when the check passed, else the code to
/// end greenctx with (the message is already out). Keeps what a check loads (the driver, the
/// preload library) out of the process that `greenctx run` turns into the program.
int check_in_child(const std::function<void()> &check);

/// Resolves `program` like execvp would (a path with '/' as is, else through $PATH). Throws
/// request_error when it is not an executable file.
std::string find_program(const std::string &program);

/// Creates an empty report file in $TMPDIR (else /tmp) with mkstemp, named after this process
/// (greenctx-run-PID-XXXXXX), and returns its path; first removes this user's report files whose
/// process is gone (a program that ended by _exit or a signal leaves its report behind). Throws
/// error when it cannot create one.
std::string make_report_file();

/// Replaces the process with `program` (a path, from find_program) run with `argv` (argv[0] as
/// given) and the current environment; a file the kernel refuses as ENOEXEC (a script without
/// "#!") runs under /bin/sh, as execvp does. Returns errno when nothing could be executed.
int exec_program(const std::string &program, const std::vector<std::string> &argv);

/// Reads a report file (tools/run_protocol.hpp): lines that are not JSON objects are skipped.
run_report read_report(const std::string &path);

/// The protocol's variables (tools/run_protocol.hpp) present in the environment: what
/// `greenctx run` and run_child remove before they set their own.
std::vector<std::string> protocol_variables_in_environment();

/// Runs argv[0] with argv as a child (fork + execve), its stdin, stdout and stderr those of
/// greenctx, under `c` (the preload library and the protocol's variables in its environment;
/// nothing of the kind when c.sms == 0), and waits for it. Signals: SIGINT, SIGTERM, SIGHUP and
/// SIGQUIT that greenctx receives are passed on to the child, except those greenctx inherited as
/// ignored (they stay ignored, in the child too) and those a terminal sent (si_code SI_KERNEL:
/// the terminal signalled the whole foreground process group, the child included, so it gets
/// each signal once). SIGCHLD is at its default while waiting (waitpid works even when greenctx
/// was started with SIGCHLD ignored), and the child gets the disposition greenctx inherited.
/// Reads and removes the report file when confined. Throws error when the program cannot start.
child_result run_child(const std::vector<std::string> &argv, const confinement &c);

} // namespace greenctx::cli
