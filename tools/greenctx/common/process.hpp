// SPDX-License-Identifier: Apache-2.0
// Starting, watching and ending child processes: the one place the CLI forks. Used by `greenctx
// run` (the request checked in a child, then exec), `greenctx scale` (each run a child),
// `verify --processes` (one child per piece, spoken to through pipes), `bench --comm` (each
// measurement in a child that may hang) and `greenctx mps` (NVIDIA's control program).
// Every wait here works when greenctx was started with SIGCHLD ignored, and every child gets the
// SIGCHLD disposition greenctx inherited.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <vector>

namespace greenctx::cli::process {

/// How a child ended.
struct end_status {
  int exit_code = 0;      ///< valid when signal == 0
  int signal = 0;         ///< the signal that ended it, or 0
  bool timed_out = false; ///< greenctx killed it (SIGKILL) when its time limit passed

  /// From a status that waitpid returned for a child that ended.
  static end_status from_wait_status(int status);
  bool succeeded() const { return signal == 0 && exit_code == 0; }
  /// What a shell's $? would say: the exit code, or 128 + the signal.
  int shell_code() const { return signal ? 128 + signal : exit_code; }
};

/// "exit N", "signal N (SIGNAME)" for the common signals, else "signal N".
std::string describe(const end_status &end);

/// Keeps SIGCHLD at its default disposition while one of these lives: waitpid cannot wait for a
/// child when SIGCHLD is ignored (the kernel reaps it). Guards nest and overlap; greenctx's own
/// disposition is back when the last one ends. Not for use from several threads at once.
class sigchld_default {
public:
  sigchld_default();
  ~sigchld_default();
  sigchld_default(sigchld_default &&other) noexcept;
  sigchld_default &operator=(sigchld_default &&other) noexcept;
  sigchld_default(const sigchld_default &) = delete;
  sigchld_default &operator=(const sigchld_default &) = delete;

  /// In a child between fork and exec (async-signal-safe): the disposition greenctx had before
  /// the first guard.
  static void restore_in_child() noexcept;

private:
  bool held_ = true;
};

/// Passes SIGINT, SIGTERM, SIGHUP and SIGQUIT that greenctx receives on to one child while this
/// lives, except signals greenctx inherited as ignored (they stay ignored, in the child too) and
/// those a terminal sent (si_code SI_KERNEL: the terminal signalled the whole foreground process
/// group, the child included, which must get each signal once). Built before the child is
/// started: the signals stay blocked until forward_to names the child, so that none is lost in
/// between. One at a time; the destructor restores greenctx's handlers and signal mask.
class signal_forwarding {
public:
  signal_forwarding();
  ~signal_forwarding();
  signal_forwarding(const signal_forwarding &) = delete;
  signal_forwarding &operator=(const signal_forwarding &) = delete;

  /// From now on the signals go to `pid`; unblocks them (pending ones arrive now).
  void forward_to(pid_t pid);
  /// In the child between fork and exec (async-signal-safe): greenctx's handlers and mask back.
  void restore_in_child() const noexcept;
};

/// A child process, owned. Destroying one that has not been reaped kills it (SIGKILL) and reaps
/// it: no child outlives an error. Move-only; a moved-from child owns nothing.
class child {
public:
  child() = default;
  child(child &&other) noexcept;
  child &operator=(child &&other) noexcept;
  child(const child &) = delete;
  child &operator=(const child &) = delete;
  ~child();

  pid_t pid() const { return pid_; }
  /// How it ended, once reaped.
  const std::optional<end_status> &ended() const { return end_; }

