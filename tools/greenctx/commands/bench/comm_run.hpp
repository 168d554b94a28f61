// SPDX-License-Identifier: Apache-2.0
// greenctx bench --comm: the measurement, in the process that runs it (see comm_children.cpp).
#pragma once

#include "commands/bench/comm.hpp"

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace greenctx::cli::bench::comm {

/// What one measuring process does: the library's measurement of the GPUs --device named
/// (resolved in the measuring process, which is the first to use the driver).
struct run_config : measure::comm_config {
  std::optional<std::vector<int>> asked_devices; ///< --device's ordinals; nullopt: every GPU
};

/// Measures cfg.modes at every size in this process and returns {"environment", "points",
/// "gemm_alone_tflops" (when asked)} with the points in comm::to_json's shape. A hung or failed
/// all-reduce ends the measurement: the points so far are returned with "error" set (the process
/// should then exit without cleaning up, since the device may still run the hung kernel).
/// Throws error when the GPUs, cuBLAS or NCCL are not there (exit_no_gpu for fewer than 2 GPUs).
/// GREENCTX_COMM_ONE_GPU_TEST (1, mean or self) accepts one GPU, for testing the tool itself: a
/// one-rank operation replaces the all-reduce and the report says the numbers answer nothing.
nlohmann::json measure(const run_config &cfg, const std::function<void(const std::string &)> &log);

} // namespace greenctx::cli::bench::comm
