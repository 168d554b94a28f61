// SPDX-License-Identifier: Apache-2.0
#include "common/process.hpp"

#include <greenctx/plan/error.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <iterator>
#include <stdexcept>
#include <poll.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <utility>

extern char **environ;

namespace greenctx::cli::process {
namespace {

// ---- SIGCHLD ------------------------------------------------------------------------------------

unsigned sigchld_guards = 0;
struct sigaction greenctx_sigchld {};

void acquire_sigchld() {
  if (sigchld_guards++ > 0)
    return;
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(SIGCHLD, &dfl, &greenctx_sigchld);
}

void release_sigchld() {
  if (sigchld_guards > 0 && --sigchld_guards == 0)
    sigaction(SIGCHLD, &greenctx_sigchld, nullptr);
}

// ---- signal forwarding --------------------------------------------------------------------------

constexpr int forwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

// The one forwarding's state (the handler can reach no object).
volatile sig_atomic_t forward_pid = 0;
bool forwarding_live = false;
struct sigaction forward_old[std::size(forwarded)]{};
bool forward_installed[std::size(forwarded)] = {};
sigset_t forward_old_mask;

void forward(int sig, siginfo_t *info, void *) {
  if (info && info->si_code == SI_KERNEL)
    return; // a terminal's signal: the child, in the same process group, has it already
  if (const pid_t pid = forward_pid; pid > 0)
    kill(pid, sig);
}

// ---- starting programs --------------------------------------------------------------------------

bool is_executable_file(const std::string &path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

// The arguments for /bin/sh running `program` as a script, as execvp does for a file without a
// "#!" line that the kernel refuses with ENOEXEC.
std::vector<std::string> shell_argv(const std::string &program,
                                    const std::vector<std::string> &argv) {
  std::vector<std::string> out{"/bin/sh", program};
  if (!argv.empty())
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

// In the child: `fd` in place of `target` (dup2 clears close-on-exec; fcntl when they are equal).
void put_in_place(int fd, int target) noexcept {
  if (fd < 0)
    return;
  if (fd == target)
    fcntl(target, F_SETFD, 0);
  else
    dup2(fd, target);
}

void flush_standard_streams() {
  std::fflush(stdout);
  std::fflush(stderr);
}

} // namespace

// ---- end_status ---------------------------------------------------------------------------------

end_status end_status::from_wait_status(int status) {
  end_status e;
  if (WIFSIGNALED(status))
    e.signal = WTERMSIG(status);
  else
    e.exit_code = WEXITSTATUS(status);
  return e;
}

std::string describe(const end_status &end) {
  if (end.signal == 0)
    return fmt::format("exit {}", end.exit_code);
  static const std::pair<int, const char *> names[] = {
      {SIGHUP, "SIGHUP"},   {SIGINT, "SIGINT"},   {SIGQUIT, "SIGQUIT"}, {SIGILL, "SIGILL"},
      {SIGTRAP, "SIGTRAP"}, {SIGABRT, "SIGABRT"}, {SIGBUS, "SIGBUS"},   {SIGFPE, "SIGFPE"},
      {SIGKILL, "SIGKILL"}, {SIGSEGV, "SIGSEGV"}, {SIGPIPE, "SIGPIPE"}, {SIGALRM, "SIGALRM"},
      {SIGTERM, "SIGTERM"}, {SIGXCPU, "SIGXCPU"}, {SIGSYS, "SIGSYS"}};
  for (const auto &[number, name] : names)
    if (number == end.signal)
      return fmt::format("signal {} ({})", end.signal, name);
  return fmt::format("signal {}", end.signal);
}

// ---- sigchld_default ----------------------------------------------------------------------------

sigchld_default::sigchld_default() {
  acquire_sigchld();
}
sigchld_default::~sigchld_default() {
  if (held_)
    release_sigchld();
}
sigchld_default::sigchld_default(sigchld_default &&other) noexcept
    : held_(std::exchange(other.held_, false)) {
}
sigchld_default &sigchld_default::operator=(sigchld_default &&other) noexcept {
  sigchld_default tmp(std::move(other));
  std::swap(held_, tmp.held_);
  return *this;
}
void sigchld_default::restore_in_child() noexcept {
  if (sigchld_guards > 0)
    sigaction(SIGCHLD, &greenctx_sigchld, nullptr);
}

// ---- signal_forwarding --------------------------------------------------------------------------

signal_forwarding::signal_forwarding() {
  if (forwarding_live)
    throw std::logic_error("greenctx: a second signal forwarding while one is active");
  forwarding_live = true;
  struct sigaction fwd {};
  fwd.sa_sigaction = forward;
  fwd.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&fwd.sa_mask);
  sigset_t block;
  sigemptyset(&block);
  for (std::size_t i = 0; i < std::size(forwarded); ++i) {
    sigaction(forwarded[i], nullptr, &forward_old[i]);
    forward_installed[i] =
        (forward_old[i].sa_flags & SA_SIGINFO) || forward_old[i].sa_handler != SIG_IGN;
    if (forward_installed[i]) {
      sigaddset(&block, forwarded[i]);
      sigaddset(&fwd.sa_mask, forwarded[i]);
    }
  }
  sigprocmask(SIG_BLOCK, &block, &forward_old_mask);
  for (std::size_t i = 0; i < std::size(forwarded); ++i)
    if (forward_installed[i])
      sigaction(forwarded[i], &fwd, nullptr);
}

signal_forwarding::~signal_forwarding() {
  forward_pid = 0;
  for (std::size_t i = 0; i < std::size(forwarded); ++i)
    if (forward_installed[i])
      sigaction(forwarded[i], &forward_old[i], nullptr);
  sigprocmask(SIG_SETMASK, &forward_old_mask, nullptr);
  forwarding_live = false;
}

void signal_forwarding::forward_to(pid_t pid) {
  forward_pid = pid;
  sigprocmask(SIG_SETMASK, &forward_old_mask, nullptr);
}

void signal_forwarding::restore_in_child() const noexcept {
  for (std::size_t i = 0; i < std::size(forwarded); ++i)
    if (forward_installed[i])
      sigaction(forwarded[i], &forward_old[i], nullptr);
  sigprocmask(SIG_SETMASK, &forward_old_mask, nullptr);
}

// ---- child --------------------------------------------------------------------------------------

child::child(pid_t pid, sigchld_default guard) : pid_(pid), sigchld_(std::move(guard)) {
}

child::child(child &&other) noexcept
    : pid_(std::exchange(other.pid_, -1)), end_(std::exchange(other.end_, std::nullopt)),
      sigchld_(std::exchange(other.sigchld_, std::nullopt)) {
}

child &child::operator=(child &&other) noexcept {
  child tmp(std::move(other));
  std::swap(pid_, tmp.pid_);
  std::swap(end_, tmp.end_);
  std::swap(sigchld_, tmp.sigchld_);
  return *this;
}

child::~child() {
  if (pid_ > 0 && !end_) {
    kill(pid_, SIGKILL);
    wait();
  }
}

void child::reaped(int status) {
  end_ = end_status::from_wait_status(status);
  sigchld_.reset();
}

void child::lost() {
  end_ = end_status{.exit_code = 255};
  sigchld_.reset();
}

std::optional<end_status> child::poll() {
  if (pid_ <= 0 || end_)
    return end_;
  int status = 0;
  pid_t w;
  while ((w = waitpid(pid_, &status, WNOHANG)) < 0 && errno == EINTR) {
  }
  if (w == pid_)
    reaped(status);
  else if (w < 0) // ECHILD: something else reaped it; it ended, how is not known
    lost();
  return end_;
}

end_status child::wait() {
  if (pid_ <= 0 || end_)
    return end_.value_or(end_status{});
  int status = 0;
  pid_t w;
  while ((w = waitpid(pid_, &status, 0)) < 0 && errno == EINTR) {
  }
  if (w == pid_)
    reaped(status);
  else
    lost();
  return *end_;
}

std::optional<end_status> child::wait_for(std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (;;) {
    if (poll())
      return end_;
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline)
      return std::nullopt;
    std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(
        deadline - now, std::chrono::milliseconds(10)));
  }
}

