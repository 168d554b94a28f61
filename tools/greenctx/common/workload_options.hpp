// SPDX-License-Identifier: Apache-2.0
// The built-in workloads' options, shared by `greenctx bench` and `greenctx tune`: which critical
// and background work, and their sizes.
#pragma once

#include "commands/bench/latency.hpp"

#include <CLI/CLI.hpp>

#include <string>
#include <utility>

namespace greenctx::cli::bench {

/// The options as typed; apply() puts them into a config.
struct workload_options {
  std::string background = "spin", critical = "kernel";
  unsigned critical_us = 20, background_us = 200, memory_mib = 1024;
};

/// Adds --background, --critical, --critical-blocks, --critical-us, --critical-gemm-n,
/// --background-us, --waves, --memory-mib and --gemm-n, bound to `w` and `cfg`.
void add_workload_options(CLI::App &cmd, workload_options &w, setup &cfg);

/// The workload kinds and sizes of `w` in `cfg`.
void apply(const workload_options &w, setup &cfg);

/// The library's built-in workloads `cfg` names, on `dev` (which must outlive them).
std::pair<measure::critical_workload, measure::background_workload> workloads(const device &dev,
                                                                              const setup &cfg);

} // namespace greenctx::cli::bench
