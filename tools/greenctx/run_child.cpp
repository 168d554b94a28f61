#include "run_child.hpp"
#include "cli_common.hpp"
#include "scale/records.hpp"

#include <run_protocol.hpp>

#include <greenctx/greenctx.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <fstream>
#include <iterator>
#include <optional>
#include <set>
#include <string_view>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace greenctx::cli {
namespace {

namespace protocol = run_protocol;

std::string directory_of_self() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0)
    return ".";
  std::string path(buf, static_cast<std::size_t>(n));
  return path.substr(0, path.find_last_of('/'));
}

bool is_executable_file(const std::string &path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

// The variables the CLI sets for the program.
constexpr const char *protocol_names[] = {
    protocol::env_sms,    protocol::env_devices,  protocol::env_split_flags, protocol::env_strict,
    protocol::env_report, protocol::env_root_pid, protocol::env_quiet};

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

std::string preload_library() {
  constexpr const char *api = "greenctx run";
  const auto usable_in_ld_preload = [&](const std::string &path, const std::string &what) {
    if (path.find_first_of(" :") != std::string::npos)
      throw request_error(CUDA_ERROR_INVALID_VALUE, api,
                          what + " '" + path +
                              "' contains a space or a colon, and the loader splits LD_PRELOAD on "
                              "both: copy or link the library to a path without them (e.g. "
                              "/tmp/libgreenctx_preload.so) and set " +
                              protocol::env_preload + " to it");
  };
  if (const char *env = std::getenv(protocol::env_preload); env && *env) {
    const std::string given = env;
    usable_in_ld_preload(given, protocol::env_preload);
    if (given.find('/') == std::string::npos)
      throw request_error(CUDA_ERROR_INVALID_VALUE, api,
                          std::string(protocol::env_preload) + "=" + given +
                              ": give a path with its folder (./" + given +
                              " or an absolute path): a bare name would be looked up in the "
                              "loader's folders, not here");
    // Absolute, so that the program finds it wherever it changes to. A path that does not resolve
    // is left to check_preload_loads, which says why with the loader's words.
    char resolved[PATH_MAX];
    if (!realpath(given.c_str(), resolved))
      return given;
    usable_in_ld_preload(resolved, std::string(protocol::env_preload) + " resolves to");
    return resolved;
  }
  const std::string here = directory_of_self();
  for (const std::string &candidate :
       {here + "/libgreenctx_preload.so", here + "/../lib/libgreenctx_preload.so",
        here + "/../preload/libgreenctx_preload.so"}) {
    char resolved[PATH_MAX];
    if (access(candidate.c_str(), R_OK) == 0 && realpath(candidate.c_str(), resolved)) {
      usable_in_ld_preload(resolved, "the preload library");
      return resolved;
    }
  }
  throw error(CUDA_ERROR_NOT_SUPPORTED, api,
              "libgreenctx_preload.so, which greenctx run and scale need, was not found beside " +
                  here + "/greenctx, in ../lib or in ../preload: reinstall greenctx, or set " +
                  protocol::env_preload + " to the library");
}

void check_preload_loads(const std::string &path) {
  dlerror();
  void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle) {
    dlclose(handle);
    return;
  }
  const char *why = dlerror();
  const std::string loader = why ? why : "dlopen failed";
  if (const char *env = std::getenv(protocol::env_preload); env && *env) {
    struct stat st {};
    const bool folder = stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
    throw request_error(
        CUDA_ERROR_INVALID_VALUE, "greenctx run",
        std::string(protocol::env_preload) + "=" + env + " cannot be loaded (" + loader + "): " +
            (folder ? "it is a folder: point it at the libgreenctx_preload.so inside"
                    : "point it at a libgreenctx_preload.so built for this machine, or unset it "
                      "to use the one installed with greenctx"));
  }
  throw error(CUDA_ERROR_NOT_SUPPORTED, "greenctx run",
              "the preload library " + path + " cannot be loaded (" + loader +
                  "): reinstall greenctx, or set " + protocol::env_preload +
                  " to a working build of the library");
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

namespace {

// Report files of runs whose first process is gone: `greenctx run` execs the program, and its
// last process removes the report at exit, but not when it ends with _exit (as sh does) or by a
// signal. The pid in the name says whose it was; only this user's files are touched.
void remove_stale_reports(const std::string &dir) {
  DIR *d = opendir(dir.c_str());
  if (!d)
    return;
  constexpr std::string_view prefix = "greenctx-run-";
  while (const dirent *e = readdir(d)) {
    const std::string_view name = e->d_name;
    if (name.substr(0, prefix.size()) != prefix)
      continue;
    const std::string_view rest = name.substr(prefix.size());
    const std::size_t dash = rest.find('-');
    const std::optional<unsigned long long> pid =
        dash == std::string_view::npos ? std::nullopt : read_decimal(rest.substr(0, dash), INT_MAX);
    if (!pid || static_cast<pid_t>(*pid) == getpid())
      continue;
    const std::string path = dir + "/" + std::string(name);
    struct stat st {};
    if (lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
        kill(static_cast<pid_t>(*pid), 0) != 0 && errno == ESRCH)
      unlink(path.c_str());
  }
  closedir(d);
}

} // namespace

std::string make_report_file() {
  const char *tmpdir = std::getenv("TMPDIR");
  const std::string dir = tmpdir && *tmpdir ? tmpdir : "/tmp";
  remove_stale_reports(dir);
  std::string path = dir + "/greenctx-run-" + std::to_string(getpid()) + "-XXXXXX";
  const int fd = mkstemp(path.data());
  if (fd < 0)
    throw error(CUDA_ERROR_OPERATING_SYSTEM, "greenctx run",
                "cannot create a report file " + path + ": " + std::strerror(errno) +
                    " (set TMPDIR to a writable folder)");
  close(fd);
  return path;
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

run_report read_report(const std::string &path) {
  run_report out;
  std::ifstream in(path);
  std::string line;
  std::set<int> devices;
  std::set<std::string> problems;
  const auto count = [](const nlohmann::json &j, const char *field) {
    const auto it = j.find(field);
    return it != j.end() && it->is_number_unsigned() ? it->get<unsigned>() : 0u;
  };
  while (std::getline(in, line)) {
    const auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object())
      continue;
    ++out.processes;
    if (const auto it = j.find(protocol::field_cuda_used); it != j.end() && it->is_boolean())
      out.cuda_used = out.cuda_used || it->get<bool>();
    if (const auto it = j.find(protocol::field_confined_devices); it != j.end() && it->is_array())
      for (const auto &d : *it)
        if (d.is_number_integer())
          devices.insert(d.get<int>());
    out.green_contexts += count(j, protocol::field_green_contexts);
    out.blocking_streams += count(j, protocol::field_blocking_streams);
    out.per_thread_streams += count(j, protocol::field_per_thread_streams);
    if (const auto it = j.find(protocol::field_problems); it != j.end() && it->is_array())
      for (const auto &p : *it)
        if (p.is_string())
          problems.insert(p.get<std::string>());
  }
  out.confined_devices.assign(devices.begin(), devices.end());
  out.problems.assign(problems.begin(), problems.end());
  return out;
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

child_result run_child(const std::vector<std::string> &argv, const confinement &c) {
  constexpr const char *api = "greenctx scale";
  const std::string program = find_program(argv.at(0));
  const std::string_view prefix = protocol_prefix();
  std::vector<std::string> env;
  for (char **e = environ; *e; ++e) {
    const std::string_view var = *e;
    if (var.starts_with(prefix) || (c.sms && var.starts_with("LD_PRELOAD=")))
      continue;
    env.emplace_back(var);
  }
  std::string report;
  if (c.sms) {
    const char *existing = std::getenv("LD_PRELOAD");
    env.push_back("LD_PRELOAD=" + preload_library() +
                  (existing && *existing ? std::string(":") + existing : std::string()));
    const auto set = [&](const char *name, const std::string &value) {
      env.push_back(std::string(name) + "=" + value);
    };
    const split_flags flags =
        c.ignore_coscheduling ? split_flags::ignore_sm_coscheduling : split_flags::none;
    set(protocol::env_sms, std::to_string(c.sms));
    set(protocol::env_devices, std::to_string(c.device));
    set(protocol::env_split_flags, std::to_string(static_cast<unsigned>(flags)));
    report = make_report_file();
    set(protocol::env_report, report);
  }
  // Everything the child needs is allocated before fork: between fork and execve it only makes
  // async-signal-safe calls (greenctx may have driver threads by now).
  const std::vector<std::string> sh = shell_argv(program, argv);
  const std::vector<char *> cargv = c_strings(argv), sh_argv = c_strings(sh), cenv = c_strings(env);
  int exec_pipe[2];
  if (pipe2(exec_pipe, O_CLOEXEC) != 0) {
    if (!report.empty())
      unlink(report.c_str());
    throw error(CUDA_ERROR_OPERATING_SYSTEM, api,
                std::string("cannot start the program: pipe: ") + std::strerror(errno));
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
    execve(program.c_str(), cargv.data(), cenv.data());
    const int e = errno;
    if (e == ENOEXEC)
      execve(sh_argv[0], sh_argv.data(), cenv.data());
    [[maybe_unused]] const ssize_t n = write(exec_pipe[1], &e, sizeof e);
    _exit(127);
  }
  const int fork_errno = errno;
  close(exec_pipe[1]);
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
  if (pid > 0)
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
