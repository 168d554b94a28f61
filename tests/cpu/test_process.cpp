// SPDX-License-Identifier: Apache-2.0
// The CLI's process control (tools/greenctx/process.hpp), without a GPU: how children are
// started, waited for, timed out and described, whatever SIGCHLD disposition greenctx inherited.
#include "common/process.hpp"
#include "text_checks.hpp"

#include <greenctx/plan/error.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <memory>
#include <string>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace greenctx::cli::process {
namespace {

using greenctx_test::contains;
using namespace std::chrono_literals;

constexpr const char *api = "test";

command sh(const std::string &script) {
  return command{"/bin/sh", {"sh", "-c", script}, std::nullopt, {}, nullptr};
}

// SIGCHLD's disposition for one test, the old one put back.
class scoped_sigchld {
public:
  explicit scoped_sigchld(void (*handler)(int)) {
    struct sigaction sa {};
    sa.sa_handler = handler;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGCHLD, &sa, &old_);
  }
  ~scoped_sigchld() { sigaction(SIGCHLD, &old_, nullptr); }
  scoped_sigchld(const scoped_sigchld &) = delete;
  scoped_sigchld &operator=(const scoped_sigchld &) = delete;

private:
  struct sigaction old_ {};
};

void (*sigchld_handler())(int) {
  struct sigaction now {};
  sigaction(SIGCHLD, nullptr, &now);
  return now.sa_handler;
}

TEST(Process, DescribeSaysHowAChildEnded) {
  EXPECT_EQ(describe({0, 0}), "exit 0");
  EXPECT_EQ(describe({3, 0}), "exit 3");
  EXPECT_EQ(describe({0, SIGKILL}), "signal 9 (SIGKILL)");
  EXPECT_EQ(describe({0, SIGABRT}), "signal 6 (SIGABRT)");
  EXPECT_EQ(describe({0, 64}), "signal 64");
  EXPECT_EQ((end_status{0, SIGTERM}.shell_code()), 128 + SIGTERM);
  EXPECT_EQ((end_status{7, 0}.shell_code()), 7);
}

TEST(Process, SpawnAndWaitGiveTheExitCode) {
  child c = spawn(sh("exit 5"), api);
  EXPECT_GT(c.pid(), 0);
  const end_status e = c.wait();
  EXPECT_EQ(e.exit_code, 5);
  EXPECT_EQ(e.signal, 0);
  EXPECT_FALSE(e.succeeded());
  ASSERT_TRUE(c.ended());
  EXPECT_EQ(c.wait().exit_code, 5) << "a second wait answers the same";
}

TEST(Process, ASignalThatEndsTheChildIsReported) {
  child c = spawn(sh("kill -TERM $$"), api);
  EXPECT_EQ(c.wait().signal, SIGTERM);
}

TEST(Process, WaitingWorksWithSigchldIgnoredAndPutsTheDispositionBack) {
  const scoped_sigchld ignored(SIG_IGN);
  {
    child c = spawn(sh("exit 4"), api);
    EXPECT_EQ(sigchld_handler(), SIG_DFL) << "SIGCHLD at its default while a child is waited for";
    EXPECT_EQ(c.wait().exit_code, 4) << "with SIGCHLD ignored the kernel would have reaped it";
  }
  EXPECT_EQ(sigchld_handler(), SIG_IGN);
}

// What `cmd` writes to stdout (run through spawn); it must exit 0.
std::string output_of(command cmd) {
  pipe_ends out = make_pipe(api);
  cmd.io.out = out.write.get();
  child c = spawn(cmd, api);
  out.write.reset();
  std::string text;
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (read_before(out.read.get(), text, deadline) == read_step::data) {
  }
  EXPECT_EQ(c.wait().exit_code, 0) << cmd.program;
  return text;
}

// Whether /proc/PID/status text says SIGCHLD is ignored (SigIgn, a hex mask; SIGCHLD is bit 16).
bool sigchld_ignored_in(const std::string &status) {
  const std::size_t at = status.find("SigIgn:");
  if (at == std::string::npos) {
    ADD_FAILURE() << "no SigIgn line in: " << status;
    return false;
  }
  return (std::stoull(status.substr(at + 7), nullptr, 16) >> (SIGCHLD - 1)) & 1u;
}

