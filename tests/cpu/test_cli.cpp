// SPDX-License-Identifier: Apache-2.0
// The greenctx CLI as a user meets it: exit codes, help, and error messages. The child runs with
// GREENCTX_LIBCUDA pointing at a library that does not exist, so every command that needs the
// driver fails the same way on machines with and without a GPU.
//
// Exit codes: 0 success, 1 verification failed, 2 usage error or bad input, 3 no driver or no GPU,
// 4 driver lacks a feature, 5 other CUDA error. Errors go to stderr and start with "greenctx: ".
#include "commands/bench/adaptive.hpp"
#include "report/output.hpp"
#include "common/help.hpp"
#include <greenctx/version.hpp>
#include "text_checks.hpp"

#include <gtest/gtest.h>

#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

extern char **environ;

namespace {

using greenctx_test::contains;

constexpr int exit_ok = 0;
constexpr int exit_check_failed = 1;
constexpr int exit_usage = 2;
constexpr int exit_no_driver = 3;
constexpr int exit_unsupported = 4;

struct cli_result {
  int exit_code = -1; ///< -1 when the child did not exit normally (signal, timeout)
  std::string out;
  std::string err;
};

std::ostream &operator<<(std::ostream &os, const cli_result &r) {
  return os << "exit " << r.exit_code << "\n--- stdout ---\n"
            << r.out << "--- stderr ---\n"
            << r.err;
}

// The CLI under test. GREENCTX_CLI overrides the build-time path (for binaries copied to another
// machine).
std::string cli_path() {
  const char *override_path = std::getenv("GREENCTX_CLI");
  return override_path && *override_path ? override_path : GREENCTX_CLI_PATH;
}

// The parent's environment with GREENCTX_LIBCUDA replaced, and `extra` ("NAME=value") set.
std::vector<std::string> child_environment(const std::vector<std::string> &extra) {
  std::vector<std::string> set = extra;
  set.push_back("GREENCTX_LIBCUDA=/nonexistent/libcuda.so.1");
  const auto overridden = [&](const char *var) {
    return std::any_of(set.begin(), set.end(), [&](const std::string &s) {
      const std::size_t key = s.find('=') + 1;
      return std::strncmp(var, s.c_str(), key) == 0;
    });
  };
  std::vector<std::string> env;
  for (char **e = environ; *e; ++e)
    if (!overridden(*e))
      env.emplace_back(*e);
  env.insert(env.end(), set.begin(), set.end());
  return env;
}

// Runs the CLI with `args` and `extra_env`, capturing stdout, stderr and the exit code. Kills it
// after 30 s.
cli_result run_cli(std::vector<std::string> args, const std::vector<std::string> &extra_env = {}) {
  cli_result result;
  args.insert(args.begin(), cli_path());
  std::vector<char *> argv;
  for (auto &a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  auto env_strings = child_environment(extra_env);
  std::vector<char *> envp;
  for (auto &e : env_strings)
    envp.push_back(e.data());
  envp.push_back(nullptr);

  int out_pipe[2], err_pipe[2];
  if (pipe(out_pipe) != 0 || pipe(err_pipe) != 0) {
    ADD_FAILURE() << "pipe: " << std::strerror(errno);
    return result;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], STDERR_FILENO);
  for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]})
    posix_spawn_file_actions_addclose(&actions, fd);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  close(out_pipe[1]);
  close(err_pipe[1]);
  if (spawned != 0) {
    close(out_pipe[0]);
    close(err_pipe[0]);
    ADD_FAILURE() << "cannot start " << argv[0] << ": " << std::strerror(spawned);
    return result;
  }

  // Read both pipes until they close, so a chatty child never blocks on a full pipe.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  std::string *sinks[2] = {&result.out, &result.err};
  int open_pipes = 2;
  bool timed_out = false;
  while (open_pipes > 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    if (poll(fds, 2, static_cast<int>(left.count())) < 0 && errno != EINTR)
      break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
        continue;
      char buf[4096];
      const ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        sinks[i]->append(buf, static_cast<std::size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_pipes;
      }
    }
  }
  for (const auto &f : fds)
    if (f.fd >= 0)
      close(f.fd);
  if (timed_out)
    kill(pid, SIGKILL);

  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out)
    ADD_FAILURE() << "the CLI did not finish within 30 s";
  else if (WIFEXITED(status))
    result.exit_code = WEXITSTATUS(status);
  else if (WIFSIGNALED(status))
    ADD_FAILURE() << "the CLI died of signal " << WTERMSIG(status);
  return result;
}

// An error exit: the code, and a message on stderr that starts with "greenctx: ".
void expect_error(const cli_result &r, int code) {
  EXPECT_EQ(r.exit_code, code) << r;
  EXPECT_TRUE(r.err.starts_with("greenctx: ")) << "stderr does not start with \"greenctx: \"\n"
                                               << r;
}

// ---- help --------------------------------------------------------------------------------------

TEST(Cli, HelpListsTheSubcommands) {
  const auto r = run_cli({"--help"});
  EXPECT_EQ(r.exit_code, exit_ok) << r;
  EXPECT_TRUE(contains(r.out, "info")) << r;
  EXPECT_TRUE(contains(r.out, "verify")) << r;
  EXPECT_TRUE(contains(r.out, "demo")) << r;
  EXPECT_TRUE(contains(r.out, "split")) << r;
  EXPECT_TRUE(contains(r.out, "tune")) << r;
}

TEST(Cli, InfoHelpShowsDeviceAndJson) {
  const auto r = run_cli({"info", "--help"});
  EXPECT_EQ(r.exit_code, exit_ok) << r;
  EXPECT_TRUE(contains(r.out, "--device")) << r;
  EXPECT_TRUE(contains(r.out, "--json")) << r;
}

TEST(Cli, VerifyHelpShowsDeviceAndJson) {
  const auto r = run_cli({"verify", "--help"});
  EXPECT_EQ(r.exit_code, exit_ok) << r;
  EXPECT_TRUE(contains(r.out, "--device")) << r;
  EXPECT_TRUE(contains(r.out, "--json")) << r;
}

TEST(Cli, DemoHelpShowsDevice) {
  const auto r = run_cli({"demo", "--help"});
  EXPECT_EQ(r.exit_code, exit_ok) << r;
  EXPECT_TRUE(contains(r.out, "--device")) << r;
}

// ---- usage errors (exit 2), decided before the driver is touched --------------------------------

TEST(Cli, NoSubcommandPrintsHelpAndFails) {
  const auto r = run_cli({});
  EXPECT_EQ(r.exit_code, exit_usage) << r;
  EXPECT_TRUE(contains(r.out + r.err, "verify")) << r;
}

TEST(Cli, TuneRefusesBadObjectivesAndListsBeforeTheDriver) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--p99-us", "abc"}, "'abc' is not a decimal number"},
      {{"--p99-us", "1e3"}, "'1e3' is not a decimal number"},
      {{"--p99-us", "40", "--within-best", "0.1"}, "excludes"},
      {{"--p99-times-alone", "0.5"}, "at least 1"},
      {{"--p99-us", "0"}, "positive number of microseconds"},
      {{"--sizes", "16,8"}, "increasing order"},
      {{"--search", "fast"}, "fast not in"},
      {{"--samples", "0"}, "--samples"},
      {{"--device", "0,1"}, "tune runs on one GPU"},
      {{"--bytes", "1M"}, "--bytes: only with --comm"},
      {{"--comm-timeout", "5"}, "--comm-timeout: only with --comm"},
      {{"--comm", "--background", "spin"}, "--background does not apply with --comm"},
      {{"--comm", "--rounds", "3"}, "--rounds does not apply with --comm"},
      {{"--comm", "--waves", "3"}, "--waves does not apply with --comm"},
      {{"--comm", "--critical-us", "5"}, "--critical-us does not apply with --comm"},
      {{"--comm", "--bytes", "1M,2M"}, "tune one message size at a time"},
      {{"--comm", "--bytes", "3T"}, "--bytes: entry 1 ('3T')"},
      {{"--comm", "--device", "0,0"}, "listed twice"},
  };
  for (const auto &[args, words] : cases) {
    std::vector<std::string> argv = {"tune"};
    argv.insert(argv.end(), args.begin(), args.end());
    const auto r = run_cli(argv);
    expect_error(r, exit_usage);
    EXPECT_TRUE(contains(r.err, words)) << "expected '" << words << "'\n" << r;
  }
}

// tune --comm measures in child processes: without a driver the first child says so, exit 3.
TEST(Cli, CommTuneWithoutADriverSaysSo) {
  const auto r = run_cli({"tune", "--comm", "-q"});
  expect_error(r, exit_no_driver);
  EXPECT_TRUE(contains(r.err, "no NVIDIA driver")) << r;
}

TEST(Cli, UnknownSubcommand) {
  const auto r = run_cli({"frobnicate"});
  expect_error(r, exit_usage);
  EXPECT_TRUE(contains(r.err, "frobnicate")) << r;
}

TEST(Cli, SplitHelpShowsTheOptions) {
  const auto r = run_cli({"split", "--help"});
  EXPECT_EQ(r.exit_code, exit_ok) << r;
  for (const char *word : {"--dry-run", "--json", "--device", "cosched=N", "backfill"})
    EXPECT_TRUE(contains(r.out, word)) << word << "\n" << r;
}

TEST(Cli, SplitWithoutRequest) {
  expect_error(run_cli({"split"}), exit_usage);
}

TEST(Cli, SplitMalformedGroups) {
  auto r = run_cli({"split", "16:cosched=x"});
  expect_error(r, exit_usage);
  EXPECT_TRUE(contains(r.err, "needs a whole number")) << r;
  r = run_cli({"split", "16:fast"});
  expect_error(r, exit_usage);
  EXPECT_TRUE(contains(r.err, "unknown option 'fast'")) << r;
  r = run_cli({"split", "x8"});
  expect_error(r, exit_usage);
  EXPECT_TRUE(contains(r.err, "not an SM count")) << r;
}

