// SPDX-License-Identifier: Apache-2.0
// What `greenctx bench latency` (and `greenctx demo`, at demo size) measures: the library's
// contention measurement (greenctx/measure/contention.hpp) of the built-in workloads the options
// name, kept with those options for the reports.
#pragma once

#include <greenctx/greenctx.hpp>

#include "report/stats.hpp" // the reports summarize their series

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace greenctx::cli::bench {

enum class background_kind { spin, memory, gemm };
enum class critical_kind { kernel, gemm };

inline const char *name(background_kind k) {
  switch (k) {
  case background_kind::spin:
    return "spin";
  case background_kind::memory:
    return "memory";
  case background_kind::gemm:
    return "gemm";
  }
  return "?";
}

inline const char *name(critical_kind k) {
  return k == critical_kind::kernel ? "kernel" : "gemm";
}

/// The built-in workloads a bench names, and the critical partition asked for.
struct setup {
  background_kind background = background_kind::spin;
  critical_kind critical = critical_kind::kernel;
  unsigned critical_sms = 16;

  unsigned critical_blocks = 16;
  std::chrono::microseconds critical_block_time{20};
  unsigned critical_gemm_n = 256;

  std::chrono::microseconds background_block_time{200};
  unsigned background_waves = 64;                  ///< spin: full-GPU waves per background kernel
  std::size_t memory_bytes = std::size_t{1} << 30; ///< memory: bytes copied per kernel
  unsigned gemm_n = 8192;
};

/// What `greenctx bench` measures: the library's contention measurement of the workloads of
/// `setup`, on GPU `device`.
struct config : measure::contention_config, setup {
  int device = 0;
};

using measure::background_rate;
using measure::critical_stats;
using measure::placement_result;

/// The library's measurement, with the workloads it ran.
struct results : measure::contention_result {
  setup asked;
};

/// Runs every placement of `cfg` on a split of `cfg.critical_sms` + the rest. `progress` receives
/// one line per step (may be empty).
results run(const device &dev, const config &cfg,
            const std::function<void(const std::string &)> &progress);

/// The same on `set`, made by the caller: its first partition runs the critical work, its second
/// the background (demo measures on the split it has just verified).
results run(const device &dev, const partition_set &set, const config &cfg,
            const std::function<void(const std::string &)> &progress);

} // namespace greenctx::cli::bench
