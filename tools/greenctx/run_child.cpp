#include "run_child.hpp"

#include <greenctx/greenctx.hpp>

#include <nlohmann/json.hpp>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace greenctx::cli {
namespace {

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

// The child's pid, for the signal forwarder.
volatile sig_atomic_t child_pid = 0;

void forward(int sig) {
  if (child_pid > 0)
    kill(child_pid, sig);
}

constexpr int forwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

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
                        "--sms " + std::to_string(c.sms) + " is not a size a split gives (" +
                            r.explanation() +
                            "); valid counts: " + valid_sizes_summary(all.sm_count(), g));
  return got;
}

std::string preload_library() {
  if (const char *env = std::getenv("GREENCTX_PRELOAD"); env && *env) {
    if (!is_executable_file(env) && access(env, R_OK) != 0)
      throw error(CUDA_ERROR_FILE_NOT_FOUND, "greenctx run",
                  std::string("GREENCTX_PRELOAD=") + env + " cannot be read");
    return env;
  }
  const std::string here = directory_of_self();
  for (const std::string &candidate :
       {here + "/libgreenctx_preload.so", here + "/../lib/libgreenctx_preload.so",
        here + "/../preload/libgreenctx_preload.so"})
    if (access(candidate.c_str(), R_OK) == 0)
      return candidate;
  throw error(CUDA_ERROR_FILE_NOT_FOUND, "greenctx run",
              "libgreenctx_preload.so was not found beside " + here +
                  "/greenctx or in ../lib: reinstall greenctx, or set GREENCTX_PRELOAD");
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

child_result run_child(const std::vector<std::string> &argv, const confinement &c) {
  const std::string program = find_program(argv.at(0));
  std::vector<std::string> env;
  for (char **e = environ; *e; ++e) {
    const std::string var = *e;
    if (c.sms && (var.rfind("LD_PRELOAD=", 0) == 0 || var.rfind("GREENCTX_RUN_", 0) == 0))
      continue;
    env.push_back(var);
  }
  std::string report;
  if (c.sms) {
    const char *existing = std::getenv("LD_PRELOAD");
    env.push_back("LD_PRELOAD=" + preload_library() +
                  (existing && *existing ? std::string(":") + existing : std::string()));
    env.push_back("GREENCTX_RUN_SMS=" + std::to_string(c.sms));
    env.push_back("GREENCTX_RUN_DEVICE=" + std::to_string(c.device));
    env.push_back("GREENCTX_RUN_FLAGS=" + std::to_string(c.ignore_coscheduling ? 1 : 0));
    char tmpl[] = "/tmp/greenctx-run-XXXXXX";
    const int fd = mkstemp(tmpl);
    if (fd < 0)
      throw error(CUDA_ERROR_OPERATING_SYSTEM, "greenctx run",
                  std::string("cannot create a report file: ") + std::strerror(errno));
    close(fd);
    report = tmpl;
    env.push_back("GREENCTX_RUN_REPORT=" + report);
  }
  std::vector<char *> cargv, cenv;
  for (const auto &a : argv)
    cargv.push_back(const_cast<char *>(a.c_str()));
  cargv.push_back(nullptr);
  for (const auto &e : env)
    cenv.push_back(const_cast<char *>(e.c_str()));
  cenv.push_back(nullptr);

  struct sigaction fwd {
  }, old[std::size(forwarded)];
  fwd.sa_handler = forward;
  sigemptyset(&fwd.sa_mask);
  for (std::size_t i = 0; i < std::size(forwarded); ++i)
    sigaction(forwarded[i], &fwd, &old[i]);

  const auto start = std::chrono::steady_clock::now();
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, program.c_str(), nullptr, nullptr, cargv.data(), cenv.data());
  child_result out;
  if (rc == 0) {
    child_pid = pid;
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    child_pid = 0;
    out.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (WIFSIGNALED(status))
      out.signal = WTERMSIG(status);
    else
      out.exit_code = WEXITSTATUS(status);
  }
  for (std::size_t i = 0; i < std::size(forwarded); ++i)
    sigaction(forwarded[i], &old[i], nullptr);
  if (rc != 0) {
    if (!report.empty())
      unlink(report.c_str());
    throw request_error(CUDA_ERROR_INVALID_VALUE, "greenctx run",
                        "cannot start '" + program + "': " + std::strerror(rc));
  }

  if (!report.empty()) {
    std::ifstream in(report);
    std::string line;
    std::set<std::string> problems;
    while (std::getline(in, line)) {
      const auto j = nlohmann::json::parse(line, nullptr, false);
      if (j.is_discarded())
        continue;
      out.cuda_used = out.cuda_used || j.value("cuda_used", false);
      out.confined_threads += j.value("confined_threads", 0u);
      for (const auto &p : j.value("problems", nlohmann::json::array()))
        problems.insert(p.get<std::string>());
    }
    out.problems.assign(problems.begin(), problems.end());
    unlink(report.c_str());
  }
  return out;
}

void exit_like(const child_result &r) {
  std::fflush(stdout);
  std::fflush(stderr);
  if (r.signal) {
    std::signal(r.signal, SIG_DFL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, r.signal);
    sigprocmask(SIG_UNBLOCK, &set, nullptr);
    raise(r.signal);
  }
  std::_Exit(r.signal ? 128 + r.signal : r.exit_code);
}

} // namespace greenctx::cli