TEST(Process, TheChildGetsTheSigchldDispositionGreenctxInherited) {
  {
    const scoped_sigchld ignored(SIG_IGN);
    EXPECT_TRUE(sigchld_ignored_in(
        output_of({"/bin/cat", {"cat", "/proc/self/status"}, std::nullopt, {}, nullptr})));
  }
  EXPECT_FALSE(sigchld_ignored_in(
      output_of({"/bin/cat", {"cat", "/proc/self/status"}, std::nullopt, {}, nullptr})));
}

TEST(Process, OverlappingGuardsRestoreWhenTheLastEnds) {
  const scoped_sigchld ignored(SIG_IGN);
  auto a = std::make_unique<sigchld_default>();
  auto b = std::make_unique<sigchld_default>();
  a.reset(); // not in the order they were made
  EXPECT_EQ(sigchld_handler(), SIG_DFL);
  b.reset();
  EXPECT_EQ(sigchld_handler(), SIG_IGN);
}

TEST(Process, WaitOrKillKillsAChildThatOverstays) {
  child c = spawn(sh("exec sleep 30"), api);
  const auto t0 = std::chrono::steady_clock::now();
  const end_status e = c.wait_or_kill(100ms);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 10s);
  EXPECT_TRUE(e.timed_out);
  EXPECT_EQ(e.signal, SIGKILL);
}

TEST(Process, WaitForReturnsNothingWhileTheChildRuns) {
  child c = spawn(sh("exec sleep 30"), api);
  EXPECT_FALSE(c.wait_for(50ms));
  EXPECT_FALSE(c.poll());
  c.signal(SIGTERM);
  const std::optional<end_status> e = c.wait_for(10s);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->signal, SIGTERM);
  EXPECT_FALSE(e->timed_out);
}

TEST(Process, ADestroyedChildIsKilledAndReaped) {
  pid_t pid = -1;
  {
    child c = spawn(sh("exec sleep 30"), api);
    pid = c.pid();
  }
  EXPECT_EQ(kill(pid, 0), -1) << "the process should be gone, not left running or a zombie";
}

TEST(Process, AMovedChildIsOwnedOnce) {
  child a = spawn(sh("exit 2"), api);
  const pid_t pid = a.pid();
  child b = std::move(a);
  EXPECT_EQ(a.pid(), -1);
  EXPECT_EQ(b.pid(), pid);
  EXPECT_EQ(b.wait().exit_code, 2);
}

TEST(Process, AProgramThatCannotStartIsAnErrorWithItsReason) {
  try {
    spawn(command{"/nonexistent/program", {"program"}, std::nullopt, {}, nullptr}, api);
    FAIL() << "spawn should have thrown";
  } catch (const error &e) {
    EXPECT_TRUE(contains(e.what(), "cannot start '/nonexistent/program'")) << e.what();
    EXPECT_TRUE(contains(e.what(), "No such file")) << e.what();
  }
}

TEST(Process, AScriptWithoutHashBangRunsUnderSh) {
  char path[] = "/tmp/greenctx-process-XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(write_all(fd, "exit 6\n"));
  close(fd);
  chmod(path, 0700);
  child c = spawn(command{path, {path}, std::nullopt, {}, nullptr}, api);
  EXPECT_EQ(c.wait().exit_code, 6);
  unlink(path);
}

TEST(Process, TheEnvironmentIsTheCommands) {
  setenv("GREENCTX_PROCESS_TEST", "greenctx's", 1);
  const std::vector<std::string> env = environment_with({"GREENCTX_PROCESS_TEST=given"});
  unsetenv("GREENCTX_PROCESS_TEST");
  command cmd = sh("printf '%s' \"$GREENCTX_PROCESS_TEST\"");
  cmd.environment = env;
  const std::string text = output_of(cmd);
  EXPECT_EQ(text, "given") << "the value replaced, not added beside greenctx's";
}

