// SPDX-License-Identifier: Apache-2.0
// greenctx mps start|stop|status: the MPS control daemon that lets the processes given the pieces
// of one split (greenctx run --split S --piece I) run side by side instead of time-slicing. It
// runs NVIDIA's nvidia-cuda-mps-control with the pipe and log folders the user names and says what
// that changes on the machine. greenctx's own tests never leave a daemon running.
#include "common/cli_common.hpp"
#include "common/help.hpp"
#include "commands/commands.hpp"
#include "common/process.hpp"

#include <fmt/format.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace greenctx::cli {
namespace {

constexpr const char *api = "greenctx mps";

struct mps_options {
  std::string pipe_dir; ///< empty: $CUDA_MPS_PIPE_DIRECTORY, else MPS's default
  std::string log_dir;  ///< empty: $CUDA_MPS_LOG_DIRECTORY, else MPS's default
  std::string control = "nvidia-cuda-mps-control";
};

std::string from_env_or(const std::string &given, const char *name, const char *fallback) {
  if (!given.empty())
    return given;
  const char *v = std::getenv(name);
  return v && *v ? v : fallback;
}

std::string pipe_dir(const mps_options &o) {
  return from_env_or(o.pipe_dir, "CUDA_MPS_PIPE_DIRECTORY", "/tmp/nvidia-mps");
}
std::string log_dir(const mps_options &o) {
  return from_env_or(o.log_dir, "CUDA_MPS_LOG_DIRECTORY", "/var/log/nvidia-mps");
}

struct control_result {
  int exit_code = -1;
  std::string output; ///< stdout and stderr together
};

// Runs the control program with `args`, the folders in its environment and `input` on its stdin.
// Its output goes to a file, not a pipe: the daemon (-d) may keep the descriptors it inherited.
control_result control(const mps_options &o, const std::vector<std::string> &args,
                       const std::string &input) {
  std::string program;
  try {
    program = process::find_program(o.control, api);
  } catch (const request_error &e) {
    throw request_error(CUDA_ERROR_INVALID_VALUE, api,
                        std::string(e.what()) +
                            " (MPS comes with the NVIDIA driver: nvidia-cuda-mps-control; "
                            "--control names another path)");
  }
  const process::descriptor out = process::scratch_file(api);
  process::pipe_ends in = process::make_pipe(api);
  std::vector<std::string> argv{program};
  argv.insert(argv.end(), args.begin(), args.end());
  process::child running =
      process::spawn({program,
                      argv,
                      process::environment_with({"CUDA_MPS_PIPE_DIRECTORY=" + pipe_dir(o),
                                                 "CUDA_MPS_LOG_DIRECTORY=" + log_dir(o)}),
                      {in.read.get(), out.get(), out.get()},
                      nullptr},
                     api);
  in.read.reset();
  // A control program that exits without reading must not end greenctx with SIGPIPE.
  struct sigaction ignore {
  }, old{};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  sigaction(SIGPIPE, &ignore, &old);
  process::write_all(in.write.get(), input); // when it exits without reading, its status says why
  in.write.reset();
  sigaction(SIGPIPE, &old, nullptr);
  const process::end_status end = running.wait();
  return {end.shell_code(), process::contents(out.get())};
}

bool running(const mps_options &o) {
  return control(o, {}, "get_server_list\n").exit_code == 0;
}

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' '))
    s.pop_back();
  return s;
}

