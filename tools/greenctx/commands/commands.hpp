// SPDX-License-Identifier: Apache-2.0
// The subcommands, one folder each under commands/. Each registers itself on the app and, when
// chosen, sets `run` to the function that does the work (called by main inside the error handler).
#pragma once

#include <greenctx/greenctx.hpp>

#include <CLI/CLI.hpp>

#include <functional>
#include <memory>
#include <string>

namespace greenctx::cli {

using action = std::function<int()>;

/// A command as it is being registered: the subcommand, to add options to, and its options, which
/// its callback keeps alive. (Lambdas take them by init-capture, [opt = opt]: clang 14 cannot
/// capture a structured binding.)
template <class Options> struct command_parts {
  CLI::App *cmd;
  std::shared_ptr<Options> opt;
};

/// Adds the command `name` with its one-line `help` and the `footer` of its --help (which ends with
/// its exit_footer), and options of type Options to bind.
template <class Options>
command_parts<Options> add_command(CLI::App &app, const char *name, const std::string &help,
                                   const std::string &footer) {
  CLI::App *cmd = app.add_subcommand(name, help);
  cmd->footer(footer);
  return {cmd, std::make_shared<Options>()};
}

/// When `cmd` is chosen, `check` (if any) runs first, throwing CLI::ValidationError as a parse
/// error would, and `run` is set to call `body` with the options.
template <class Options, class Body>
void run_with(CLI::App &cmd, action &run, std::shared_ptr<Options> opt, Body body,
              std::function<void()> check = {}) {
  cmd.callback([opt, body, check, &run] {
    if (check)
      check();
    run = [opt, body] { return body(*opt); };
  });
}

void add_info(CLI::App &app, action &run);
void add_verify(CLI::App &app, action &run);
void add_demo(CLI::App &app, action &run);
void add_bench(CLI::App &app, action &run);
void add_split(CLI::App &app, action &run);
void add_run(CLI::App &app, action &run);
void add_scale(CLI::App &app, action &run);
void add_mps(CLI::App &app, action &run);
void add_tune(CLI::App &app, action &run);

} // namespace greenctx::cli
