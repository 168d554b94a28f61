// greenctx run --sms N -- PROGRAM ARGS...: runs an unmodified CUDA program on N SMs.
#include "cli_common.hpp"
#include "commands.hpp"
#include "run_child.hpp"

#include <memory>

namespace greenctx::cli {
namespace {

struct run_options {
  unsigned sms = 0;
  int device = 0;
  bool ignore_coscheduling = false;
  bool quiet = false;
  std::vector<std::string> command;
};

int run_run(const run_options &opt) {
  // Bad input is rejected before the driver is touched and before anything runs.
  if (opt.command.empty())
    throw request_error(CUDA_ERROR_INVALID_VALUE, "greenctx run",
                        "no program: greenctx run --sms N -- PROGRAM ARGS...");
  find_program(opt.command.front());
  const confinement c{opt.sms, opt.device, opt.ignore_coscheduling};
  check_confinement(c);
  preload_library();
  const child_result r = run_child(opt.command, c);
  if (!opt.quiet) {
    if (!r.cuda_used)
      print_error("'" + opt.command.front() +
                  "' never used CUDA: there was nothing to confine on " + std::to_string(opt.sms) +
                  " SMs");
    else if (r.confined_threads == 0)
      print_error("'" + opt.command.front() + "' used CUDA but never made device " +
                  std::to_string(opt.device) + "'s context current: nothing ran on the " +
                  std::to_string(opt.sms) + " SMs");
  }
  exit_like(r);
}

} // namespace

void add_run(CLI::App &app, action &run) {
  auto opt = std::make_shared<run_options>();
  auto *cmd = app.add_subcommand(
      "run", "Run an unmodified CUDA program with all its kernels on N SMs of one GPU (each "
             "thread gets a green context over the same N SMs). Its output, exit code and "
             "signals pass through");
  cmd->add_option("--sms", opt->sms,
                  "SMs to run on, in decimal: a size one split gives (see greenctx info)")
      ->transform(decimal(1, 1u << 20, ""))
      ->required();
  add_device_option(*cmd, opt->device);
  cmd->add_flag("--ignore-coscheduling", opt->ignore_coscheduling,
                "Split with IgnoreSmCoscheduling (steps of 2 SMs on CC 9.0, no cluster guarantee)");
  cmd->add_flag("-q,--quiet", opt->quiet, "No summary on stderr (problems are still reported)");
  cmd->add_option("PROGRAM", opt->command, "The program and its arguments, after --")->expected(-1);
  cmd->footer("Example: greenctx run --sms 16 -- python3 train.py --epochs 1\n"
              "The per-thread default stream (cudaStreamPerThread) cannot run on a green context "
              "on drivers before 13.1: launches on it are reported and fail.");
  cmd->callback([opt, &run] { run = [opt] { return run_run(*opt); }; });
}

} // namespace greenctx::cli