TEST(Cli, RunNeedsAProgram) {
  auto r = run_cli({"run", "--sms", "16"});
  expect_error(r, exit_usage);
  EXPECT_TRUE(contains(r.err, "no program")) << r;
  r = run_cli({"run", "--sms", "16", "--", "/nonexistent/program"});
  expect_error(r, exit_usage);
  EXPECT_TRUE(contains(r.err, "not an executable file")) << r;
  r = run_cli({"run", "--sms", "16", "--", "no-such-program-greenctx"});
  expect_error(r, exit_usage);
  EXPECT_TRUE(contains(r.err, "not found in PATH")) << r;
  expect_error(run_cli({"run", "--", "true"}), exit_usage); // --sms is required
}

// ---- numbers are decimal, in every subcommand (exit 2 before any driver call) -------------------

// An integer option, what the command needs around it to get past the parse, and a value it takes.
struct number_option {
  std::vector<std::string> before; ///< the subcommand and what it requires before the option
  std::string option;
  std::string good;
  std::vector<std::string> after; ///< e.g. "--", "true"
};

const std::vector<number_option> &number_options() {
  static const std::vector<number_option> all = {
      {{"info"}, "--device", "0", {}},
      {{"verify", "16,rest"}, "--device", "0", {}},
      {{"verify", "16,rest"}, "--blocks-per-sm", "8", {}},
      {{"split", "16"}, "--device", "0", {}},
      {{"run"}, "--sms", "16", {"--", "true"}},
      {{"scale"}, "--repeat", "3", {"--", "true"}},
      {{"scale"}, "--warmup", "1", {"--", "true"}},
      {{"scale"}, "--device", "0", {"--", "true"}},
      {{"demo"}, "--device", "0", {}},
      {{"demo"}, "--samples", "10", {}},
      {{"demo"}, "--critical-sms", "16", {}},
      {{"bench"}, "--device", "0", {}},
      {{"bench"}, "--critical-sms", "16", {}},
      {{"bench"}, "--samples", "10", {}},
      {{"bench"}, "--warmup", "5", {}},
      {{"bench"}, "--rounds", "2", {}},
      {{"bench"}, "--gap-us", "300", {}},
      {{"bench"}, "--critical-blocks", "16", {}},
      {{"bench"}, "--critical-us", "20", {}},
      {{"bench"}, "--critical-gemm-n", "256", {}},
      {{"bench"}, "--background-us", "200", {}},
      {{"bench"}, "--waves", "64", {}},
      {{"bench"}, "--memory-mib", "1024", {}},
      {{"bench"}, "--gemm-n", "8192", {}},
      {{"bench"}, "--rate-window-ms", "300", {}},
      {{"bench"}, "--queue-depth", "2", {}},
      {{"bench", "--comm"}, "--tolerance", "10", {}},
      {{"bench", "--comm"}, "--window-ms", "100", {}},
      {{"bench", "--comm"}, "--comm-timeout", "60", {}},
  };
  return all;
}

std::vector<std::string> with_value(const number_option &o, const std::string &value, bool joined) {
  std::vector<std::string> args = o.before;
  if (joined) {
    args.push_back(o.option + "=" + value);
  } else {
    args.push_back(o.option);
    args.push_back(value);
  }
  args.insert(args.end(), o.after.begin(), o.after.end());
  return args;
}

TEST(Cli, NumbersThatAreNotDecimalAreRefusedBeforeTheDriver) {
  for (const auto &o : number_options())
    for (const char *bad : {"0x10", "-1", "+5", "1e3", " 16", "99999999999999999999"})
      for (const bool joined : {false, true}) {
        const auto args = with_value(o, bad, joined);
        const auto r = run_cli(args);
        const std::string what = args.front() + " " + o.option + (joined ? "=" : " ") + bad;
        EXPECT_EQ(r.exit_code, exit_usage) << what << "\n" << r;
        EXPECT_TRUE(contains(r.err, o.option)) << what << "\n" << r;
        EXPECT_FALSE(contains(r.err, "no NVIDIA driver")) << what << "\n" << r;
      }
}

TEST(Cli, LeadingZerosAreReadAsDecimal) {
  // Accepted: the command gets as far as the missing driver.
  for (const auto &o : number_options()) {
    const auto r = run_cli(with_value(o, "0" + o.good, false));
    EXPECT_EQ(r.exit_code, exit_no_driver)
        << o.before.front() << " " << o.option << " 0" << o.good << "\n"
        << r;
  }
  // 09 is no octal number; 010000 read as octal would be 4096, inside 1..4096.
  expect_error(run_cli({"bench", "--critical-sms", "09"}), exit_no_driver);
  const auto r = run_cli({"bench", "--critical-sms", "010000"});
  expect_error(r, exit_usage);
  EXPECT_TRUE(contains(r.err, "--critical-sms: '010000' is out of range")) << r;
}

TEST(Cli, ListsOfNumbersAreDecimalToo) {
  for (const char *bad : {"8,0x10", "8,-16", "8,+16", "8,1e3"}) {
    const auto r = run_cli({"scale", "--sms", bad, "--", "true"});
    expect_error(r, exit_usage);
    EXPECT_TRUE(contains(r.err, "not a whole number of SMs in decimal")) << r;
  }
  // Accepted: 008,016 is 8,16 (the driver is missing).
  expect_error(run_cli({"scale", "--sms", "008,016", "--", "true"}), exit_no_driver);
  expect_error(run_cli({"verify", "0x10,rest"}), exit_usage);
  expect_error(run_cli({"verify", "016,rest"}), exit_no_driver);
  expect_error(run_cli({"split", "0x10"}), exit_usage);
}

// ---- greenctx run -------------------------------------------------------------------------------

TEST(Cli, RunHelpSaysHowItRuns) {
  const auto r = run_cli({"run", "--help"});
  EXPECT_EQ(r.exit_code, exit_ok) << r;
  for (const char *word :
       {"--sms", "--device", "=all", "--strict", "86", "--quiet", "--ignore-coscheduling", "exec",
        "decimal", "126", "127", "--real-sm-count"})
    EXPECT_TRUE(contains(r.out, word)) << word << "\n" << r;
}

TEST(Cli, RunWithoutDriver) {
  // Everything that needs no driver passed: the program, --device and the preload library.
  const auto r = run_cli({"run", "--sms", "16", "--", "true"});
  expect_error(r, exit_no_driver);
  EXPECT_TRUE(contains(r.err, "no NVIDIA driver")) << r;
  expect_error(
      run_cli({"run", "--sms", "16", "--strict", "-q", "--ignore-coscheduling", "--", "true"}),
      exit_no_driver);
}

TEST(Cli, RunDeviceList) {
  for (const char *good : {"all", "0", "0,1", "01,2", "0, 1"})
    expect_error(run_cli({"run", "--sms", "16", "--device", good, "--", "true"}), exit_no_driver);
  auto r = run_cli({"run", "--sms", "16", "--device", "0,0", "--", "true"});
  expect_error(r, exit_usage);
  EXPECT_TRUE(contains(r.err, "--device")) << r;
  EXPECT_TRUE(contains(r.err, "GPU 0 is listed twice")) << r;
  for (const char *bad : {"0x1", "1,-1", "+1", "0,", "", "any", "0;1", "1e1"}) {
    r = run_cli({"run", "--sms", "16", std::string("--device=") + bad, "--", "true"});
    expect_error(r, exit_usage);
    EXPECT_TRUE(contains(r.err, "--device")) << r;
    EXPECT_FALSE(contains(r.err, "no NVIDIA driver")) << r;
  }
}