  /// Reaps it if it has ended (waitpid WNOHANG). Returns how it ended, or nullopt while it runs.
  std::optional<end_status> poll();
  /// Waits for it to end (retrying waits that a signal interrupted).
  end_status wait();
  /// Waits at most `limit`; nullopt when it still runs then.
  std::optional<end_status> wait_for(std::chrono::milliseconds limit);
  /// Waits at most `limit`, then kills it with SIGKILL: end_status::timed_out says which.
  end_status wait_or_kill(std::chrono::milliseconds limit);
  /// Sends `sig` to it when it has not been reaped.
  void signal(int sig) const;

private:
  friend child spawn(const struct command &cmd, const char *api);
  friend child fork_call(const std::function<int()> &body, const char *api);
  child(pid_t pid, sigchld_default guard);
  pid_t pid_ = -1;
  std::optional<end_status> end_;
  std::optional<sigchld_default> sigchld_;
  void reaped(int status);
  void lost(); ///< waitpid no longer knows it (ECHILD): ended, how unknown
};

/// Where a child's standard streams go: a descriptor to put in place of each (dup2, so that it
/// loses close-on-exec), or -1 to leave greenctx's.
struct stdio {
  int in = -1;
  int out = -1;
  int err = -1;
};

/// A program to execute.
struct command {
  std::string program;                                 ///< a path (find_program resolves names)
  std::vector<std::string> argv;                       ///< argv[0] as the program should see it
  std::optional<std::vector<std::string>> environment; ///< NAME=value entries; nullopt: greenctx's
  stdio io;
  signal_forwarding *forwarding = nullptr; ///< given the child; restored in it before exec
};

/// greenctx's environment with each NAME=value of `assignments` in place of NAME's value.
std::vector<std::string> environment_with(const std::vector<std::string> &assignments);

/// Starts `cmd` (fork, then execve; a file the kernel refuses with ENOEXEC, a script without
/// "#!", runs under /bin/sh, as execvp does). Returns once the program runs: a close-on-exec pipe
/// tells whether execve succeeded. Between fork and execve the child makes only async-signal-safe
/// calls (greenctx may have driver threads). Throws error (CUDA_ERROR_OPERATING_SYSTEM, under
/// `api`) "cannot start 'PROGRAM': REASON" when it cannot start; nothing is left running then.
child spawn(const command &cmd, const char *api);

/// Forks; the child runs `body` and ends with its return value as exit code (std::_Exit: no
/// destructors, no atexit handlers run there). stdout and stderr are flushed before the fork and
/// after `body`. Throws error (CUDA_ERROR_OPERATING_SYSTEM, under `api`) when fork fails.
child fork_call(const std::function<int()> &body, const char *api);

/// Resolves `program` like execvp would (a path with '/' as is, else through $PATH, "" in it
/// being the current folder). Throws request_error under `api` when it is not an executable file.
std::string find_program(const std::string &program, const char *api);

/// Replaces the process with `program` (a path) run with `argv` and the current environment, a
/// script without "#!" under /bin/sh as spawn does. Returns errno when nothing could be executed.
int exec_program(const std::string &program, const std::vector<std::string> &argv);

/// A file descriptor, owned: closed when it goes. Move-only; -1 holds none.
class descriptor {
public:
  descriptor() = default;
  explicit descriptor(int fd) : fd_(fd) {}
  descriptor(descriptor &&other) noexcept : fd_(other.release()) {}
  descriptor &operator=(descriptor &&other) noexcept;
  descriptor(const descriptor &) = delete;
  descriptor &operator=(const descriptor &) = delete;
  ~descriptor() { reset(); }
  int get() const { return fd_; }
  /// Gives it up: the caller closes what this returns.
  int release() noexcept;
  /// Closes it now (the parent's copy of a child's end, or the end of a child's input).
  void reset() noexcept;

private:
  int fd_ = -1;
};

/// A pipe, both ends close-on-exec.
struct pipe_ends {
  descriptor read, write;
};
/// Throws error (CUDA_ERROR_OPERATING_SYSTEM, under `api`) "WHAT: REASON" when there is none.
pipe_ends make_pipe(const char *api, const std::string &what = "pipe");
/// A file under /tmp, already unlinked, open for reading and writing (close-on-exec): for a
/// child's output to read back with contents(). Throws error as make_pipe does.
descriptor scratch_file(const char *api);
/// All that the file `fd` holds, from its start (its offset stays where it was).
std::string contents(int fd);

/// One step of reading `fd` before `deadline`: appends what one read gives to `into`.
enum class read_step { data, end_of_file, deadline };
read_step read_before(int fd, std::string &into, std::chrono::steady_clock::time_point deadline);

/// Writes all of `text` to `fd` (retrying short and interrupted writes); false when it could not.
bool write_all(int fd, std::string_view text);

} // namespace greenctx::cli::process
