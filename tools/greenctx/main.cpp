// SPDX-License-Identifier: Apache-2.0
// greenctx: show, verify and demonstrate SM partitioning with CUDA green contexts.
#include "common/cli_common.hpp"
#include "common/help.hpp"
#include "commands/commands.hpp"
#include "commands/verify/processes.hpp"

#include <cstdio>
#include <exception>

namespace greenctx::cli {

bool is_subcommand(CLI::App &app, const std::string &name) {
  for (const CLI::App *sub : app.get_subcommands({}))
    if (sub->get_name() == name)
      return true;
  return false;
}

// greenctx help [COMMAND]: the help of the app or of one command, as --help prints it.
void add_help(CLI::App &app, action &run) {
  auto *cmd = app.add_subcommand("help", "Show the help of greenctx or of one command");
  auto name = std::make_shared<std::string>();
  cmd->add_option("COMMAND", *name, "The command whose help to show");
  cmd->footer("Exit codes: 0 ok; 2 no such command.");
  cmd->callback([&app, name, &run] {
    run = [&app, name] {
      if (name->empty()) {
        std::fputs(app.help().c_str(), stdout);
        return static_cast<int>(exit_ok);
      }
      if (!is_subcommand(app, *name) || app.get_subcommand(*name)->get_group().empty()) {
        print_error("help: no command '" + *name + "' (see greenctx --help)");
        return static_cast<int>(exit_usage);
      }
      std::fputs(app.get_subcommand(*name)->help("greenctx").c_str(), stdout);
      return static_cast<int>(exit_ok);
    };
  });
}

// greenctx completion bash: the completion script, made from this parser.
void add_completion(CLI::App &app, action &run) {
  auto *cmd = app.add_subcommand("completion", "Print a bash completion script for greenctx");
  auto shell = std::make_shared<std::string>();
  cmd->add_option("SHELL", *shell, "The shell (bash)")->required()->check(CLI::IsMember({"bash"}));
  cmd->footer(
      "Example: source <(greenctx completion bash), or save it as "
      "~/.local/share/bash-completion/completions/greenctx. An installed greenctx has it "
      "in share/bash-completion/completions/.\nExit codes: 0 ok; 2 a shell other than bash.");
  cmd->callback([&app, &run] {
    run = [&app] {
      std::fputs(bash_completion(app).c_str(), stdout);
      return static_cast<int>(exit_ok);
    };
  });
}

} // namespace greenctx::cli

int main(int argc, char **argv) try {
  greenctx::cli::set_command_line(argc, argv);
  using namespace greenctx::cli;
  CLI::App app{"greenctx: partition a GPU's SMs with CUDA green contexts"};
  app.name("greenctx");
  app.formatter(wrapping_formatter()); // before the commands: each takes it when added
  app.require_subcommand(0, 1);
  app.set_version_flag("-V,--version", version_line(), "Print greenctx's version and commit");
  app.footer("Each command's --help (or greenctx help COMMAND) says what its exit codes mean; for "
             "all: 0 ok, 2 bad input, 3 no NVIDIA driver or no GPU, 4 the driver lacks a needed "
             "feature, 5 another CUDA error. Every number is decimal: 016 is 16; 0x10, -1 and 1e3 "
             "are refused.");
  action run;
  add_info(app, run);
  add_verify(app, run);
  add_demo(app, run);
  add_bench(app, run);
  add_split(app, run);
  add_run(app, run);
  add_scale(app, run);
  add_mps(app, run);
  add_tune(app, run);
  add_verify_piece(app, run);
  add_help(app, run);
  add_completion(app, run);

  // CLI11 reports an unknown first word as an unexpected argument; name it as a subcommand.
  if (argc > 1 && argv[1][0] != '-' && !is_subcommand(app, argv[1])) {
    print_error(std::string("unknown subcommand '") + argv[1] +
                "': the commands are info, verify, split, run, scale, mps, demo, bench, tune, help "
                "and completion (see greenctx --help)");
    return exit_usage;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp &e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp &e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion &e) {
    return app.exit(e);
  } catch (const CLI::ParseError &e) {
    print_error(
        std::string(e.what()) + " (see greenctx " +
        (app.get_subcommands().empty() ? "" : app.get_subcommands().front()->get_name() + " ") +
        "--help)");
    return exit_usage;
  }
  if (!run) {
    std::fputs(app.help().c_str(), stderr);
    print_error(
        "a command is required: info, verify, split, run, scale, mps, demo, bench, tune, help or "
        "completion");
    return exit_usage;
  }
  try {
    return run();
  } catch (const greenctx::error &e) {
    print_error(e.what());
    return exit_code_for(e);
  }
} catch (const std::exception &e) {
  greenctx::cli::print_error(std::string("unexpected error: ") + e.what());
  return greenctx::cli::exit_cuda_error;
} catch (...) {
  greenctx::cli::print_error("unexpected error");
  return greenctx::cli::exit_cuda_error;
}
