#include "run_child.hpp"
#include "child_tee.hpp"
#include "cli_common.hpp"
#include "scale/records.hpp"

#include <run_protocol.hpp>

#include <greenctx/greenctx.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <iterator>
#include <string_view>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace greenctx::cli {
namespace {

namespace protocol = run_protocol;

bool is_executable_file(const std::string &path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

// The variables the CLI sets for the program.
constexpr const char *protocol_names[] = {
    protocol::env_sms,    protocol::env_devices, protocol::env_split_flags,
    protocol::env_strict, protocol::env_report,  protocol::env_root_pid,
    protocol::env_quiet,  protocol::env_measure, protocol::env_real_sm_count,
    protocol::env_split,  protocol::env_piece};

// Their common prefix: any variable that starts with it belongs to the protocol (or to an older
// greenctx's), so a stale one is removed before the CLI sets its own.
std::string_view protocol_prefix() {
  std::string_view prefix = protocol_names[0];
  for (const std::string_view name : protocol_names) {
    std::size_t n = 0;
    while (n < prefix.size() && n < name.size() && prefix[n] == name[n])
      ++n;
    prefix = prefix.substr(0, n);
  }
  return prefix;
}

// The child's pid, for the signal forwarder.
volatile sig_atomic_t child_pid = 0;

void forward(int sig, siginfo_t *info, void *) {
  // A terminal (Ctrl-C, Ctrl-\, hang-up) signals its whole foreground process group, the child
  // included: passing it on would deliver it twice.
  if (info && info->si_code == SI_KERNEL)
    return;
  if (const pid_t pid = child_pid; pid > 0)
    kill(pid, sig);
}

constexpr int forwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

// The arguments for /bin/sh running `program` as a script, as execvp does for a file without a
// "#!" line that the kernel refuses with ENOEXEC.
std::vector<std::string> shell_argv(const std::string &program,
                                    const std::vector<std::string> &argv) {
  std::vector<std::string> out{"/bin/sh", program};
  out.insert(out.end(), argv.begin() + 1, argv.end());
  return out;
}

std::vector<char *> c_strings(const std::vector<std::string> &strings) {
  std::vector<char *> out;
  for (const auto &s : strings)
    out.push_back(const_cast<char *>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

} // namespace

unsigned check_confinement(const confinement &c) {
  constexpr const char *api = "greenctx run";
  const device dev(c.device);
  const sm_resource all = dev.sms();
  const split_flags flags =
      c.ignore_coscheduling ? split_flags::ignore_sm_coscheduling : split_flags::none;
  const granularity g = effective_granularity(all.grain(), all.compute_capability_major(), flags);
  if (c.sms == 0 || c.sms > all.sm_count())
    throw request_error(CUDA_ERROR_INVALID_VALUE, api,
                        "--sms " + std::to_string(c.sms) + ": device " + std::to_string(c.device) +
                            " has " + std::to_string(all.sm_count()) +
                            " SMs; valid counts: " + valid_sizes_summary(all.sm_count(), g));
  const split_result r = split_by_count(all, 1, c.sms, flags);
  const unsigned got = r.groups.empty() ? 0 : r.groups.front().sm_count();
  if (got != c.sms)
    throw request_error(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION, api,
                        "--sms " + std::to_string(c.sms) + " is not a size a split of device " +
                            std::to_string(c.device) + " gives (" + r.explanation() +
                            "); valid counts: " + valid_sizes_summary(all.sm_count(), g));
  return got;
}

int check_in_child(const std::function<void()> &check) {
  struct sigaction dfl {
  }, old_chld{};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(SIGCHLD, &dfl, &old_chld); // waitpid fails when SIGCHLD is ignored
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = fork();
  if (pid == 0) {
    int code = exit_ok;
    try {
      check();
    } catch (const error &e) {
      print_error(e.what());
      code = exit_code_for(e);
    } catch (const std::exception &e) {
      print_error(std::string("unexpected error: ") + e.what());
      code = exit_cuda_error;
    }
    std::fflush(stderr);
    std::_Exit(code);
  }
  const int fork_errno = errno;
  int status = 0;
  pid_t waited = -1;
  if (pid > 0)
    while ((waited = waitpid(pid, &status, 0)) < 0 && errno == EINTR) {
    }
  const int wait_errno = errno;
  sigaction(SIGCHLD, &old_chld, nullptr);
  if (pid < 0)
    throw error(CUDA_ERROR_OPERATING_SYSTEM, "greenctx run",
                std::string("cannot fork to check the request: ") + std::strerror(fork_errno));
  if (waited < 0)
    throw error(CUDA_ERROR_OPERATING_SYSTEM, "greenctx run",
                std::string("cannot wait for the check of the request: ") +
                    std::strerror(wait_errno));
  if (WIFEXITED(status))
    return WEXITSTATUS(status);
  print_error("the check before running (loading the preload library, asking the driver) ended "
              "with " +
              scale::describe_end(0, WTERMSIG(status)));
  return exit_cuda_error;
}

std::string find_program(const std::string &program) {
  constexpr const char *api = "greenctx run";
  if (program.empty())
    throw request_error(CUDA_ERROR_INVALID_VALUE, api, "no program given after --");
  if (program.find('/') != std::string::npos) {
    if (!is_executable_file(program))
      throw request_error(CUDA_ERROR_INVALID_VALUE, api,
                          "'" + program + "' is not an executable file");
    return program;
  }
  const char *path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= dirs.size()) {
    const std::size_t end = std::min(dirs.find(':', start), dirs.size());
    const std::string dir = dirs.substr(start, end - start);
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + program;
    if (is_executable_file(candidate))
      return candidate;
    start = end + 1;
  }
  throw request_error(CUDA_ERROR_INVALID_VALUE, api,
                      "program '" + program + "' was not found in PATH");
}

int exec_program(const std::string &program, const std::vector<std::string> &argv) {
  const std::vector<char *> cargv = c_strings(argv);
  execv(program.c_str(), cargv.data());
  if (errno != ENOEXEC)
    return errno;
  const std::vector<std::string> sh = shell_argv(program, argv);
  const std::vector<char *> sh_argv = c_strings(sh);
  execv(sh_argv[0], sh_argv.data());
  return ENOEXEC; // what the program itself got: not an executable format
}

std::vector<std::string> protocol_variables_in_environment() {
  const std::string_view prefix = protocol_prefix();
  std::vector<std::string> names;
  for (char **e = environ; *e; ++e) {
    const std::string_view var = *e;
    if (var.starts_with(prefix))
      names.emplace_back(var.substr(0, var.find('=')));
  }
  return names;
}

child_result run_child(const std::vector<std::string> &argv, const confinement &c,
                       child_output output) {
  constexpr const char *api = "greenctx scale";
  const std::string program = find_program(argv.at(0));
  const std::string_view prefix = protocol_prefix();
  const bool preload = c.sms || c.measure;
  std::vector<std::string> env;
  for (char **e = environ; *e; ++e) {
    const std::string_view var = *e;
    if (var.starts_with(prefix) || (preload && var.starts_with("LD_PRELOAD=")))
      continue;
    env.emplace_back(var);
  }
  std::string report;
  if (preload) {
    const char *existing = std::getenv("LD_PRELOAD");
    env.push_back("LD_PRELOAD=" + preload_library() +
                  (existing && *existing ? std::string(":") + existing : std::string()));
    const auto set = [&](const char *name, const std::string &value) {
      env.push_back(std::string(name) + "=" + value);
    };
    if (c.sms) {
      const split_flags flags =
          c.ignore_coscheduling ? split_flags::ignore_sm_coscheduling : split_flags::none;
      set(protocol::env_sms, std::to_string(c.sms));
      set(protocol::env_devices, std::to_string(c.device));
      set(protocol::env_split_flags, std::to_string(static_cast<unsigned>(flags)));
      if (c.real_sm_count)
        set(protocol::env_real_sm_count, "1");
    }
    if (c.measure)
      set(protocol::env_measure, "1");
    report = make_report_file();
    set(protocol::env_report, report);
  }
  // Everything the child needs is allocated before fork: between fork and execve it only makes
  // async-signal-safe calls (greenctx may have driver threads by now).
  const std::vector<std::string> sh = shell_argv(program, argv);
  const std::vector<char *> cargv = c_strings(argv), sh_argv = c_strings(sh), cenv = c_strings(env);
  const bool tee = output == child_output::tee;
  int exec_pipe[2] = {-1, -1}, out_pipe[2] = {-1, -1};
  if (pipe2(exec_pipe, O_CLOEXEC) != 0 || (tee && pipe2(out_pipe, O_CLOEXEC) != 0)) {
    const int e = errno;
    for (int fd : {exec_pipe[0], exec_pipe[1]})
      if (fd >= 0)
        close(fd);
    if (!report.empty())
      unlink(report.c_str());
    throw error(CUDA_ERROR_OPERATING_SYSTEM, api,
                std::string("cannot start the program: pipe: ") + std::strerror(e));
  }

  // SIGCHLD at its default while waiting; forwarders for the signals greenctx did not inherit as
  // ignored. They are blocked around fork, so that none arrives before child_pid is set.
  struct sigaction dfl {
  }, fwd{}, old_chld{}, old[std::size(forwarded)]{};
  bool installed[std::size(forwarded)] = {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  fwd.sa_sigaction = forward;
  fwd.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&fwd.sa_mask);
  sigset_t block, old_mask;
  sigemptyset(&block);
  for (std::size_t i = 0; i < std::size(forwarded); ++i) {
    sigaction(forwarded[i], nullptr, &old[i]);
    installed[i] = (old[i].sa_flags & SA_SIGINFO) || old[i].sa_handler != SIG_IGN;
    if (installed[i]) {
      sigaddset(&block, forwarded[i]);
      sigaddset(&fwd.sa_mask, forwarded[i]);
    }
  }
  sigprocmask(SIG_BLOCK, &block, &old_mask);
  sigaction(SIGCHLD, &dfl, &old_chld);
  for (std::size_t i = 0; i < std::size(forwarded); ++i)
    if (installed[i])
      sigaction(forwarded[i], &fwd, nullptr);

  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid == 0) {
    // The child: greenctx's own dispositions and mask back, then the program.
    sigaction(SIGCHLD, &old_chld, nullptr);
    for (std::size_t i = 0; i < std::size(forwarded); ++i)
      if (installed[i])
        sigaction(forwarded[i], &old[i], nullptr);
    sigprocmask(SIG_SETMASK, &old_mask, nullptr);
    if (tee) { // stdout becomes the pipe's write end (dup2 clears O_CLOEXEC; fcntl when it is 1)
      if (out_pipe[1] == STDOUT_FILENO)
        fcntl(STDOUT_FILENO, F_SETFD, 0);
      else
        dup2(out_pipe[1], STDOUT_FILENO);
    }
    execve(program.c_str(), cargv.data(), cenv.data());
    const int e = errno;
    if (e == ENOEXEC)
      execve(sh_argv[0], sh_argv.data(), cenv.data());
    [[maybe_unused]] const ssize_t n = write(exec_pipe[1], &e, sizeof e);
    _exit(127);
  }
  const int fork_errno = errno;
  close(exec_pipe[1]);
  if (tee)
    close(out_pipe[1]);
  if (pid > 0)
    child_pid = pid;
  sigprocmask(SIG_SETMASK, &old_mask, nullptr);

  int exec_errno = 0;
  if (pid > 0) {
    ssize_t n = 0;
    while ((n = read(exec_pipe[0], &exec_errno, sizeof exec_errno)) < 0 && errno == EINTR) {
    }
    if (n != static_cast<ssize_t>(sizeof exec_errno))
      exec_errno = 0; // closed by execve: the program runs
  }
  close(exec_pipe[0]);
  child_result out;
  int status = 0;
  bool reaped = false;
  if (tee) {
    if (pid > 0)
      reaped = tee_child_output(out_pipe[0], pid, out.out, status);
    close(out_pipe[0]);
  }
  if (pid > 0 && !reaped)
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  child_pid = 0;
  out.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (std::size_t i = 0; i < std::size(forwarded); ++i)
    if (installed[i])
      sigaction(forwarded[i], &old[i], nullptr);
  sigaction(SIGCHLD, &old_chld, nullptr);

  if (pid < 0 || exec_errno != 0) {
    if (!report.empty())
      unlink(report.c_str());
    throw error(CUDA_ERROR_OPERATING_SYSTEM, api,
                "cannot start '" + program +
                    "': " + std::strerror(pid < 0 ? fork_errno : exec_errno));
  }
  if (WIFSIGNALED(status))
    out.signal = WTERMSIG(status);
  else
    out.exit_code = WEXITSTATUS(status);
  if (!report.empty()) {
    out.report = read_report(report);
    unlink(report.c_str());
  }
  return out;
}

} // namespace greenctx::cli