// A folder of its own for one test, removed at the end.
struct temp_dir {
  std::filesystem::path path;
  explicit temp_dir(const std::string &name = "greenctx-cli-XXXXXX") {
    std::string tmpl = (std::filesystem::temp_directory_path() / name).string();
    path = mkdtemp(tmpl.data());
  }
  ~temp_dir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

std::string built_preload_library() {
  return std::filesystem::path(cli_path()).parent_path() / "libgreenctx_preload.so";
}

// GREENCTX_PRELOAD is checked (by loading it) before the program could start: each bad one is
// refused with a reason, and the program, which would create a marker file, never runs.
TEST(Cli, RunRefusesAPreloadLibraryThatCannotBeLoaded) {
  namespace fs = std::filesystem;
  temp_dir dir;
  const fs::path marker = dir.path / "marker";
  const fs::path text = dir.path / "not-a-library.so";
  std::ofstream(text) << std::string(200, '#') << "\nnot an ELF file\n"; // longer than a header
  const fs::path spaced = dir.path / "with space";
  const fs::path coloned = dir.path / "with:colon";
  fs::create_directories(spaced);
  fs::create_directories(coloned);
  ASSERT_TRUE(fs::exists(built_preload_library())) << built_preload_library();
  fs::copy_file(built_preload_library(), spaced / "libgreenctx_preload.so");
  fs::copy_file(built_preload_library(), coloned / "libgreenctx_preload.so");
  const struct {
    std::string preload, says;
  } cases[] = {
      {dir.path.string(), "it is a folder"},
      {(dir.path / "missing.so").string(), "No such file"},
      {text.string(), "cannot be loaded"},
      {(spaced / "libgreenctx_preload.so").string(), "contains a space or a colon"},
      {(coloned / "libgreenctx_preload.so").string(), "contains a space or a colon"},
      {"libgreenctx_preload.so", "give a path with its folder"},
  };
  for (const auto &c : cases) {
    for (const char *command : {"run", "scale"}) {
      std::vector<std::string> args{
          command, "--sms", "16", "--", "sh", "-c", "touch '" + marker.string() + "'"};
      const auto r = run_cli(args, {"GREENCTX_PRELOAD=" + c.preload});
      expect_error(r, exit_usage);
      EXPECT_TRUE(contains(r.err, "GREENCTX_PRELOAD")) << c.preload << "\n" << r;
      EXPECT_TRUE(contains(r.err, c.says)) << c.preload << "\n" << r;
      EXPECT_FALSE(fs::exists(marker)) << command << " ran the program with " << c.preload;
    }
  }
  // The dlerror text says what is wrong with a file that is not a library.
  const auto r =
      run_cli({"run", "--sms", "16", "--", "true"}, {"GREENCTX_PRELOAD=" + text.string()});
  EXPECT_TRUE(contains(r.err, "invalid ELF header")) << r;
  // The built library passes; the run stops at the missing driver.
  expect_error(run_cli({"run", "--sms", "16", "--", "true"},
                       {"GREENCTX_PRELOAD=" + built_preload_library()}),
               exit_no_driver);
}

TEST(Cli, ScaleRejectsBadInputBeforeRunning) {
  auto r = run_cli({"scale", "--repeat", "0", "--", "true"});
  expect_error(r, exit_usage);
  r = run_cli({"scale", "--sms", "16,abc", "--", "true"});
  expect_error(r, exit_usage);
  r = run_cli({"scale", "--sms", "32,16", "--", "true"});
  expect_error(r, exit_usage);
  r = run_cli({"scale", "--sms", "16"});
  expect_error(r, exit_usage);
}

TEST(Cli, ScaleHelpNamesEachFigure) {
  const auto r = run_cli({"scale", "--help"});
  EXPECT_EQ(r.exit_code, exit_ok) << r;
  for (const char *word : {"--metric", "wall", "gpu-time", "regex:", "json:", "capture group",
                           "last match wins", "--metric-unit", "--higher-is-better",
                           "--lower-is-better", "tokens/s", "--real-sm-count", "1.3x", "4x"})
    EXPECT_TRUE(contains(r.out, word)) << word << "\n" << r;
}

// A bad --metric is refused (exit 2) before the driver is touched and before anything runs.
TEST(Cli, ScaleRefusesABadMetricBeforeRunning) {
  namespace fs = std::filesystem;
  temp_dir dir;
  const fs::path marker = dir.path / "ran";
  const std::string program = "touch '" + marker.string() + "'";
  const struct {
    std::vector<std::string> options;
    std::string says;
  } cases[] = {
      {{"--metric", "bogus"}, "--metric 'bogus' is not a figure greenctx scale knows"},
      {{"--metric", "regex:took ([0-9.]+ s"}, "does not compile"},
      {{"--metric", "regex:took [0-9.]+ s"}, "has 0 capture groups: give exactly one"},
      {{"--metric", "regex:(a)(b)"}, "has 2 capture groups"},
      {{"--metric", "json:"}, "needs a key"},
      {{"--metric", "json:a..b"}, "empty part"},
      {{"--metric-unit", "ms"}, "--metric-unit is for a printed number"},
      {{"--metric", "gpu-time", "--higher-is-better"}, "are for a printed number"},
      {{"--metric", "json:x", "--metric-unit", "points"}, "--higher-is-better or"},
      {{"--metric", "json:x", "--higher-is-better", "--lower-is-better"}, "contradict"},
  };
  for (const auto &c : cases) {
    std::vector<std::string> args{"scale"};
    args.insert(args.end(), c.options.begin(), c.options.end());
    args.insert(args.end(), {"--", "sh", "-c", program});
    const auto r = run_cli(args);
    expect_error(r, exit_usage);
    EXPECT_TRUE(contains(r.err, c.says)) << c.says << "\n" << r;
    EXPECT_FALSE(contains(r.err, "no NVIDIA driver")) << r;
    EXPECT_FALSE(fs::exists(marker)) << "the program ran";
  }
  const auto r = run_cli({"scale", "--metric", "bogus", "--", "true"});
  expect_error(r, exit_usage);
  EXPECT_TRUE(contains(r.err, "use wall (the default")) << r;
  // Good ones get as far as the missing driver.
  for (const std::vector<std::string> &good :
       {std::vector<std::string>{"--metric", "gpu-time"},
        {"--metric", "regex:took ([0-9.eE+-]+) s"},
        {"--metric", "json:timing.seconds", "--metric-unit", "ms"},
        {"--metric", "json:rate", "--metric-unit", "tokens/s"},
        {"--metric", "json:score", "--metric-unit", "points", "--higher-is-better"},
        {"--real-sm-count"}}) {
    std::vector<std::string> args{"scale"};
    args.insert(args.end(), good.begin(), good.end());
    args.insert(args.end(), {"--", "true"});
    expect_error(run_cli(args), exit_no_driver);
  }
}

TEST(Cli, VerifyWithoutSplit) {
  expect_error(run_cli({"verify"}), exit_usage);
}

TEST(Cli, VerifyEmptyItem) {
  const auto r = run_cli({"verify", "16,,rest"});
  expect_error(r, exit_usage);
  EXPECT_TRUE(contains(r.err, "empty")) << r;
}

TEST(Cli, VerifyZeroSms) {
  const auto r = run_cli({"verify", "0,rest"});
  expect_error(r, exit_usage);
  EXPECT_TRUE(contains(r.err, "0 SMs")) << r;
}

TEST(Cli, VerifyNotANumber) {
  expect_error(run_cli({"verify", "abc"}), exit_usage);
}

TEST(Cli, VerifyRestNotLast) {
  const auto r = run_cli({"verify", "16,rest,8"});
  expect_error(r, exit_usage);
  EXPECT_TRUE(contains(r.err, "last")) << r;
}

TEST(Cli, InfoNegativeDevice) {
  expect_error(run_cli({"info", "--device", "-1"}), exit_usage);
}

TEST(Cli, InfoDeviceNotANumber) {
  expect_error(run_cli({"info", "--device", "x"}), exit_usage);
}

// ---- several GPUs: --device all|N|LIST (info, verify, bench --comm) -----------------------------

TEST(Cli, DeviceListsAreCheckedBeforeTheDriver) {
  // Accepted lists get as far as the missing driver.
  for (const char *good : {"all", "0", "0,1", "01,2", "0, 1"}) {
    expect_error(run_cli({"info", "--device", good}), exit_no_driver);
    expect_error(run_cli({"verify", "16,rest", "--device", good}), exit_no_driver);
  }
  for (const char *bad : {"0,0", "0x1", "1,-1", "0,", "", "any", "0;1", " 1"}) {
    for (const std::vector<std::string> &cmd :
         {std::vector<std::string>{"info"}, std::vector<std::string>{"verify", "16,rest"},
          std::vector<std::string>{"bench", "--comm"}}) {
      std::vector<std::string> args = cmd;
      args.push_back(std::string("--device=") + bad);
      const auto r = run_cli(args);
      expect_error(r, exit_usage);
      EXPECT_TRUE(contains(r.err, "--device")) << r;
      EXPECT_FALSE(contains(r.err, "no NVIDIA driver")) << r;
    }
  }
  const auto r = run_cli({"info", "--device", "1,1"});
  EXPECT_TRUE(contains(r.err, "GPU 1 is listed twice")) << r;
}

TEST(Cli, InfoAndVerifyHelpSayAll) {
  EXPECT_TRUE(contains(run_cli({"info", "--help"}).out, "all")) << run_cli({"info", "--help"});
  EXPECT_TRUE(contains(run_cli({"verify", "--help"}).out, "all")) << run_cli({"verify", "--help"});
}

TEST(Cli, LatencyBenchTakesOneDevice) {
  const auto r = run_cli({"bench", "--device", "0,1"});
  expect_error(r, exit_usage);
  EXPECT_TRUE(contains(r.err, "one GPU")) << r;
  EXPECT_TRUE(contains(r.err, "--comm")) << r;
}

TEST(Cli, CommBenchChecksItsListsBeforeTheDriver) {
  auto r = run_cli({"bench", "--comm", "--sizes", "1M,3T"});
  expect_error(r, exit_usage);
  EXPECT_TRUE(contains(r.err, "--sizes")) << r;
  EXPECT_TRUE(contains(r.err, "unit 'T'")) << r;
  r = run_cli({"bench", "--comm", "--comm-sms", "8,8"});
  expect_error(r, exit_usage);
  EXPECT_TRUE(contains(r.err, "lists 8 twice")) << r;
  r = run_cli({"bench", "--sizes", "1M"}); // a --comm option without --comm
  expect_error(r, exit_usage);
  EXPECT_TRUE(contains(r.err, "add --comm")) << r;
  r = run_cli({"bench", "--comm", "--check-targets"});
  expect_error(r, exit_usage);
  expect_error(run_cli({"bench", "--comm", "--tolerance", "0x10"}), exit_usage);
}

TEST(Cli, AdaptiveBenchOptionsRefusedBeforeTheDriver) {
  // Every refusal here comes before the driver is opened (exit 2, not 3).
  auto r = run_cli({"bench", "--adaptive", "--shrink-to", "8,x"});
  expect_error(r, exit_usage);
  EXPECT_TRUE(contains(r.err, "--shrink-to entry 2")) << r;
  r = run_cli({"bench", "--adaptive", "--policies", "lead,eager"});
  expect_error(r, exit_usage);
  EXPECT_TRUE(contains(r.err, "'eager' is not one of")) << r;
  r = run_cli({"bench", "--adaptive", "--background", "spin"});
  expect_error(r, exit_usage);
  EXPECT_TRUE(contains(r.err, "memory background only")) << r;
  r = run_cli({"bench", "--adaptive", "--comm"});
  expect_error(r, exit_usage);
  r = run_cli({"bench", "--lead-us", "50"}); // an --adaptive option without --adaptive
  expect_error(r, exit_usage);
  EXPECT_TRUE(contains(r.err, "add --adaptive")) << r;
  r = run_cli({"bench", "--quick"});
  expect_error(r, exit_usage);
  // Valid options reach the driver, which this machine lacks.
  r = run_cli({"bench", "--adaptive", "--quick", "--background", "memory", "--quiet"});
  expect_error(r, exit_no_driver);
  EXPECT_TRUE(contains(r.err, "no NVIDIA driver")) << r;
}

// Each bench refuses the options only other benches take, before the driver (none here).
TEST(Cli, EachBenchRefusesTheOptionsOfTheOthers) {
  const std::pair<std::vector<std::string>, std::string> refused[] = {
      {{"bench", "--comm", "--critical-sms", "16"},
       "--critical-sms: is an option of the latency bench and --adaptive: leave it out with "
       "--comm"},
      {{"bench", "comm", "--rounds", "2"}, "--rounds: is an option of the latency bench and"},
      {{"bench", "--adaptive", "--gemm-n", "64"},
       "--gemm-n: is an option of the latency bench and --comm: leave it out with --adaptive"},
      {{"bench", "bandwidth", "--samples", "5"},
       "--samples: is an option of the latency bench, --adaptive and --comm"},
      {{"bench", "latency", "--ops", "read"},
       "--ops: is an option of bench bandwidth: leave it out with the latency bench"},
      {{"bench", "--repeats", "3"}, "give MODE bandwidth, or leave it out"},
      {{"bench", "--quick"}, "--quick: is an option of --adaptive, --comm and bench bandwidth"},
      {{"bench", "bandwidth", "--check-targets"},
       "--check-targets: is an option of the latency bench and --adaptive: leave it out with bench "
       "bandwidth"}};
  for (const auto &[args, says] : refused) {
    const auto r = run_cli(args);
    expect_error(r, exit_usage);
    EXPECT_TRUE(contains(r.err, says)) << r;
  }
  // What each bench takes passes, and meets the missing driver.
  for (const std::vector<std::string> &args :
       {std::vector<std::string>{"bench", "--comm", "--gemm-n", "64", "--samples", "5", "--quick"},
        {"bench", "adaptive", "--critical-sms", "16", "--rounds", "2", "--queue-depth", "3"},
        {"bench", "bandwidth", "--quick", "--repeats", "3", "--device", "0", "-q"}})
    expect_error(run_cli(args), exit_no_driver);
}

TEST(Cli, CommBenchWithoutDriver) {
  // The measurement runs in child processes; their failure is the command's, said once.
  const auto r = run_cli({"bench", "--comm", "--quick", "--quiet"});
  expect_error(r, exit_no_driver);
  EXPECT_TRUE(contains(r.err, "no NVIDIA driver")) << r;
}

// ---- no driver (exit 3) ------------------------------------------------------------------------

TEST(Cli, InfoWithoutDriver) {
  const auto r = run_cli({"info"});
  expect_error(r, exit_no_driver);
  EXPECT_TRUE(contains(r.err, "no NVIDIA driver")) << r;
}

// --version names the version CMake set and the commit, and exits 0 without a driver.
TEST(Cli, VersionNamesTheVersionAndCommit) {
  const auto r = run_cli({"--version"});
  EXPECT_EQ(r.exit_code, exit_ok) << r;
  EXPECT_TRUE(r.out.starts_with("greenctx " GREENCTX_VERSION_STRING " (commit ")) << r;
  EXPECT_TRUE(r.err.empty()) << r;
}

// Every command's help, off a terminal, fits 100 columns and ends with the command's exit codes;
// `greenctx help CMD` prints the same text as `greenctx CMD --help`.
TEST(Cli, HelpIsWrappedAndNamesEachCommandsExitCodes) {
  for (const char *command :
       {"info", "verify", "split", "run", "scale", "mps", "demo", "bench", "tune"}) {
    const auto r = run_cli({command, "--help"}, {"COLUMNS="});
    EXPECT_EQ(r.exit_code, exit_ok) << r;
    std::size_t start = 0, widest = 0;
    while (start < r.out.size()) {
      const std::size_t end = std::min(r.out.find('\n', start), r.out.size());
      widest = std::max(widest, end - start);
      start = end + 1;
    }
    EXPECT_LE(widest, 100u) << command << "\n" << r;
    EXPECT_TRUE(contains(r.out, "Exit codes: 0 ok;")) << command << "\n" << r;
    const auto again = run_cli({"help", command}, {"COLUMNS="});
    EXPECT_EQ(again.exit_code, exit_ok) << again;
    EXPECT_EQ(again.out, r.out) << command;
  }
  const auto wide = run_cli({"verify", "--help"}, {"COLUMNS=200"});
  EXPECT_TRUE(contains(wide.out,
                       "Create the partitions of SPLIT, run a %smid probe on all at once, "
                       "and check that they are disjoint"))
      << "COLUMNS=200 leaves a 118-character line whole\n"
      << wide;
  const auto unknown = run_cli({"help", "nosuch"});
  expect_error(unknown, exit_usage);
  EXPECT_TRUE(contains(unknown.err, "no command 'nosuch'")) << unknown;
}

// A long line is broken at spaces under its own description column; a word longer than the room
// stays whole.
TEST(Cli, WrapTextKeepsTheDescriptionColumn) {
  const std::string option = "  --json FILE                 " + std::string(30, 'a') + " " +
                             std::string(30, 'b') + " " + std::string(40, 'c');
  EXPECT_EQ(greenctx::cli::wrap_text(option, 100),
            "  --json FILE                 " + std::string(30, 'a') + " " + std::string(30, 'b') +
                "\n" + std::string(30, ' ') + std::string(40, 'c'));
  EXPECT_EQ(greenctx::cli::wrap_text("short\nlines stay", 100), "short\nlines stay");
  EXPECT_EQ(greenctx::cli::wrap_text(std::string(120, 'x'), 100), std::string(120, 'x'));
  EXPECT_EQ(greenctx::cli::wrap_text("one two three", 8), "one two\nthree");
}

// The completion script is valid bash and names every command and each one's options.
TEST(Cli, CompletionScriptComesFromTheParser) {
  const auto r = run_cli({"completion", "bash"});
  EXPECT_EQ(r.exit_code, exit_ok) << r;
  for (const char *word :
       {"info verify demo bench split run scale mps tune help completion", "    verify)", "--json",
        "--ignore-coscheduling", "--sms", "complete -o default -F _greenctx greenctx"})
    EXPECT_TRUE(contains(r.out, word)) << word << "\n" << r.out;
  EXPECT_FALSE(contains(r.out, "verify-piece")) << "the internal command is not offered";
  temp_dir dir;
  const std::string script = (dir.path / "greenctx.bash").string();
  std::ofstream(script) << r.out;
  EXPECT_EQ(std::system(("bash -n " + script).c_str()), 0) << r.out;
  expect_error(run_cli({"completion", "zsh"}), exit_usage);
}

TEST(Cli, InfoJsonWithoutDriver) {
  expect_error(run_cli({"info", "--json", "-"}), exit_no_driver);
}

// --json takes a FILE on every command; a split given right after it is named in the error.
TEST(Cli, JsonNeedsAFileAndSaysWhatItTook) {
  auto r = run_cli({"info", "--json"});
  expect_error(r, exit_usage);
  EXPECT_TRUE(contains(r.err, "--json")) << r;
  r = run_cli({"verify", "--json", "16,rest"});
  expect_error(r, exit_usage);
  EXPECT_TRUE(contains(r.err, "--json takes a FILE and took '16,rest'")) << r;
}

TEST(Cli, VerifyWithoutDriver) {
  const auto r = run_cli({"verify", "16,rest"});
  expect_error(r, exit_no_driver);
  EXPECT_TRUE(contains(r.err, "no NVIDIA driver")) << r;
}

// ---- verify --processes ------------------------------------------------------------------------

TEST(Cli, VerifyProcessesChecksItsInputBeforeTheDriver) {
  auto r = run_cli({"verify", "16,rest", "--spin-ms", "50"});
  expect_error(r, exit_usage);
  EXPECT_TRUE(contains(r.err, "--processes")) << r; // the option needs --processes
  r = run_cli({"verify", "16,rest", "--processes", "--device", "all"});
  expect_error(r, exit_usage);
  EXPECT_TRUE(contains(r.err, "--processes verifies one GPU: name it with --device N")) << r;
  r = run_cli({"verify", "16,rest", "--processes", "--device", "0,1"});
  expect_error(r, exit_usage);
  r = run_cli({"verify", "16,,rest", "--processes"});
  expect_error(r, exit_usage);
  EXPECT_TRUE(contains(r.err, "empty")) << r;
  for (const char *bad : {"0", "10001", "1e3", "-1"}) {
    r = run_cli({"verify", "16,rest", "--processes", "--spin-ms", bad});
    expect_error(r, exit_usage);
  }
  r = run_cli({"verify", "16,rest", "--processes", "--rounds", "0"});
  expect_error(r, exit_usage);
  r = run_cli({"verify", "16,rest", "--processes", "--blocks-per-sm", "4"}); // the pieces' own
  expect_error(r, exit_usage);
  EXPECT_TRUE(contains(r.err, "--blocks-per-sm excludes --processes")) << r;
}

TEST(Cli, VerifyProcessesWithoutDriver) {
  const auto r = run_cli({"verify", "16,rest", "--processes"});
  expect_error(r, exit_no_driver);
  EXPECT_TRUE(contains(r.err, "no NVIDIA driver")) << r;
}

TEST(Cli, VerifyHelpShowsProcessesButNotTheInternalProbe) {
  auto r = run_cli({"verify", "--help"});
  EXPECT_EQ(r.exit_code, exit_ok) << r;
  EXPECT_TRUE(contains(r.out, "--processes")) << r;
  EXPECT_TRUE(contains(r.out, "--spin-ms")) << r;
  r = run_cli({"--help"});
  EXPECT_EQ(r.exit_code, exit_ok) << r;
  EXPECT_FALSE(contains(r.out, "verify-piece")) << r;
  // The probe itself needs a driver like every command that touches the GPU.
  expect_error(run_cli({"verify-piece"}), exit_no_driver);
}

TEST(Cli, DemoWithoutDriver) {
  expect_error(run_cli({"demo"}), exit_no_driver);
}

// ---- bench -------------------------------------------------------------------------------------

TEST(Cli, BenchWithoutDriver) {
  const auto r = run_cli({"bench", "--samples", "10"});
  expect_error(r, exit_no_driver);
  EXPECT_TRUE(contains(r.err, "no NVIDIA driver")) << r;
}

TEST(Cli, BenchRejectsBadOptions) {
  expect_error(run_cli({"bench", "--background", "disk"}), exit_usage);
  expect_error(run_cli({"bench", "--samples", "0"}), exit_usage);
  expect_error(run_cli({"bench", "--critical", "gemm", "--critical-gemm-n", "8"}), exit_usage);
  expect_error(run_cli({"bench", "--queue-depth", "0"}), exit_usage);
  for (const auto &[list, says] :
       {std::pair{"green,bogus", "'bogus' is not one of alone, alone_green, shared, priority, "
                                 "green, green_priority, trap"},
        std::pair{"green,alone_green,green", "'green' is named twice"}}) {
    const auto bad = run_cli({"bench", "--placements", list});
    expect_error(bad, exit_usage);
    EXPECT_TRUE(contains(bad.err, std::string("--placements: ") + says)) << bad;
  }
  for (const char *mode : {"comm", "adaptive"}) {
    const auto bad = run_cli({"bench", mode, "--background-thread"});
    expect_error(bad, exit_usage);
    EXPECT_TRUE(contains(bad.err, "--background-thread: is an option of the latency bench")) << bad;
  }
  // Good lists pass the checks and stop at the driver.
  expect_error(run_cli({"bench", "--placements", "alone_green, green", "--queue-depth", "8",
                        "--background-thread"}),
               exit_no_driver);
  const auto r = run_cli({"bench", "--from", "/nonexistent/run.json"});
  expect_error(r, exit_usage);
  EXPECT_TRUE(contains(r.err, "cannot read")) << r;
}

// Records of real runs (tests/data/, README.md there), re-reported without a GPU.
// GREENCTX_SOURCE_DIR in the environment overrides the build-time path (binaries copied elsewhere).
const std::string data_dir =
    std::string(std::getenv("GREENCTX_SOURCE_DIR") ? std::getenv("GREENCTX_SOURCE_DIR")
                                                   : GREENCTX_SOURCE_DIR) +
    "/tests/data/";

// --from reports a saved run as it was measured: an option that would change the measurement is
// refused, naming it; the outputs, --quiet, --check-targets and the choice of bench are kept.
TEST(Cli, OptionsThatWouldChangeNothingBesideFromAreRefused) {
  struct refusal {
    std::vector<std::string> args;
    const char *option, *record;
  };
  const refusal refused[] = {{{"info", "--device", "1"}, "--device", "info.json"},
                             {{"verify", "--blocks-per-sm", "3"}, "--blocks-per-sm", "verify.json"},
                             {{"split", "--dry-run"}, "--dry-run", "split.json"},
                             {{"tune", "--samples", "5"}, "--samples", "tune.json"},
                             {{"scale", "--sms", "8"}, "--sms", "scale.json"},
                             {{"bench", "--samples", "5"}, "--samples", "bench-latency.json"},
                             {{"bench", "comm", "--quick"}, "--quick", "bench-comm.json"}};
  for (const auto &[args, option, record] : refused) {
    std::vector<std::string> argv = args;
    argv.insert(argv.end(), {"--from", data_dir + record});
    const auto r = run_cli(argv);
    expect_error(r, exit_usage);
    EXPECT_TRUE(
        contains(r.err, std::string(option) + ": --from reports a saved run as it was measured"))
        << r;
  }
  // A saved comm run has no targets to check, as a measured one has none.
  const auto comm =
      run_cli({"bench", "comm", "--from", data_dir + "bench-comm.json", "--check-targets"});
  expect_error(comm, exit_usage);
  EXPECT_TRUE(
      contains(comm.err, "--check-targets: is an option of the latency bench and --adaptive"))
      << comm;
  EXPECT_EQ(run_cli({"tune", "--from", data_dir + "tune.json", "-q"}).exit_code, exit_ok);
  EXPECT_EQ(run_cli({"bench", "adaptive", "--from", data_dir + "bench-adaptive.json", "--quiet",
                     "--check-targets"})
                .exit_code,
            exit_ok);
}

// info, verify and split report a saved result again without a driver, exit by its verdict, and
// take their argument or --from, not both.
TEST(Cli, InfoVerifyAndSplitFromSavedResults) {
  temp_dir dir;
  const std::string json = (dir.path / "again.json").string();
  auto r = run_cli({"info", "--from", data_dir + "info.json", "--json", json});
  EXPECT_EQ(r.exit_code, exit_ok) << r;
  EXPECT_TRUE(contains(r.out, "NVIDIA H200")) << r;
  const auto again = run_cli({"info", "--from", json});
  EXPECT_EQ(again.exit_code, exit_ok) << again;
  EXPECT_EQ(again.out, r.out); // the record read back prints the same
  r = run_cli({"verify", "--from", data_dir + "verify.json"});
  EXPECT_EQ(r.exit_code, exit_ok) << r;
  EXPECT_TRUE(contains(r.out, "OK: every partition stayed within its SMs")) << r;
  EXPECT_TRUE(contains(r.out, "AAAABBCCCCCCCCCC")) << r; // the combined map
  r = run_cli({"split", "--from", data_dir + "split.json"});
  EXPECT_EQ(r.exit_code, exit_ok) << r;
  EXPECT_TRUE(contains(r.out, "15 x 8")) << r;
  r = run_cli({"verify", "--from", json});
  expect_error(r, exit_usage);
  EXPECT_TRUE(contains(r.err, "holds a greenctx.info result, not a greenctx.verify one")) << r;
  r = run_cli({"verify", "16,rest", "--from", json});
  expect_error(r, exit_usage);
  EXPECT_TRUE(contains(r.err, "give no SPLIT ('16,rest')")) << r;
  r = run_cli({"split"});
  expect_error(r, exit_usage);
  EXPECT_TRUE(contains(r.err, "REQUEST is required (or --from FILE")) << r;
}

// A tune of the H200 reported again in every format without a GPU, and its record read back to
// the same text; files of other kinds, and documents that are not records, are refused.
TEST(Cli, TuneFromASavedRun) {
  temp_dir dir;
  const std::string old = data_dir + "tune.json";
  const std::string json = (dir.path / "t.json").string(), csv = (dir.path / "t.csv").string(),
                    svg = (dir.path / "t.svg").string(), md = (dir.path / "t.md").string();
  const auto first = run_cli(
      {"tune", "--from", old, "--json", json, "--csv", csv, "--svg", svg, "--markdown", md});
  EXPECT_EQ(first.exit_code, exit_ok) << first;
  EXPECT_TRUE(contains(first.out, "use: 40,rest")) << first;
  EXPECT_TRUE(contains(first.out, "guided against exhaustive: 16 SMs against 40")) << first;
  const auto again = run_cli({"tune", "--from", json});
  EXPECT_EQ(again.exit_code, exit_ok) << again;
  EXPECT_EQ(again.out, first.out);
  for (const auto &f : {csv, svg, md})
    EXPECT_GT(std::filesystem::file_size(f), 100u) << f;
  const auto bench = run_cli({"tune", "--from", data_dir + "bench-latency.json"});
  expect_error(bench, exit_usage);
  EXPECT_TRUE(contains(bench.err, "holds a greenctx.bench result, not a greenctx.tune one"))
      << bench;
  // A document without a kind is no record.
  std::ofstream(dir.path / "kindless.json") << R"({"config": {"critical_sms": 16}})";
  const auto kindless = run_cli({"tune", "--from", (dir.path / "kindless.json").string()});
  expect_error(kindless, exit_usage);
  EXPECT_TRUE(contains(kindless.err, "is not a greenctx tune JSON file")) << kindless;
  std::ofstream(dir.path / "bad.json") << R"({"kind": "greenctx.tune", "schema": 2, "title": 3})";
  const auto bad = run_cli({"tune", "--from", (dir.path / "bad.json").string()});
  expect_error(bad, exit_usage);
  EXPECT_TRUE(contains(bad.err, "is not a greenctx tune JSON file")) << bad;
  const auto nowhere = run_cli({"tune", "--csv", "/nonexistent/t.csv"});
  expect_error(nowhere, exit_usage);
  EXPECT_TRUE(contains(nowhere.err, "the folder '/nonexistent' does not exist")) << nowhere;
}

TEST(Cli, BenchFromASavedRunThatMetItsTargets) {
  const auto r = run_cli({"bench", "--from", data_dir + "bench-latency.json", "--check-targets"});
  EXPECT_EQ(r.exit_code, exit_ok) << r;
  EXPECT_TRUE(contains(r.out, "every target met: yes")) << r;
  EXPECT_TRUE(contains(r.out, "0.935  <=   1.05  yes")) << r; // isolation
}

// A synthetic --adaptive run saved (its record) and re-reported without a GPU: --check-targets
// passes only when an adaptive configuration meets both targets; a plain bench file is refused.
std::string saved_adaptive_run(const std::filesystem::path &dir, double adaptive_spike_us) {
  namespace ad = greenctx::cli::bench::adaptive;
  const auto series = [](double spike) {
    greenctx::cli::bench::critical_stats c;
    for (int i = 0; i < 100; ++i) {
      c.host_us.push_back(i == 99 ? spike : 40);
      c.gpu_us.push_back(38);
    }
    c.host = greenctx::measure::summarize(c.host_us);
    c.gpu = greenctx::measure::summarize(c.gpu_us);
    return c;
  };
  ad::results r;
  r.device_sms = 132;
  r.critical_sms_obtained = 16;
  r.wide_sms_obtained = 116;
  r.narrow_sms_obtained = {32};
  r.cfg.shrink_to = {32};
  r.cfg.policies = {ad::policy::lead};
  r.configurations = {{"alone", "alone", 0, "", series(40), std::nullopt, {}},
                      {"static",
                       "static",
                       0,
                       "",
                       series(6340),
                       greenctx::cli::bench::background_rate{3.5e12, 1},
                       {}},
                      {"adaptive-32-lead",
                       "adaptive",
                       32,
                       "lead",
                       series(adaptive_spike_us),
                       greenctx::cli::bench::background_rate{3.0e12, 1},
                       {}}};
  const auto path = dir / ("adaptive-" + std::to_string(adaptive_spike_us) + ".json");
  std::ofstream(path)
      << greenctx::cli::report::to_json(ad::adaptive_record(r, {{"gpu", "Synthetic"}})).dump();
  return path.string();
}

TEST(Cli, AdaptiveBenchFromASavedRun) {
  temp_dir dir;
  // p99 = 40 + 0.01 x (spike - 40): 45 (isolation 1.125, met) and 50 (1.25, missed).
  const std::string met = saved_adaptive_run(dir.path, 540),
                    missed = saved_adaptive_run(dir.path, 1040);
  const std::string svg = (dir.path / "a.svg").string();
  auto r = run_cli({"bench", "--adaptive", "--from", met, "--check-targets", "--svg", svg});
  EXPECT_EQ(r.exit_code, exit_ok) << r;
  EXPECT_TRUE(contains(r.out, "1.125")) << r;
  EXPECT_TRUE(std::filesystem::file_size(svg) > 0);
  r = run_cli({"bench", "--adaptive", "--from", missed, "--check-targets"});
  EXPECT_EQ(r.exit_code, exit_check_failed) << r;
  EXPECT_TRUE(contains(r.out, "NO (isolation)")) << r;
  r = run_cli({"bench", "--adaptive", "--from", data_dir + "bench-latency.json"});
  expect_error(r, exit_usage);
  EXPECT_TRUE(contains(r.err, "not a greenctx.bench-adaptive one")) << r;
  // A run of the H200: some adaptive configuration met both.
  r = run_cli({"bench", "adaptive", "--from", data_dir + "bench-adaptive.json", "--check-targets"});
  EXPECT_EQ(r.exit_code, exit_ok) << r;
  EXPECT_TRUE(contains(r.out, "targets: both met by adaptive-8-reactive, adaptive-16-lead")) << r;
}

// `--json -` prints the document (with its kind and schema) instead of the report; `--json FILE`
// writes it beside the report; --from refuses a document of another command, naming it.
TEST(Cli, SavedRunsAreDocumentsOfOneKind) {
  temp_dir dir;
  const std::string saved = saved_adaptive_run(dir.path, 540);
  auto r = run_cli({"bench", "--adaptive", "--from", saved, "--json", "-"});
  EXPECT_EQ(r.exit_code, exit_ok) << r;
  const nlohmann::json j = nlohmann::json::parse(r.out); // stdout is the JSON alone
  EXPECT_EQ(j["kind"], "greenctx.bench-adaptive");
  EXPECT_EQ(j["schema"], 2); // the record's
  const std::string again = (dir.path / "again.json").string();
  r = run_cli({"bench", "--adaptive", "--from", saved, "--json", again});
  EXPECT_EQ(r.exit_code, exit_ok) << r;
  EXPECT_TRUE(contains(r.out, "1.125")) << r; // the report is printed as well
  std::ifstream f(again);
  EXPECT_EQ(nlohmann::json::parse(f), j);
  r = run_cli({"bench", "--from", again});
  expect_error(r, exit_usage);
  EXPECT_TRUE(contains(r.err, "holds a greenctx.bench-adaptive result, not a greenctx.bench one"))
      << r;
  r = run_cli({"scale", "--from", again});
  expect_error(r, exit_usage);
  EXPECT_TRUE(contains(r.err, "not a greenctx.scale one")) << r;
}

// bench's modes by name: `bench adaptive` is `bench --adaptive`, `bench comm` is `bench --comm`.
TEST(Cli, BenchModesAreNamed) {
  temp_dir dir;
  const std::string saved = saved_adaptive_run(dir.path, 540);
  const std::string stamped = (dir.path / "stamped.json").string();
  const auto named = run_cli({"bench", "adaptive", "--from", saved, "--json", stamped});
  const auto flagged = run_cli({"bench", "--adaptive", "--from", saved});
  EXPECT_EQ(named.exit_code, exit_ok) << named;
  EXPECT_EQ(named.out, flagged.out);
  auto r = run_cli({"bench", "latency", "--from", stamped});
  expect_error(r, exit_usage); // the latency bench's reader refuses the adaptive document
  EXPECT_TRUE(contains(r.err, "not a greenctx.bench one")) << r;
  r = run_cli({"bench", "comm", "--adaptive"});
  expect_error(r, exit_usage);
  EXPECT_TRUE(contains(r.err, "bench comm and --adaptive are two different benches")) << r;
  r = run_cli({"bench", "latency", "--comm"});
  expect_error(r, exit_usage);
  EXPECT_TRUE(contains(r.err, "bench latency and --comm are two different benches")) << r;
  r = run_cli({"bench", "adaptive", "--comm-sms", "8"});
  expect_error(r, exit_usage);
  EXPECT_TRUE(contains(r.err, "is an option of --comm")) << r;
  expect_error(run_cli({"bench", "throughput"}), exit_usage);
}

// info, verify and split check a --json FILE before they touch the driver.
TEST(Cli, JsonFilesInMissingFoldersAreRefusedFirst) {
  for (const std::vector<std::string> &args :
       {std::vector<std::string>{"info"}, {"verify", "16,rest"}, {"split", "16"}}) {
    std::vector<std::string> full = args;
    full.insert(full.end(), {"--json", "/nonexistent-greenctx-folder/x.json"});
    const auto r = run_cli(full);
    expect_error(r, exit_usage);
    EXPECT_TRUE(contains(r.err, "cannot write --json '/nonexistent-greenctx-folder/x.json'")) << r;
  }
}

// A scale run of the H200 (a GEMM by wall time) reported again, its points' table as CSV.
TEST(Cli, ScaleFromASavedRun) {
  temp_dir dir;
  const std::string csv = (dir.path / "scale.csv").string();
  const auto r = run_cli({"scale", "--from", data_dir + "scale.json", "--csv", csv});
  EXPECT_EQ(r.exit_code, exit_ok) << r;
  EXPECT_TRUE(contains(r.out, "unconfined: all 132 SMs, no green context")) << r;
  std::ifstream f(csv);
  std::string header, first;
  std::getline(f, header);
  std::getline(f, first);
  EXPECT_EQ(header, "sms,median,min,max,rsd,vs_smallest,ideal,vs_unconfined,runs,status");
  EXPECT_TRUE(first.starts_with("8,4.5")) << first;
  EXPECT_TRUE(first.ends_with(",3,ok")) << first;
  // That run timed the whole program, and the program was told the device's SM count.
  EXPECT_TRUE(contains(r.out, "figure: wall time of the whole program")) << r;
  EXPECT_TRUE(contains(r.out, "told the device's 132 SMs")) << r;
  const auto again = run_cli({"scale", "--from", data_dir + "scale.json", "--metric", "gpu-time"});
  expect_error(again, exit_usage);
  EXPECT_TRUE(contains(again.err, "--metric: --from reports a saved run as it was measured"))
      << again;
}

// `greenctx run` end to end over the tests' fake driver (tests/preload/fake_cuda.cpp: two GPUs of
// 132 SMs in units of 8): the checks pass, and the program is exec'd with the protocol's settings.
const std::string fake_driver = std::string("GREENCTX_LIBCUDA=") + GREENCTX_FAKE_CUDA_PATH;

// The test binary copied to another machine (scripts/stage-gpu.sh) has no fake driver beside it.
#define GREENCTX_NEEDS_FAKE_DRIVER()                                                               \
  if (!std::filesystem::exists(GREENCTX_FAKE_CUDA_PATH))                                           \
  GTEST_SKIP() << "the fake driver " GREENCTX_FAKE_CUDA_PATH " is not on this machine"

TEST(Cli, RunExecsTheProgramWithTheProtocolEnvironment) {
  GREENCTX_NEEDS_FAKE_DRIVER();
  const std::string show =
      "echo \"$GREENCTX_RUN_SMS $GREENCTX_RUN_DEVICES $GREENCTX_RUN_SPLIT_FLAGS "
      "${GREENCTX_RUN_STRICT:-none}\"; case \"$LD_PRELOAD\" in *libgreenctx_preload.so*) echo "
      "preloaded;; esac; [ \"$GREENCTX_RUN_ROOT_PID\" = \"$$\" ] && echo same-process";
  auto r = run_cli({"run", "--sms", "16", "--", "sh", "-c", show}, {fake_driver});
  EXPECT_EQ(r.exit_code, exit_ok) << r;
  EXPECT_TRUE(contains(r.out, "16 all 0 none\n")) << r;
  EXPECT_TRUE(contains(r.out, "preloaded\n")) << r;
  EXPECT_TRUE(contains(r.out, "same-process\n")) << r << "greenctx run must exec the program";

  r = run_cli({"run", "--sms", "016", "--device", "1", "--strict", "--ignore-coscheduling", "--",
               "sh", "-c", show},
              {fake_driver});
  EXPECT_EQ(r.exit_code, exit_ok) << r;
  EXPECT_TRUE(contains(r.out, "16 1 1 1\n")) << r;
}

// --cuda-13.1: alone (nothing confined), with --sms, refused with a stray --piece or an option of
// the confinement, and said where the driver has 13.1 itself or is older than 13.0
// (GREENCTX_FAKE_DRIVER_VERSION).
TEST(Cli, RunGivesTheCuda131Api) {
  GREENCTX_NEEDS_FAKE_DRIVER();
  const std::string show = "echo \"${GREENCTX_RUN_CUDA_13_1:-off} sms=${GREENCTX_RUN_SMS:-unset} "
                           "devices=${GREENCTX_RUN_DEVICES:-unset}\"";
  auto r = run_cli({"run", "--cuda-13.1", "--", "sh", "-c", show}, {fake_driver});
  EXPECT_EQ(r.exit_code, exit_ok) << r;
  EXPECT_TRUE(contains(r.out, "1 sms=unset devices=unset\n")) << r;
  EXPECT_EQ(r.err, "") << r;
  r = run_cli({"run", "--cuda-13.1", "--sms", "16", "--", "sh", "-c", show}, {fake_driver});
  EXPECT_EQ(r.exit_code, exit_ok) << r;
  EXPECT_TRUE(contains(r.out, "1 sms=16 devices=all\n")) << r;
  r = run_cli({"run", "--sms", "16", "--", "sh", "-c", show}, {fake_driver});
  EXPECT_TRUE(contains(r.out, "off sms=16")) << r << "off unless asked";
  expect_error(run_cli({"run", "--cuda-13.1", "--piece", "1", "--", "true"}, {fake_driver}),
               exit_usage);
  for (const char *confining : {"--real-sm-count", "--ignore-coscheduling"}) {
    r = run_cli({"run", "--cuda-13.1", confining, "--", "true"}, {fake_driver});
    expect_error(r, exit_usage); // it would confine nothing, so it would be ignored
    EXPECT_TRUE(contains(r.err, std::string(confining) + ": says how to confine the program")) << r;
  }
  r = run_cli({"run", "--cuda-13.1", "--", "true"},
              {fake_driver, "GREENCTX_FAKE_DRIVER_VERSION=13010"});
  EXPECT_EQ(r.exit_code, exit_ok) << r;
  EXPECT_TRUE(contains(r.err, "which has the 13.1 green-context entry points itself")) << r;
  r = run_cli({"run", "--cuda-13.1", "--", "true"},
              {fake_driver, "GREENCTX_FAKE_DRIVER_VERSION=12080"});
  EXPECT_EQ(r.exit_code, exit_ok) << r;
  EXPECT_TRUE(contains(r.err, "CUDA 13 runtimes refuse drivers older than 13.0")) << r;
  r = run_cli({"run", "--cuda-13.1", "--", "true"},
              {fake_driver, "GREENCTX_FAKE_DRIVER_VERSION=12030"});
  EXPECT_EQ(r.exit_code, exit_unsupported) << r;
  EXPECT_TRUE(contains(r.err, "which has no green contexts")) << r;
}

TEST(Cli, RunTakesAPieceOfASplit) {
  GREENCTX_NEEDS_FAKE_DRIVER();
  const std::string show =
      "echo \"sms=${GREENCTX_RUN_SMS:-unset} split=$GREENCTX_RUN_SPLIT piece=$GREENCTX_RUN_PIECE\"";
  const std::string mps = "GREENCTX_FAKE_MPS=1";
  auto r = run_cli({"run", "--split", "16,rest", "--piece", "1", "--", "sh", "-c", show},
                   {fake_driver, mps});
  EXPECT_EQ(r.exit_code, exit_ok) << r;
  EXPECT_TRUE(contains(r.out, "sms=unset split=16,rest piece=1\n")) << r;
  EXPECT_FALSE(contains(r.err, "MPS")) << r;
  // Without MPS the pieces' processes time-slice: said, and refused with --strict.
  r = run_cli({"run", "--split", "8,24,rest", "--piece", "0", "--device", "0", "--", "true"},
              {fake_driver});
  EXPECT_EQ(r.exit_code, exit_ok) << r;
  EXPECT_TRUE(contains(r.err, "MPS is not active on device 0: processes on pieces of '8,24,rest' "
                              "would take turns on the GPU"))
      << r;
  EXPECT_TRUE(contains(r.err, "nvidia-cuda-mps-control -d")) << r;
  r = run_cli({"run", "--strict", "--split", "16,rest", "--piece", "0", "--", "true"},
              {fake_driver});
  EXPECT_EQ(r.exit_code, exit_usage) << r;
  EXPECT_TRUE(contains(r.err, "(--strict refuses to run without)")) << r;
  // MPS's active-thread percentage below 100 and green-context splits do not combine (refused);
  // without MPS the variable does nothing, and 100 changes nothing.
  for (const char *pct : {"50", "88", "abc", ""}) {
    r = run_cli({"run", "--split", "16,rest", "--piece", "0", "--", "true"},
                {fake_driver, mps, std::string("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=") + pct});
    EXPECT_EQ(r.exit_code, exit_usage) << pct << r;
    EXPECT_TRUE(contains(r.err, std::string("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=") + pct +
                                    " is set and device 0 is an MPS client"))
        << r;
  }
  r = run_cli({"run", "--sms", "16", "--", "true"},
              {fake_driver, mps, "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50"});
  EXPECT_EQ(r.exit_code, exit_usage) << r;
  r = run_cli({"run", "--split", "16,rest", "--piece", "0", "--", "true"},
              {fake_driver, mps, "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=100"});
  EXPECT_EQ(r.exit_code, exit_ok) << r;
  r = run_cli({"run", "--sms", "16", "--", "true"},
              {fake_driver, "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50"});
  EXPECT_EQ(r.exit_code, exit_ok) << r;
  // Bad input, each before the program runs.
  r = run_cli({"run", "--split", "16,rest", "--piece", "2", "--", "true"}, {fake_driver, mps});
  EXPECT_EQ(r.exit_code, exit_usage) << r;
  EXPECT_TRUE(contains(r.err, "--piece 2: '16,rest' has 2 pieces, 0 to 1")) << r;
  r = run_cli({"run", "--split", "200,rest", "--piece", "0", "--", "true"}, {fake_driver, mps});
  EXPECT_EQ(r.exit_code, exit_usage) << r;
  EXPECT_TRUE(contains(r.err, "asks 200 SMs but the GPU has 132")) << r;
  for (const std::vector<std::string> &args :
       {std::vector<std::string>{"run", "--split", "16,rest", "--", "true"},
        std::vector<std::string>{"run", "--sms", "16", "--split", "16,rest", "--piece", "0", "--",
                                 "true"},
        std::vector<std::string>{"run", "--piece", "0", "--", "true"}}) {
    r = run_cli(args, {fake_driver});
    EXPECT_EQ(r.exit_code, exit_usage) << r;
    EXPECT_TRUE(contains(r.err, "give either --sms N or --split S with --piece I")) << r;
  }
  r = run_cli({"run", "--split", "16,bogus", "--piece", "0", "--", "true"}, {fake_driver});
  EXPECT_EQ(r.exit_code, exit_usage) << r;
  EXPECT_TRUE(contains(r.err, "'bogus'")) << r;
  r = run_cli({"run", "--split", "16,rest", "--piece", "-1", "--", "true"}, {fake_driver});
  EXPECT_EQ(r.exit_code, exit_usage) << r;
}

// greenctx mps over a stand-in for nvidia-cuda-mps-control (tests/cpu/fake_mps_control.sh).
TEST(Cli, MpsStartsStopsAndShowsTheDaemon) {
  temp_dir dir;
  const std::string fake = std::string(GREENCTX_SOURCE_DIR) + "/tests/cpu/fake_mps_control.sh";
  const std::string pipes = (dir.path / "pipes").string(), logs = (dir.path / "logs").string();
  const std::vector<std::string> where = {"--pipe-dir", pipes, "--control", fake};
  auto with = [&](std::vector<std::string> args, bool log_dir = false) {
    args.insert(args.end(), where.begin(), where.end());
    if (log_dir) {
      args.push_back("--log-dir");
      args.push_back(logs);
    }
    return run_cli(args);
  };
  auto r = with({"mps", "status"});
  EXPECT_EQ(r.exit_code, exit_check_failed) << r;
  EXPECT_TRUE(contains(r.out, "MPS control daemon: not running in " + pipes)) << r;

  r = with({"mps", "start"}, true);
  EXPECT_EQ(r.exit_code, exit_ok) << r;
  EXPECT_TRUE(contains(r.out, "started the MPS control daemon (pipes in " + pipes + ", logs in " +
                                  logs + ")"))
      << r;
  EXPECT_TRUE(contains(r.out, "export it for those processes")) << r;
  EXPECT_TRUE(contains(r.out, "Stop it with: greenctx mps stop --pipe-dir " + pipes)) << r;
  EXPECT_TRUE(std::filesystem::is_directory(logs)) << "the log folder is made";
  std::ifstream calls(dir.path / "calls.log");
  const std::string log((std::istreambuf_iterator<char>(calls)), std::istreambuf_iterator<char>());
  EXPECT_TRUE(contains(log, "-d pipe=" + pipes + " log=" + logs)) << log;

  r = with({"mps", "start"}, true);
  EXPECT_EQ(r.exit_code, exit_ok) << r;
  EXPECT_TRUE(contains(r.out, "already answers in " + pipes + ": nothing started")) << r;
  r = with({"mps", "status"});
  EXPECT_EQ(r.exit_code, exit_ok) << r;
  EXPECT_TRUE(contains(r.out, "running in " + pipes)) << r;

  r = with({"mps", "stop"});
  EXPECT_EQ(r.exit_code, exit_ok) << r;
  EXPECT_TRUE(contains(r.out, "stopped the MPS control daemon in " + pipes)) << r;
  r = with({"mps", "stop"});
  EXPECT_EQ(r.exit_code, exit_check_failed) << r;
  EXPECT_TRUE(contains(r.out, "nothing to stop")) << r;

  // A daemon that does not start, a control program that is not there, no subcommand.
  r = run_cli({"mps", "start", "--pipe-dir", pipes, "--log-dir", logs, "--control", fake},
              {"FAKE_MPS_REFUSE=1"});
  EXPECT_EQ(r.exit_code, exit_unsupported) << r;
  EXPECT_TRUE(contains(r.err, "did not start a daemon (exit 1): An instance of this daemon is "
                              "already running"))
      << r;
  r = run_cli({"mps", "status", "--control", "/nonexistent/nvidia-cuda-mps-control"});
  EXPECT_EQ(r.exit_code, exit_usage) << r;
  EXPECT_TRUE(contains(r.err, "MPS comes with the NVIDIA driver")) << r;
  EXPECT_EQ(run_cli({"mps"}).exit_code, exit_usage);
}

TEST(Cli, InfoSaysWhetherMpsIsActive) {
  GREENCTX_NEEDS_FAKE_DRIVER();
  auto r = run_cli({"info", "--device", "0"}, {fake_driver});
  EXPECT_EQ(r.exit_code, exit_ok) << r;
  EXPECT_TRUE(contains(r.out, "note: GPU 0: MPS not active: processes on this GPU time-slice"))
      << r;
  r = run_cli({"info", "--device", "0"}, {fake_driver, "GREENCTX_FAKE_MPS=1"});
  EXPECT_TRUE(contains(r.out, "note: GPU 0: MPS active: this process is an MPS client")) << r;
  r = run_cli({"info", "--json", "-"}, {fake_driver, "GREENCTX_FAKE_MPS=1"});
  EXPECT_EQ(r.exit_code, exit_ok) << r;
  // The driver's values, one row per GPU in the table "gpus" (schema 2: a record).
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["kind"], "greenctx.info");
  EXPECT_EQ(j["schema"], 2);
  const nlohmann::json &rows = j["tables"]["gpus"]["rows"];
  ASSERT_EQ(rows.size(), j["values"]["device_count"]["value"].get<std::size_t>()) << j;
  EXPECT_EQ(rows[0]["mps"], "active") << j;
  EXPECT_GT(rows[0]["sm_count"].get<unsigned>(), 0u) << j;
  EXPECT_EQ(j["environment"]["driver_version"]["value"], "13.0") << j;
  EXPECT_FALSE(j["tables"]["features"]["rows"].empty()) << j;
}

