// SPDX-License-Identifier: Apache-2.0
// greenctx tune --comm: bench --comm's all-reduce as the critical work and its GEMM loop as the
// background, on every GPU, with the split chosen by tune's searches (measure::run_tune). Every
// measurement runs in a child process of its own, as bench --comm's do (comm_children.hpp).
#pragma once

#include "commands/bench/comm_children.hpp"

#include <greenctx/measure/tune.hpp>

#include <functional>
#include <string>
#include <vector>

namespace greenctx::cli::bench::comm {

struct tune_plan {
  plan run;                  ///< devices, the message size (run.measure.sizes, one), GEMM, limits
  measure::tune_config tune; ///< objective, search, sizes; samples are all-reduces per measurement
};

/// What tune --comm found besides the tune itself.
struct tune_extras {
  nlohmann::json env;           ///< the first child's environment
  double gemm_alone_tflops = 0; ///< per GPU, the GEMM loop alone on all SMs
  /// "16,rest: <why>" for each split whose measurement failed (a hang, an error, the all-reduce
  /// outside its partition): such a split counts as missing the objective.
  std::vector<std::string> failures;
};

/// Measures the all-reduce alone on all SMs (confirm_samples iterations, with the GEMM alone),
/// then tunes k: the all-reduce on a k-SM green context of each GPU, the GEMM loop on the rest.
/// Returns exit_ok, or after printing its message the exit code of a failure before any split
/// was measured (fewer than 2 GPUs, no NCCL or cuBLAS). Throws request_error for sizes the GPUs
/// do not make. Never call it after this process has used the driver.
int tune(const tune_plan &p, measure::tune_result &out, tune_extras &extras,
         const std::function<void(const std::string &)> &log);

} // namespace greenctx::cli::bench::comm
