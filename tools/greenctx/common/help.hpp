// SPDX-License-Identifier: Apache-2.0
// How greenctx explains itself: --help wrapped to the terminal, each command's exit codes, the
// version line, and the bash completion script made from the parser.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <string_view>

namespace greenctx::cli {

/// `text` with every line longer than `width` broken at spaces: an option's description goes on
/// under its own column, any other line under its own indentation. A word longer than the room
/// left stays whole.
std::string wrap_text(std::string_view text, std::size_t width);

/// The width --help is wrapped to: the terminal's columns when stdout is one (at least 40), else
/// 100 (COLUMNS, when set to a number from 40 up, wins in both cases).
std::size_t help_width();

/// A CLI11 formatter that wraps the help it makes (wrap_text, help_width). Set it on the app
/// before adding commands: each command takes its parent's formatter when added.
std::shared_ptr<CLI::Formatter> wrapping_formatter();

/// The "Exit codes: ..." paragraph of one command's --help: 0, then what 1 means for the command
/// (`one`; empty when the command never exits 1), then 2 to 5 as for every command, then
/// `more` (codes of its own, e.g. run's). Ends with how numbers are read.
std::string exit_footer(std::string_view one, std::string_view more = {});

/// "greenctx VERSION (commit COMMIT)", the line of --version.
std::string version_line();

/// A bash completion script for `app` made from its parser: the commands, each command's options,
/// and files after an option that takes a value. Source it, or install it as
/// share/bash-completion/completions/greenctx.
std::string bash_completion(const CLI::App &app);

} // namespace greenctx::cli