// A libcuda that lacks an entry point greenctx calls (the fake driver has no cuMemAlloc) is
// refused with the entry point named, exit 4: the call went through a null pointer (SIGSEGV).
TEST(Cli, AnIncompleteDriverIsNamedNotCalled) {
  GREENCTX_NEEDS_FAKE_DRIVER();
  const auto r = run_cli({"verify", "16,rest"}, {fake_driver});
  EXPECT_EQ(r.exit_code, exit_unsupported) << r;
  EXPECT_TRUE(contains(r.err, "does not provide cuMemAlloc")) << r;
  EXPECT_TRUE(contains(r.err, "stub or an incomplete libcuda")) << r;
}

// An installed greenctx finds its preload library in the library folder of every usual layout
// (lib, lib64, Debian's lib/x86_64-linux-gnu, and the one this build would install to), and says
// where it looked when there is none: the built binary copied into PREFIX/bin, the library into
// PREFIX/LIBDIR.
TEST(Cli, RunFindsItsPreloadLibraryInEachInstallLayout) {
  GREENCTX_NEEDS_FAKE_DRIVER();
  const std::string built = cli_path();
  const std::string preload = built_preload_library();
  struct cli_override {
    explicit cli_override(const std::string &path) { setenv("GREENCTX_CLI", path.c_str(), 1); }
    ~cli_override() { unsetenv("GREENCTX_CLI"); }
  };
  for (const char *libdir :
       {"lib", "lib64", "lib/x86_64-linux-gnu", GREENCTX_TEST_INSTALL_LIBDIR}) {
    temp_dir prefix;
    std::filesystem::create_directories(prefix.path / "bin");
    std::filesystem::copy_file(built, prefix.path / "bin" / "greenctx");
    const cli_override installed((prefix.path / "bin" / "greenctx").string());
    auto r = run_cli({"run", "--sms", "16", "--", "true"}, {fake_driver});
    EXPECT_EQ(r.exit_code, exit_unsupported) << libdir << ": no library installed yet\n" << r;
    EXPECT_TRUE(contains(r.err, "libgreenctx_preload.so, which greenctx run and scale need, is "
                                "in none of"))
        << r;
    std::filesystem::create_directories(prefix.path / libdir);
    std::filesystem::copy_file(preload, prefix.path / libdir / "libgreenctx_preload.so");
    r = run_cli({"run", "--sms", "16", "--", "true"}, {fake_driver});
    EXPECT_EQ(r.exit_code, exit_ok) << libdir << "\n" << r;
  }
}

