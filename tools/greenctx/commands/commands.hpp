// SPDX-License-Identifier: Apache-2.0
// The subcommands, one folder each under commands/. Each registers itself on the app and, when
// chosen, sets `run` to the function that does the work (called by main inside the error handler).
#pragma once

#include <greenctx/greenctx.hpp>

#include <CLI/CLI.hpp>

#include <functional>

namespace greenctx::cli {

using action = std::function<int()>;

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
