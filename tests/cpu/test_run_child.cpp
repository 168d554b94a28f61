// How greenctx scale starts a program (run_child) and reads what the preload library reported
// (read_report), without a GPU: an unconfined run (sms 0) needs neither the driver nor the library.
// The program's exit status and signals must be those of a plain run, whatever dispositions the
// process that started greenctx left it.
#include "run_child.hpp"
#include "text_checks.hpp"

#include <greenctx/plan/error.hpp>
#include <run_protocol.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace greenctx::cli {
namespace {

using greenctx_test::contains;
namespace fs = std::filesystem;

constexpr confinement unconfined{0, 0, false};

// Sets a signal's disposition for one test and puts the old one back.
class scoped_disposition {
public:
  scoped_disposition(int sig, void (*handler)(int)) : sig_(sig) {
    struct sigaction sa {};
    sa.sa_handler = handler;
    sigemptyset(&sa.sa_mask);
    sigaction(sig_, &sa, &old_);
  }
  ~scoped_disposition() { sigaction(sig_, &old_, nullptr); }
  scoped_disposition(const scoped_disposition &) = delete;
  scoped_disposition &operator=(const scoped_disposition &) = delete;

private:
  int sig_;
  struct sigaction old_ {};
};

// A folder of its own for one test, removed at the end.
struct temp_dir {
  fs::path path;
  temp_dir() {
    std::string tmpl = (fs::temp_directory_path() / "greenctx-test-XXXXXX").string();
    path = mkdtemp(tmpl.data());
  }
  ~temp_dir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

std::string read_file(const fs::path &p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// Runs `argv` with the test's stdout sent to `out` (the child writes there).
child_result run_into(const std::vector<std::string> &argv, const fs::path &out) {
  std::fflush(stdout);
  const int saved = dup(STDOUT_FILENO);
  const int fd = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  dup2(fd, STDOUT_FILENO);
  close(fd);
  child_result r;
  try {
    r = run_child(argv, unconfined);
  } catch (...) {
    dup2(saved, STDOUT_FILENO);
    close(saved);
    throw;
  }
  dup2(saved, STDOUT_FILENO);
  close(saved);
  return r;
}

// Whether `sig` is ignored according to a /proc/PID/status text ("SigIgn:\t0000000000000001").
bool ignored_in_status(const std::string &status, int sig) {
  const std::size_t at = status.find("SigIgn:");
  if (at == std::string::npos) {
    ADD_FAILURE() << "no SigIgn line in: " << status;
    return false;
  }
  const unsigned long long mask = std::stoull(status.substr(at + 7), nullptr, 16);
  return (mask >> (sig - 1)) & 1u;
}

TEST(RunChild, ExitCodePassesThrough) {
  const child_result r = run_child({"sh", "-c", "exit 7"}, unconfined);
  EXPECT_EQ(r.exit_code, 7);
  EXPECT_EQ(r.signal, 0);
  EXPECT_GT(r.wall_s, 0);
  EXPECT_EQ(r.report.processes, 0u) << "an unconfined run has no report";
}

TEST(RunChild, ExitCodePassesThroughWithSigchldIgnored) {
  // Children of a process that ignores SIGCHLD are reaped by the kernel: waitpid would fail.
  const scoped_disposition ignore(SIGCHLD, SIG_IGN);
  const child_result r = run_child({"sh", "-c", "exit 7"}, unconfined);
  EXPECT_EQ(r.exit_code, 7);
  EXPECT_EQ(r.signal, 0);
}

TEST(RunChild, TheChildGetsTheSigchldDispositionGreenctxInherited) {
  temp_dir dir;
  {
    const scoped_disposition ignore(SIGCHLD, SIG_IGN);
    const child_result r = run_into({"cat", "/proc/self/status"}, dir.path / "ignored");
    EXPECT_EQ(r.exit_code, 0);
  }
  EXPECT_TRUE(ignored_in_status(read_file(dir.path / "ignored"), SIGCHLD));
  const child_result r = run_into({"cat", "/proc/self/status"}, dir.path / "default");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_FALSE(ignored_in_status(read_file(dir.path / "default"), SIGCHLD));
}

TEST(RunChild, AnIgnoredSighupStaysIgnoredInTheChild) {
  // As under nohup: the child's own SIGHUP must not end it.
  const scoped_disposition ignore(SIGHUP, SIG_IGN);
  const child_result r = run_child({"sh", "-c", "kill -HUP $$; exit 3"}, unconfined);
  EXPECT_EQ(r.signal, 0) << "ended by signal " << r.signal;
  EXPECT_EQ(r.exit_code, 3);
  struct sigaction now {};
  sigaction(SIGHUP, nullptr, &now);
  EXPECT_EQ(now.sa_handler, SIG_IGN) << "greenctx's own disposition is put back";
}

TEST(RunChild, ASignalTheChildGetsEndsIt) {
  const child_result r = run_child({"sh", "-c", "kill -TERM $$"}, unconfined);
  EXPECT_EQ(r.signal, SIGTERM);
}

void no_op(int) {
}

TEST(RunChild, ForwardsASignalSentToGreenctx) {
  // The test stands in for greenctx: a SIGTERM sent to it with kill (not by a terminal) reaches
  // the child. Before the forwarder is installed and after it is removed, no_op catches it.
  const scoped_disposition catch_term(SIGTERM, no_op);
  std::atomic<bool> done{false};
  std::thread sender([&] {
    while (!done) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      kill(getpid(), SIGTERM);
    }
  });
  const child_result r = run_child({"sleep", "20"}, unconfined);
  done = true;
  sender.join();
  EXPECT_EQ(r.signal, SIGTERM);
  EXPECT_LT(r.wall_s, 15);
}

TEST(RunChild, AFileWithoutAHashBangLineRunsUnderSh) {
  temp_dir dir;
  const fs::path script = dir.path / "script";
  std::ofstream(script) << "exit 5\n";
  fs::permissions(script, fs::perms::owner_all);
  EXPECT_EQ(run_child({script.string()}, unconfined).exit_code, 5);
}

TEST(RunChild, AProgramThatCannotStartIsAnError) {
  temp_dir dir;
  const fs::path script = dir.path / "script";
  std::ofstream(script) << "#!/nonexistent/interpreter\n";
  fs::permissions(script, fs::perms::owner_all);
  try {
    run_child({script.string()}, unconfined);
    ADD_FAILURE() << "no error";
  } catch (const error &e) {
    EXPECT_TRUE(contains(e.what(), "cannot start")) << e.what();
  }
  EXPECT_THROW(run_child({"/nonexistent/program"}, unconfined), request_error);
}

TEST(RunChild, StaleProtocolVariablesDoNotReachTheChild) {
  setenv(run_protocol::env_sms, "99", 1);
  setenv(run_protocol::env_root_pid, "1", 1);
  const std::string test = std::string("test -z \"${") + run_protocol::env_sms + "+x}${" +
                           run_protocol::env_root_pid + "+x}\"";
  const child_result r = run_child({"sh", "-c", test}, unconfined);
  EXPECT_EQ(r.exit_code, 0) << "the child saw " << run_protocol::env_sms;
  const auto names = protocol_variables_in_environment();
  EXPECT_NE(std::find(names.begin(), names.end(), run_protocol::env_sms), names.end());
  unsetenv(run_protocol::env_sms);
  unsetenv(run_protocol::env_root_pid);
  EXPECT_TRUE(protocol_variables_in_environment().empty());
}

// ---- the report --------------------------------------------------------------------------------

TEST(RunReport, SumsTheProcessesAndSkipsWhatIsNotAReport) {
  temp_dir dir;
  const fs::path file = dir.path / "report";
  namespace p = run_protocol;
  std::ofstream(file) << "{\"" << p::field_pid << "\":10,\"" << p::field_cuda_used << "\":true,\""
                      << p::field_confined_devices << "\":[1,0],\"" << p::field_green_contexts
                      << "\":2,\"" << p::field_blocking_streams << "\":3,\""
                      << p::field_per_thread_streams << "\":1,\"" << p::field_problems
                      << "\":[\"b\",\"a\"]}\n"
                      << "not json\n"
                      << "[1,2]\n"
                      << "{\"" << p::field_pid << "\":11,\"" << p::field_cuda_used << "\":false,\""
                      << p::field_confined_devices << "\":[0],\"" << p::field_green_contexts
                      << "\":1,\"" << p::field_problems << "\":[\"a\"]}\n"
                      << "{\"" << p::field_pid << "\":12}\n";
  const run_report r = read_report(file.string());
  EXPECT_EQ(r.processes, 3u);
  EXPECT_TRUE(r.cuda_used);
  EXPECT_EQ(r.confined_devices, (std::vector<int>{0, 1}));
  EXPECT_EQ(r.green_contexts, 3u);
  EXPECT_EQ(r.blocking_streams, 3u);
  EXPECT_EQ(r.per_thread_streams, 1u);
  EXPECT_EQ(r.problems, (std::vector<std::string>{"a", "b"}));
}

TEST(RunReport, AMissingOrEmptyFileIsAnEmptyReport) {
  temp_dir dir;
  EXPECT_EQ(read_report((dir.path / "none").string()).processes, 0u);
  std::ofstream(dir.path / "empty").close();
  const run_report r = read_report((dir.path / "empty").string());
  EXPECT_FALSE(r.cuda_used);
  EXPECT_TRUE(r.confined_devices.empty());
}

TEST(RunReport, MakeReportFileCreatesAnEmptyFile) {
  temp_dir dir;
  const char *old = std::getenv("TMPDIR");
  const std::string saved = old ? old : "";
  setenv("TMPDIR", dir.path.c_str(), 1);
  const std::string path = make_report_file();
  old ? setenv("TMPDIR", saved.c_str(), 1) : unsetenv("TMPDIR");
  EXPECT_EQ(fs::path(path).parent_path(), dir.path);
  EXPECT_TRUE(fs::is_regular_file(path));
  EXPECT_EQ(fs::file_size(path), 0u);
}

TEST(RunReport, ReportsOfRunsThatAreGoneAreRemoved) {
  temp_dir dir;
  const pid_t gone = fork(); // a pid that is surely not in use once reaped
  if (gone == 0)
    _exit(0);
  ASSERT_GT(gone, 0);
  waitpid(gone, nullptr, 0);
  const fs::path stale = fs::path(dir.path) / ("greenctx-run-" + std::to_string(gone) + "-abc123");
  const fs::path alive =
      fs::path(dir.path) / ("greenctx-run-" + std::to_string(getppid()) + "-abc123");
  const fs::path other = fs::path(dir.path) / "greenctx-run-notapid";
  for (const auto &p : {stale, alive, other})
    std::ofstream(p) << "{}\n";
  const char *old = std::getenv("TMPDIR");
  const std::string saved = old ? old : "";
  setenv("TMPDIR", dir.path.c_str(), 1);
  const std::string path = make_report_file();
  old ? setenv("TMPDIR", saved.c_str(), 1) : unsetenv("TMPDIR");
  EXPECT_FALSE(fs::exists(stale)) << "its process is gone";
  EXPECT_TRUE(fs::exists(alive)) << "its process (our parent) is running";
  EXPECT_TRUE(fs::exists(other)) << "not a report name";
  EXPECT_NE(
      fs::path(path).filename().string().find("greenctx-run-" + std::to_string(getpid()) + "-"),
      std::string::npos);
}

} // namespace
} // namespace greenctx::cli