TEST(Cli, RunRealSmCountTellsTheProgramTheDevicesCount) {
  GREENCTX_NEEDS_FAKE_DRIVER();
  const std::string show = "echo \"real=${GREENCTX_RUN_REAL_SM_COUNT:-unset}\"";
  auto r =
      run_cli({"run", "--sms", "16", "--real-sm-count", "--", "sh", "-c", show}, {fake_driver});
  EXPECT_EQ(r.exit_code, exit_ok) << r;
  EXPECT_TRUE(contains(r.out, "real=1\n")) << r;
  r = run_cli({"run", "--sms", "16", "--", "sh", "-c", show},
              {fake_driver, "GREENCTX_RUN_REAL_SM_COUNT=1"});
  EXPECT_EQ(r.exit_code, exit_ok) << r;
  EXPECT_TRUE(contains(r.out, "real=unset\n")) << "an inherited setting is removed\n" << r;
}

// `greenctx scale` end to end over the fake driver. The program stands in for the preload
// library (which sees no CUDA in sh): it appends the report line a CUDA program would leave, its
// GPU phase 32/N s long (32/132 unconfined).
const std::string fake_cuda_program =
    R"sh(echo "{\"cuda_used\":true,\"confined_devices\":[0],\"first_work_ns\":1000,)sh"
    R"sh(\"last_sync_ns\":$(( 1000 + 32000000000 / ${GREENCTX_RUN_SMS:-132} ))}" )sh"
    R"sh(>> "${GREENCTX_RUN_REPORT:-/dev/null}"; echo "took $(( 64 / ${GREENCTX_RUN_SMS:-128} )).5 ms")sh";

