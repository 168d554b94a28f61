// Running an unmodified program confined to N SMs (greenctx run, greenctx scale): the preload
// library (tools/preload) makes every thread's CUDA work run on a green context of N SMs.
#pragma once

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

/// How a child ended.
struct child_result {
  int exit_code = 0;                 ///< valid when signal == 0
  int signal = 0;                    ///< the signal that ended it, or 0
  double wall_s = 0;                 ///< from fork to exit
  bool cuda_used = false;            ///< the preload library saw the program use CUDA
  unsigned confined_threads = 0;     ///< threads that got a green context of their own
  std::vector<std::string> problems; ///< what could not be confined (reported by the library)
};

/// Checks `c` against device `c.device` before anything runs: N must be a size one split gives
/// exactly (else request_error naming the valid sizes near N). Returns the SMs a group really has.
unsigned check_confinement(const confinement &c);

/// The preload library: $GREENCTX_PRELOAD, or libgreenctx_preload.so beside the greenctx binary,
/// or in ../lib. Throws error when there is none.
std::string preload_library();

/// Resolves `program` like execvp would (a path with '/' as is, else through $PATH). Throws
/// request_error when it is not an executable file.
std::string find_program(const std::string &program);

/// Runs argv[0] with argv, its stdin, stdout and stderr those of greenctx, under `c` (the preload
/// library and its settings in the environment; nothing when c.sms == 0). SIGINT, SIGTERM, SIGHUP
/// and SIGQUIT that greenctx receives are passed to the child. Waits for it.
child_result run_child(const std::vector<std::string> &argv, const confinement &c);

/// Ends greenctx the way the child ended: re-raises its signal, or exits with its code.
[[noreturn]] void exit_like(const child_result &r);

} // namespace greenctx::cli
