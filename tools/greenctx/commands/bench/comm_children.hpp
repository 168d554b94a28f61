// SPDX-License-Identifier: Apache-2.0
// greenctx bench --comm: every group of modes in a child process of its own.
#pragma once

#include "commands/bench/comm_run.hpp"

#include <chrono>
#include <functional>
#include <optional>
#include <string>

namespace greenctx::cli::bench::comm {

/// A whole --comm run.
struct plan {
  run_config measure; ///< sizes, iterations, devices...; modes are set per child
  std::vector<unsigned> ks;
  double tolerance_percent = 10;
  std::chrono::seconds child_limit{600}; ///< a child still running then is killed
};

/// What one child of run_group did.
struct group_outcome {
  bool measured = false; ///< it sent points (some may have failed)
  std::string failure;   ///< why it, or a point of it, failed; empty when nothing did
  int exit = 0;          ///< the exit code its failure calls for (exit_no_gpu, ...)
};

/// Fills the parts of `r` that come from `p`, and sets NCCL_NVLS_ENABLE to 0 unless the caller's
/// environment sets it. Call it once before run_group.
void start_results(const plan &p, results &r);

/// Measures `modes` at p.measure's sizes in one child process (NCCL_MAX_CTAS=max_ctas, or unset),
/// adding its points to `r`, and, for the `first` child (which also times the GEMM alone), the
/// environment to `env`. The points it could not measure are added with the failure's reason.
/// Never call it after this process has used the driver.
group_outcome run_group(const plan &p, const std::vector<mode> &modes,
                        const std::optional<unsigned> &max_ctas, bool first, results &r,
                        nlohmann::json &env, const std::function<void(const std::string &)> &log);

/// Runs the modes of `p` in child processes, forked before this process touches the driver, so
/// that each child starts CUDA and NCCL afresh under its own environment: NCCL caches its
/// environment parameters at their first read, so a run of max-ctas-k needs a process that had
/// NCCL_MAX_CTAS=k from the start, and a hang on
/// k SMs ends only its own child. Children: (1) alone, shared, shared-high and the GEMM alone,
/// (2) one per green-k, (3) one per green-ctas-k and (4) one per max-ctas-k (NCCL_MAX_CTAS=k in
/// these two; unset in the others).
/// NCCL_NVLS_ENABLE is set to 0 unless the caller's environment sets it.
/// Fills `r` and `env` with what came back. Returns exit_ok, or the first child's failure code
/// (exit_no_gpu with fewer than 2 GPUs, exit_unsupported without NCCL or cuBLAS) after printing
/// its message; a later child's failure is recorded in its points instead. Never call it after
/// this process has used the driver.
int run_in_children(const plan &p, results &r, nlohmann::json &env,
                    const std::function<void(const std::string &)> &log);

} // namespace greenctx::cli::bench::comm