TEST(Cli, ScaleMeasuresTheGpuPhase) {
  GREENCTX_NEEDS_FAKE_DRIVER();
  temp_dir dir;
  const std::string json = (dir.path / "scale.json").string();
  const auto r = run_cli({"scale", "-q", "--sms", "16,64", "--repeat", "1", "--metric", "gpu-time",
                          "--json", json, "--", "sh", "-c", fake_cuda_program},
                         {fake_driver});
  EXPECT_EQ(r.exit_code, exit_ok) << r;
  EXPECT_TRUE(contains(r.out, "figure: GPU phase (first kernel launch to last synchronization), s"))
      << r;
  EXPECT_TRUE(contains(r.out, "2.000")) << "32/16 s at 16 SMs\n" << r;
  EXPECT_TRUE(contains(r.out, "0.242")) << "32/132 s unconfined: its library measured\n" << r;
  EXPECT_TRUE(contains(r.out, " 4.00 ")) << r;
  EXPECT_TRUE(contains(r.out, "the program was told 16 to 64 SMs (the partition's")) << r;
  std::ifstream f(json);
  const auto j = nlohmann::json::parse(f);
  EXPECT_EQ(j["kind"], "greenctx.scale");
  EXPECT_EQ(j["config"]["metric_spec"]["value"], "gpu-time") << j;
  EXPECT_EQ(j["tables"]["runs"]["rows"].size(), 3u) << "16, 64 and unconfined, once each\n" << j;
}

