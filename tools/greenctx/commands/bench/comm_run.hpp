// greenctx bench --comm: the measurement, in the process that runs it (see comm_children.cpp).
#pragma once

#include "commands/bench/comm.hpp"

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace greenctx::cli::bench::comm {

/// What one measuring process does.
struct run_config {
  std::string devices = "all"; ///< --device: all, or ordinals (at least 2 GPUs)
  std::vector<std::size_t> sizes;
  std::vector<mode> modes;               ///< measured in this order, each at every size
  unsigned iterations = 100;             ///< at least this many timed all-reduces per point
  unsigned warmup = 10;                  ///< untimed all-reduces first, per point
  std::chrono::milliseconds window{300}; ///< and at least this long, for the GEMM's rate
  unsigned gemm_n = 8192;
  bool gemm_alone = false;             ///< also time the GEMM loop alone on all SMs
  std::chrono::seconds hang_limit{30}; ///< an all-reduce longer than this is reported as a hang
  /// Partitioned modes: how long the confinement check keeps the all-reduce's SMs full.
  std::chrono::milliseconds confinement_fill{300};
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