end_status child::wait_or_kill(std::chrono::milliseconds limit) {
  if (const std::optional<end_status> e = wait_for(limit))
    return *e;
  signal(SIGKILL);
  end_status e = wait();
  e.timed_out = true;
  end_->timed_out = true;
  return e;
}

void child::signal(int sig) const {
  if (pid_ > 0 && !end_)
    kill(pid_, sig);
}

// ---- starting
// ------------------------------------------------------------------------------------

std::vector<std::string> environment_with(const std::vector<std::string> &assignments) {
  const auto name_of = [](std::string_view var) { return var.substr(0, var.find('=')); };
  std::vector<std::string> env;
  for (char **e = environ; *e; ++e) {
    const std::string_view var = *e;
    const bool replaced =
        std::any_of(assignments.begin(), assignments.end(),
                    [&](const std::string &a) { return name_of(a) == name_of(var); });
    if (!replaced)
      env.emplace_back(var);
  }
  env.insert(env.end(), assignments.begin(), assignments.end());
  return env;
}

child spawn(const command &cmd, const char *api) {
  // Everything the child needs is allocated before fork.
  const std::vector<std::string> sh = shell_argv(cmd.program, cmd.argv);
  const std::vector<char *> argv = c_strings(cmd.argv), sh_argv = c_strings(sh);
  const std::vector<char *> env =
      cmd.environment ? c_strings(*cmd.environment) : std::vector<char *>();
  char *const *envp = cmd.environment ? env.data() : environ;
  const auto cannot_start = [&](int e) {
    return error(CUDA_ERROR_OPERATING_SYSTEM, api,
                 "cannot start '" + cmd.program + "': " + std::strerror(e));
  };
  pipe_ends exec_pipe = make_pipe(api, "cannot start '" + cmd.program + "'");
  sigchld_default guard;
  flush_standard_streams();
  const pid_t pid = fork();
  if (pid == 0) {
    sigchld_default::restore_in_child();
    if (cmd.forwarding)
      cmd.forwarding->restore_in_child();
    put_in_place(cmd.io.in, STDIN_FILENO);
    put_in_place(cmd.io.out, STDOUT_FILENO);
    put_in_place(cmd.io.err, STDERR_FILENO);
    execve(cmd.program.c_str(), argv.data(), envp);
    int e = errno;
    if (e == ENOEXEC) {
      execve(sh_argv[0], sh_argv.data(), envp);
      e = errno;
    }
    [[maybe_unused]] const ssize_t n = write(exec_pipe.write.get(), &e, sizeof e);
    _exit(127);
  }
  const int fork_errno = errno;
  exec_pipe.write.reset();
  if (pid < 0)
    throw cannot_start(fork_errno);
  child c(pid, std::move(guard));
  if (cmd.forwarding)
    cmd.forwarding->forward_to(pid);
  int exec_errno = 0;
  ssize_t n = 0;
  while ((n = read(exec_pipe.read.get(), &exec_errno, sizeof exec_errno)) < 0 && errno == EINTR) {
  }
  if (n == static_cast<ssize_t>(sizeof exec_errno) && exec_errno != 0) {
    c.wait();
    throw cannot_start(exec_errno);
  }
  return c; // the pipe closed on execve: the program runs
}

