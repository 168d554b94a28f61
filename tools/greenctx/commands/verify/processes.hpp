// SPDX-License-Identifier: Apache-2.0
// greenctx verify SPLIT --processes (processes.cpp): one process per piece of a split,
// under greenctx run, checked by timing and by filling the pieces.
#pragma once

#include "commands/commands.hpp"
#include "report/output.hpp"

#include <string>

namespace greenctx::cli {

struct process_verify_options {
  partition_request request; ///< the split, parsed once by verify
  int device = 0;
  bool ignore_coscheduling = false;
  output_options output;  ///< --json, --markdown, --csv (--from is verify's, never here)
  unsigned spin_ms = 100; ///< each wave of a fill holds its SMs this long
  unsigned waves = 2;     ///< waves of blocks a fill needs on exactly its piece
  unsigned rounds = 3;    ///< times all pieces fill at once
};

/// Runs the check and prints its record (verification::processes_record): exit_ok,
/// exit_check_failed, or throws error (request_error for a split the device cannot make or a bad
/// device, before any process starts).
int verify_processes(const process_verify_options &opt);

/// The hidden `greenctx verify-piece` subcommand: the process of one piece.
void add_verify_piece(CLI::App &app, action &run);

} // namespace greenctx::cli
