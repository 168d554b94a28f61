// SPDX-License-Identifier: Apache-2.0
// How greenctx scale starts a program (run_child) and reads what the preload library reported
// (read_report), without a GPU: an unconfined run (sms 0) needs neither the driver nor the library.
// The program's exit status and signals must be those of a plain run, whatever dispositions the
// process that started greenctx left it.
#include "common/run_child.hpp"
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

// Runs `argv` with the test's stdout sent to `out` (the child, or greenctx's tee, writes there).
child_result run_into(const std::vector<std::string> &argv, const fs::path &out,
                      const confinement &c = unconfined,
                      child_output output = child_output::inherit) {
  std::fflush(stdout);
  const int saved = dup(STDOUT_FILENO);
  const int fd = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  dup2(fd, STDOUT_FILENO);
  close(fd);
  child_result r;
  try {
    r = run_child(argv, c, output);
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
  const char *stale[] = {run_protocol::env_sms, run_protocol::env_root_pid,
                         run_protocol::env_measure, run_protocol::env_real_sm_count};
  std::string test = "test -z \"";
  for (const char *name : stale) {
    setenv(name, "1", 1);
    test += std::string("${") + name + "+x}";
  }
  test += "\"";
  const child_result r = run_child({"sh", "-c", test}, unconfined);
  EXPECT_EQ(r.exit_code, 0) << "the child saw one of the protocol's variables";
  const auto names = protocol_variables_in_environment();
  for (const char *name : stale) {
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
    unsetenv(name);
  }
  EXPECT_TRUE(protocol_variables_in_environment().empty());
}

// ---- the program's stdout, teed (greenctx scale --metric regex: and json:) ----------------------

TEST(RunChild, TeeCopiesStdoutAndKeepsIt) {
  temp_dir dir;
  const child_result r = run_into({"sh", "-c", "echo one; echo two >&2; printf 'three'; exit 4"},
                                  dir.path / "out", unconfined, child_output::tee);
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_EQ(r.out, "one\nthree") << "stdout only";
  EXPECT_EQ(read_file(dir.path / "out"), "one\nthree") << "copied through as it came";
  const child_result plain = run_into({"echo", "plain"}, dir.path / "plain");
  EXPECT_EQ(plain.out, "") << "kept only when teed";
  EXPECT_EQ(read_file(dir.path / "plain"), "plain\n");
}

TEST(RunChild, TeeKeepsALargeOutputWhole) {
  temp_dir dir;
  const child_result r = run_into({"sh", "-c", "seq 1 200000; echo last"}, dir.path / "out",
                                  unconfined, child_output::tee);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.size(), fs::file_size(dir.path / "out"));
  EXPECT_EQ(r.out.substr(r.out.size() - 12), "200000\nlast\n");
}

TEST(RunChild, TeeDoesNotWaitForProcessesTheProgramLeft) {
  // The background process keeps the pipe open for 5 s after the program exits.
  temp_dir dir;
  const child_result r =
      run_into({"sh", "-c", "echo early; (sleep 5; echo late) 2>/dev/null & exit 3"},
               dir.path / "out", unconfined, child_output::tee);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.out, "early\n");
  EXPECT_LT(r.wall_s, 2.5);
}

TEST(RunChild, AProgramThatCannotStartIsAnErrorWhenTeedToo) {
  EXPECT_THROW(run_child({"/nonexistent/program"}, unconfined, child_output::tee), request_error);
  temp_dir dir;
  const fs::path script = dir.path / "script";
  std::ofstream(script) << "#!/nonexistent/interpreter\n";
  fs::permissions(script, fs::perms::owner_all);
  EXPECT_THROW(run_child({script.string()}, unconfined, child_output::tee), error);
}

// ---- the preload library's settings: measure-only (the gpu-time baseline), real SM count
// ---------

// Sets GREENCTX_PRELOAD to the built library for one test.
struct built_preload {
  built_preload() { setenv(run_protocol::env_preload, GREENCTX_PRELOAD_PATH, 1); }
  ~built_preload() { unsetenv(run_protocol::env_preload); }
};

TEST(RunChild, MeasureOnlyLoadsTheLibraryWithoutConfining) {
  if (!fs::exists(GREENCTX_PRELOAD_PATH)) // a test binary copied to another machine
    GTEST_SKIP() << "the preload library " GREENCTX_PRELOAD_PATH " is not on this machine";
  const built_preload library;
  confinement measure = unconfined;
  measure.measure = true;
  namespace p = run_protocol;
  // The program stands in for the library: it writes its own report line.
  const std::string show =
      std::string("case \"$LD_PRELOAD\" in *libgreenctx_preload.so*) echo preloaded;; esac; ") +
      "echo \"${" + p::env_measure + "-unset} ${" + p::env_sms + "-unset} ${" + p::env_devices +
      "-unset} ${" + p::env_real_sm_count + "-unset}\"; echo '{\"" + p::field_pid + "\": 1, \"" +
      p::field_first_work_ns + "\": 500, \"" + p::field_last_sync_ns + "\": 2500}' >> \"$" +
      p::env_report + "\"; echo \"$" + p::env_report + "\"";
  temp_dir dir;
  const child_result r = run_into({"sh", "-c", show}, dir.path / "out", measure, child_output::tee);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "preloaded\n")) << r.out;
  EXPECT_TRUE(contains(r.out, "1 unset unset unset\n")) << "measure only: " << r.out;
  EXPECT_EQ(r.report.first_work_ns, 500u);
  EXPECT_EQ(r.report.last_sync_ns, 2500u);
  std::string report = r.out.substr(0, r.out.size() - 1); // the last line: the report's path
  report = report.substr(report.rfind('\n') + 1);
  EXPECT_TRUE(contains(report, "/greenctx-run-")) << report;
  EXPECT_FALSE(fs::exists(report)) << "read and removed";

  confinement confined{16, 1, false};
  confined.real_sm_count = true;
  const child_result c =
      run_into({"sh", "-c", show}, dir.path / "out2", confined, child_output::tee);
  EXPECT_TRUE(contains(c.out, "unset 16 1 1\n")) << c.out;
  confined.real_sm_count = false;
  EXPECT_TRUE(
      contains(run_into({"sh", "-c", show}, dir.path / "out3", confined, child_output::tee).out,
               "unset 16 1 unset\n"));
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

TEST(RunReport, TheGpuPhaseSpansEveryProcessThatReportedOne) {
  temp_dir dir;
  const fs::path file = dir.path / "report";
  namespace p = run_protocol;
  const auto line = [](unsigned long long first, unsigned long long last) {
    return "{\"" + std::string(p::field_first_work_ns) + "\":" + std::to_string(first) + ",\"" +
           p::field_last_sync_ns + "\":" + std::to_string(last) + "}\n";
  };
  // A launcher without GPU work, two workers, one that worked but never synchronized.
  std::ofstream(file) << line(0, 0) << line(5'000'000'000, 9'000'000'000)
                      << line(4'000'000'000, 7'000'000'000) << line(3'000'000'000, 0) << "{\""
                      << p::field_pid << "\":3}\n";
  const run_report r = read_report(file.string());
  EXPECT_EQ(r.processes, 5u);
  EXPECT_EQ(r.first_work_ns, 3'000'000'000u) << "the earliest non-zero first work";
  EXPECT_EQ(r.last_sync_ns, 9'000'000'000u) << "the latest last synchronization";
  std::ofstream(file) << line(0, 0) << "{}\n";
  const run_report none = read_report(file.string());
  EXPECT_EQ(none.first_work_ns, 0u);
  EXPECT_EQ(none.last_sync_ns, 0u);
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