child fork_call(const std::function<int()> &body, const char *api) {
  sigchld_default guard;
  flush_standard_streams();
  const pid_t pid = fork();
  if (pid == 0) {
    int code = 0;
    try {
      code = body();
    } catch (...) {
      code = 125;
    }
    flush_standard_streams();
    std::_Exit(code);
  }
  if (pid < 0)
    throw error(CUDA_ERROR_OPERATING_SYSTEM, api,
                std::string("cannot fork: ") + std::strerror(errno));
  return child(pid, std::move(guard));
}

std::string find_program(const std::string &program, const char *api) {
  if (program.empty())
    throw request_error(CUDA_ERROR_INVALID_VALUE, api, "no program given after --");
  if (program.find('/') != std::string::npos) {
    if (!is_executable_file(program))
      throw request_error(CUDA_ERROR_INVALID_VALUE, api,
                          "'" + program + "' is not an executable file");
    return program;
  }
  const char *path = std::getenv("PATH");
  const std::string dirs = path ? path : "/usr/bin:/bin";
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

// ---- descriptors and pipes ----------------------------------------------------------------------

descriptor &descriptor::operator=(descriptor &&other) noexcept {
  if (this != &other) {
    reset();
    fd_ = other.release();
  }
  return *this;
}

int descriptor::release() noexcept {
  return std::exchange(fd_, -1);
}

void descriptor::reset() noexcept {
  if (fd_ >= 0)
    close(std::exchange(fd_, -1));
}

pipe_ends make_pipe(const char *api, const std::string &what) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0)
    throw error(CUDA_ERROR_OPERATING_SYSTEM, api, what + ": " + std::strerror(errno));
  return {descriptor(fds[0]), descriptor(fds[1])};
}

descriptor scratch_file(const char *api) {
  char path[] = "/tmp/greenctx-XXXXXX";
  descriptor fd(mkostemp(path, O_CLOEXEC));
  if (fd.get() < 0)
    throw error(CUDA_ERROR_OPERATING_SYSTEM, api,
                std::string("cannot make a file in /tmp: ") + std::strerror(errno));
  unlink(path);
  return fd;
}

std::string contents(int fd) {
  std::string out;
  char buf[65536];
  for (ssize_t n; (n = pread(fd, buf, sizeof buf, static_cast<off_t>(out.size()))) != 0;) {
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  return out;
}

read_step read_before(int fd, std::string &into, std::chrono::steady_clock::time_point deadline) {
  for (;;) {
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline)
      return read_step::deadline;
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - now);
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), 1000)));
    if (ready <= 0)
      continue; // interrupted, or a second went by: look at the clock again
    char buf[65536];
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
      continue;
    if (n <= 0)
      return read_step::end_of_file;
    into.append(buf, static_cast<std::size_t>(n));
    return read_step::data;
  }
}

bool write_all(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    text.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

} // namespace greenctx::cli::process
