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

struct config {
  int device = 0;
  background_kind background = background_kind::spin;
  critical_kind critical = critical_kind::kernel;
  unsigned critical_sms = 16;
  unsigned samples = 1000;
  unsigned warmup = 50;
  unsigned rounds = 10;               ///< samples are taken in this many rounds over all placements
  std::chrono::microseconds gap{300}; ///< mean host pause between critical samples (jittered)

  unsigned critical_blocks = 16;
  std::chrono::microseconds critical_block_time{20};
  unsigned critical_gemm_n = 256;

  std::chrono::microseconds background_block_time{200};
  unsigned background_waves = 64;                  ///< spin: full-GPU waves per background kernel
  std::size_t memory_bytes = std::size_t{1} << 30; ///< memory: bytes copied per kernel
  unsigned gemm_n = 8192;
  std::chrono::milliseconds rate_window{300}; ///< how long background-alone rates are measured
  /// The placements to measure, by name ("alone", "shared", ...); empty: all of them.
  std::vector<std::string> placements;
};

using measure::background_rate;
using measure::critical_stats;
using measure::placement_result;

struct results {
  config cfg;
  unsigned device_sms = 0, critical_sms_obtained = 0, background_sms_obtained = 0;
  std::string background_unit;                       ///< "blocks/s", "GB/s", "TFLOP/s"
  double background_unit_scale = 1;                  ///< rate / scale is shown in background_unit
  background_rate background_full, background_share; ///< alone on all SMs / on its partition
  std::string quantization;          ///< how whole waves shape the background rate, for people
  double background_launch_work = 0; ///< work of one background launch (rate's base unit)
  std::vector<placement_result> placements;
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