TEST(Process, ReadBeforeStopsAtTheDeadline) {
  int p[2];
  ASSERT_EQ(pipe(p), 0);
  std::string text;
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(read_before(p[0], text, t0 + 50ms), read_step::deadline);
  EXPECT_GE(std::chrono::steady_clock::now() - t0, 50ms);
  close(p[1]);
  EXPECT_EQ(read_before(p[0], text, std::chrono::steady_clock::now() + 10s),
            read_step::end_of_file);
  close(p[0]);
  EXPECT_TRUE(text.empty());
}

// Whether `fd` is open in this process.
bool is_open(int fd) {
  return fcntl(fd, F_GETFD) != -1;
}

TEST(Process, ADescriptorIsClosedOnceByItsLastOwner) {
  pipe_ends p = make_pipe(api);
  const int r = p.read.get(), w = p.write.get();
  EXPECT_TRUE(is_open(r) && is_open(w));
  EXPECT_NE(fcntl(r, F_GETFD) & FD_CLOEXEC, 0) << "both ends close on exec";
  EXPECT_NE(fcntl(w, F_GETFD) & FD_CLOEXEC, 0);
  descriptor moved = std::move(p.read);
  EXPECT_EQ(p.read.get(), -1);
  EXPECT_EQ(moved.get(), r);
  p.write = std::move(moved); // the write end closes as the read end takes its place
  EXPECT_FALSE(is_open(w));
  EXPECT_EQ(p.write.get(), r);
  p.write.reset();
  EXPECT_FALSE(is_open(r));
  p.write.reset(); // again: nothing to close
  EXPECT_EQ(p.write.get(), -1);
}

TEST(Process, AScratchFileHoldsWhatAChildWroteAndHasNoName) {
  const descriptor file = scratch_file(api);
  char link[64], path[4096] = {};
  std::snprintf(link, sizeof link, "/proc/self/fd/%d", file.get());
  ASSERT_GT(readlink(link, path, sizeof path - 1), 0);
  EXPECT_TRUE(contains(path, "(deleted)")) << path;
  command cmd = sh("echo one; echo two >&2");
  cmd.io.out = cmd.io.err = file.get();
  ASSERT_EQ(spawn(cmd, api).wait().exit_code, 0);
  EXPECT_EQ(contents(file.get()), "one\ntwo\n");
  EXPECT_EQ(contents(file.get()), "one\ntwo\n") << "reading moves no offset";
}

TEST(Process, ForkCallReturnsTheBodysCode) {
  child c = fork_call([] { return 9; }, api);
  EXPECT_EQ(c.wait().exit_code, 9);
}

TEST(Process, ForkCallWithSigchldIgnored) {
  const scoped_sigchld ignored(SIG_IGN);
  child c = fork_call([] { return 3; }, api);
  EXPECT_EQ(c.wait().exit_code, 3);
}

TEST(Process, SignalsAreForwardedToTheChild) {
  signal_forwarding forwarding;
  command cmd = sh("trap 'exit 42' TERM; while :; do sleep 0.05; done");
  cmd.forwarding = &forwarding;
  child c = spawn(cmd, api);
  // The trap must be in place before the signal: give the shell a moment, then signal greenctx.
  std::this_thread::sleep_for(300ms);
  kill(getpid(), SIGTERM);
  const std::optional<end_status> e = c.wait_for(10s);
  ASSERT_TRUE(e) << "the child never got the SIGTERM sent to greenctx";
  EXPECT_EQ(e->exit_code, 42);
}

TEST(Process, FindProgramSearchesPath) {
  EXPECT_EQ(find_program("/bin/sh", api), "/bin/sh");
  EXPECT_TRUE(contains(find_program("sh", api), "/sh"));
  EXPECT_THROW(find_program("greenctx-no-such-program", api), request_error);
  EXPECT_THROW(find_program("", api), request_error);
  EXPECT_THROW(find_program("/etc/passwd", api), request_error);
}

} // namespace
} // namespace greenctx::cli::process
