// The subcommands. Each registers itself on the app and, when chosen, sets `run` to the function
// that does the work (called by main inside the error handler).
#pragma once

#include "report/record.hpp"

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

/// Verifies `set` on the hardware: the record `greenctx verify` prints (verify_report.hpp).
report::record verification_record(const greenctx::device &dev, const greenctx::partition_set &set,
                                   const greenctx::partition_request &request,
                                   unsigned blocks_per_sm);

/// Adds `--device N` (a GPU ordinal in decimal, see decimal()) bound to `ordinal`.
void add_device_option(CLI::App &cmd, int &ordinal);

} // namespace greenctx::cli