TEST(Cli, ScaleReadsAPrintedNumberAndPassesTheOutputOn) {
  GREENCTX_NEEDS_FAKE_DRIVER();
  auto r = run_cli({"scale", "-q", "--sms", "16,32", "--repeat", "1", "--warmup", "0",
                    "--real-sm-count", "--metric", "regex:took ([0-9.]+) ms", "--metric-unit", "ms",
                    "--", "sh", "-c", fake_cuda_program},
                   {fake_driver});
  EXPECT_EQ(r.exit_code, exit_ok) << r;
  EXPECT_TRUE(r.out.starts_with("took 4.5 ms\ntook 2.5 ms\ntook 0.5 ms\n")) << "teed\n" << r;
  EXPECT_TRUE(contains(r.out, "figure: printed number 'took ([0-9.]+) ms', ms")) << r;
  EXPECT_TRUE(contains(r.out, " 1.80 ")) << "4.5 ms / 2.5 ms\n" << r;
  EXPECT_TRUE(contains(r.out, "the device's 132 SMs (--real-sm-count)")) << r;

  r = run_cli({"scale", "-q", "--sms", "16", "--repeat", "1", "--metric", "regex:took ([0-9.]+) s",
               "--", "sh", "-c", fake_cuda_program},
              {fake_driver});
  EXPECT_EQ(r.exit_code, exit_check_failed) << r;
  EXPECT_TRUE(contains(r.err, "run 1 of 3 (warm-up 1 of 1, 16 SMs): printed nothing matching "
                              "'took ([0-9.]+) s' (1 line on stdout; the last: 'took 4.5 ms')"))
      << r;
}

