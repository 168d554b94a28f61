// greenctx: show, verify and demonstrate SM partitioning with CUDA green contexts.
#include "common/cli_common.hpp"
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

} // namespace greenctx::cli

int main(int argc, char **argv) try {
  greenctx::cli::set_command_line(argc, argv);
  using namespace greenctx::cli;
  CLI::App app{"greenctx: partition a GPU's SMs with CUDA green contexts"};
  app.name("greenctx");
  app.require_subcommand(0, 1);
  app.footer("Exit codes: 0 ok; 1 a verification check failed; 2 bad input (flags, split, counts,\n"
             "GPU ordinal, preload library); 3 no NVIDIA driver or no GPU; 4 the driver lacks a\n"
             "needed feature (or greenctx its preload library); 5 another CUDA error. Past its\n"
             "checks, greenctx run exits as the program does (126/127: it cannot be executed or\n"
             "found). Every number is decimal: 016 is 16; 0x10, -1 and 1e3 are refused.");
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

  // CLI11 reports an unknown first word as an unexpected argument; name it as a subcommand.
  if (argc > 1 && argv[1][0] != '-' && !is_subcommand(app, argv[1])) {
    print_error(std::string("unknown subcommand '") + argv[1] +
                "': the subcommands are info, verify, split, run, scale, mps, demo, bench and tune "
                "(see "
                "greenctx --help)");
    return exit_usage;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp &e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp &e) {
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
        "a subcommand is required: info, verify, split, run, scale, mps, demo, bench or tune");
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