int run_start(const mps_options &o) {
  const std::string pipes = pipe_dir(o), logs = log_dir(o);
  if (running(o)) {
    std::printf("greenctx mps: an MPS control daemon already answers in %s: nothing started\n",
                pipes.c_str());
    return exit_ok;
  }
  for (const std::string &dir : {pipes, logs}) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec)
      throw request_error(CUDA_ERROR_INVALID_VALUE, api,
                          fmt::format("cannot make the folder {}: {} (name folders you can write "
                                      "with --pipe-dir and --log-dir)",
                                      dir, ec.message()));
  }
  const control_result r = control(o, {"-d"}, "");
  if (r.exit_code != 0 || !running(o))
    throw error(CUDA_ERROR_NOT_SUPPORTED, api,
                fmt::format("{} -d did not start a daemon (exit {}){}", o.control, r.exit_code,
                            r.output.empty() ? "" : ": " + trimmed(r.output)));
  std::printf(
      "greenctx mps: started the MPS control daemon (pipes in %s, logs in %s).\n"
      "From now on every CUDA process of this user that finds its pipes (CUDA_MPS_PIPE_DIRECTORY=%s"
      "%s) is an MPS client: processes on one GPU share it side by side instead of taking turns, "
      "and the green contexts of greenctx run --split S --piece I hold disjoint SMs.\n"
      "Stop it with: greenctx mps stop%s\n",
      pipes.c_str(), logs.c_str(), pipes.c_str(),
      pipes == "/tmp/nvidia-mps" ? ", the default" : "; export it for those processes",
      o.pipe_dir.empty() ? "" : (" --pipe-dir " + o.pipe_dir).c_str());
  return exit_ok;
}

int run_stop(const mps_options &o) {
  const std::string pipes = pipe_dir(o);
  if (!running(o)) {
    std::printf("greenctx mps: no MPS control daemon answers in %s: nothing to stop\n",
                pipes.c_str());
    return exit_check_failed;
  }
  const control_result r = control(o, {}, "quit\n");
  for (int i = 0; i < 50 && running(o); ++i)
    usleep(100 * 1000);
  if (running(o))
    throw error(CUDA_ERROR_NOT_SUPPORTED, api,
                fmt::format("the daemon in {} still answers after 'quit' (exit {}{})", pipes,
                            r.exit_code, r.output.empty() ? "" : ": " + trimmed(r.output)));
  std::printf("greenctx mps: stopped the MPS control daemon in %s; CUDA processes started from "
              "now on time-slice the GPU again\n",
              pipes.c_str());
  return exit_ok;
}

int run_status(const mps_options &o) {
  const std::string pipes = pipe_dir(o);
  const control_result r = control(o, {}, "get_server_list\n");
  if (r.exit_code != 0) {
    std::printf("MPS control daemon: not running in %s\n", pipes.c_str());
    return exit_check_failed;
  }
  const std::string servers = trimmed(r.output);
  std::printf("MPS control daemon: running in %s; servers: %s\n", pipes.c_str(),
              servers.empty() ? "none yet (one starts with the first client)" : servers.c_str());
  return exit_ok;
}

void add_folders(CLI::App &cmd, mps_options &o, bool logs) {
  cmd.add_option("--pipe-dir", o.pipe_dir,
                 "The daemon's pipe folder (default: $CUDA_MPS_PIPE_DIRECTORY, else "
                 "/tmp/nvidia-mps); clients find the daemon through it");
  if (logs)
    cmd.add_option("--log-dir", o.log_dir,
                   "The daemon's log folder (default: $CUDA_MPS_LOG_DIRECTORY, else "
                   "/var/log/nvidia-mps, which needs root)");
  cmd.add_option("--control", o.control,
                 "The MPS control program (default: nvidia-cuda-mps-control on PATH)");
}

} // namespace

void add_mps(CLI::App &app, action &run) {
  const std::string footer = exit_footer("stop or status: no daemon answers");
  const auto [cmd, opt] = add_command<mps_options>(
      app, "mps",
      "Start, stop or show the MPS control daemon, under which the processes given the pieces of "
      "one split (greenctx run --split S --piece I) run side by side",
      footer);
  cmd->require_subcommand(1);
  auto *start = cmd->add_subcommand("start", "Start the daemon (nvidia-cuda-mps-control -d) with "
                                             "the folders given, and say what that changes");
  start->footer(footer);
  add_folders(*start, *opt, true);
  run_with(*start, run, opt, run_start);
  auto *stop = cmd->add_subcommand("stop", "Stop the daemon (its 'quit' command); exit 1 when "
                                           "none answers");
  stop->footer(footer);
  add_folders(*stop, *opt, false);
  run_with(*stop, run, opt, run_stop);
  auto *status = cmd->add_subcommand("status", "Say whether a daemon answers and its servers; "
                                               "exit 1 when none answers");
  status->footer(footer);
  add_folders(*status, *opt, false);
  run_with(*status, run, opt, run_status);
}

} // namespace greenctx::cli