TEST(Cli, RunEndsAsTheProgramEnds) {
  GREENCTX_NEEDS_FAKE_DRIVER();
  EXPECT_EQ(run_cli({"run", "--sms", "16", "--", "sh", "-c", "exit 7"}, {fake_driver}).exit_code,
            7);
  // An ignored SIGHUP (nohup) stays ignored in the program.
  struct sigaction ignore {
  }, old{};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  sigaction(SIGHUP, &ignore, &old);
  const auto r = run_cli({"run", "--sms", "16", "--", "sh", "-c", "kill -HUP $$; echo survived"},
                         {fake_driver});
  sigaction(SIGHUP, &old, nullptr);
  EXPECT_EQ(r.exit_code, exit_ok) << r;
  EXPECT_TRUE(contains(r.out, "survived")) << r;
}

TEST(Cli, RunChecksTheCountOnEveryDevice) {
  GREENCTX_NEEDS_FAKE_DRIVER();
  auto r = run_cli({"run", "--sms", "12", "--", "true"}, {fake_driver});
  EXPECT_EQ(r.exit_code, exit_usage) << r;
  EXPECT_TRUE(contains(r.err, "--sms 12")) << r;
  r = run_cli({"run", "--sms", "16", "--device", "2", "--", "true"}, {fake_driver});
  EXPECT_EQ(r.exit_code, exit_usage) << r;
  EXPECT_TRUE(contains(r.err, "2 GPUs")) << r;
}

TEST(Cli, RunSaysWhenTheProgramNeverUsedCuda) {
  GREENCTX_NEEDS_FAKE_DRIVER();
  const auto r = run_cli({"run", "--sms", "16", "--", "true"}, {fake_driver});
  EXPECT_EQ(r.exit_code, exit_ok) << r;
  EXPECT_TRUE(contains(r.err, "never used CUDA")) << r;
  EXPECT_FALSE(contains(run_cli({"run", "-q", "--sms", "16", "--", "true"}, {fake_driver}).err,
                        "never used CUDA"));
}

TEST(Cli, BenchFromASavedRunThatMissedATarget) {
  const auto r =
      run_cli({"bench", "--from", data_dir + "bench-latency-missed.json", "--check-targets"});
  EXPECT_EQ(r.exit_code, 1) << r; // isolation 1.052 > 1.05
  EXPECT_TRUE(contains(r.out, "1.052")) << r;
}

} // namespace
