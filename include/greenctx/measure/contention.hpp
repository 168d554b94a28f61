// SPDX-License-Identifier: Apache-2.0
// The contention measurement (`greenctx bench latency`, `greenctx demo`): the latency of critical
// work while background work fills the GPU, under several placements (alone, sharing the GPU, with
// stream priorities, in green contexts), and the background's throughput in each. Measured like a
// benchmark tool: warm-up, fixed sample counts in interleaved rounds, distributions, raw samples
// kept.
#pragma once

#include "greenctx/cxx_standard.hpp"

#include "greenctx/core/device.hpp"
#include "greenctx/core/partition.hpp"
#include "greenctx/measure/stats.hpp"
#include "greenctx/measure/workloads.hpp"

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace greenctx::measure {

/// The placements measured, in this order: the critical work alone on the whole GPU and alone in
/// its green context; beside the background on a shared GPU, without and with a higher stream
/// priority; both in their own green contexts, without and with the priority; and the mistake of
/// leaving the background in the primary context while the critical work is green ("trap").
inline constexpr const char *placement_names[] = {"alone", "alone_green",    "shared", "priority",
                                                  "green", "green_priority", "trap"};

struct contention_config {
  unsigned samples = 1000; ///< critical samples per placement
  unsigned warmup = 50;    ///< untimed samples before a placement's first round (5 before later)
  unsigned rounds = 10;    ///< samples are taken in this many rounds over all placements
  std::chrono::microseconds gap{300}; ///< mean host pause between samples (jittered)
  /// How long the background's rates alone are measured; 0: not measured (left zero).
  std::chrono::milliseconds rate_window{300};
  /// The placements to measure, by name (placement_names); empty: all of them.
  std::vector<std::string> placements;
  /// Each timed critical sample is enqueued behind a hold (stream_hold) and starts when the host
  /// has enqueued all of it, so that its device time leaves out how long its launch took on the
  /// host (for work launched from Python, tens of microseconds that vary from launch to launch).
  /// Off: the device time runs from the event before the launch, as a program launching it sees.
  bool hold_launch = false;
  /// Background units kept queued on the background's stream (topped up before every sample).
  unsigned background_depth = 2;
  /// The background is kept fed from a thread of its own, as a serving program's prefill loop
  /// would be, so that its launches meet the critical launches on the host; off: both from the
  /// calling thread, the background topped up between critical samples.
  bool background_thread = false;
};

/// One critical series, in microseconds, with its summaries.
struct critical_stats {
  std::vector<double> host_us;        ///< launch to completion seen by the host
  std::vector<double> gpu_us;         ///< device events around the launch on its stream
  std::vector<double> start_delay_us; ///< gpu_us minus the work's own execution, where known
  summary host, gpu, start_delay;
};

/// Background work completed over device time: whole launches only.
struct background_rate {
  double work = 0;    ///< units of work completed
  double seconds = 0; ///< over this device time
  double rate() const { return seconds > 0 ? work / seconds : 0; }
};

struct placement_result {
  std::string name;        ///< one of placement_names
  std::string description; ///< for people
  bool trap = false;       ///< a placement shown as the mistake it is
  std::optional<critical_stats> critical;
  std::optional<background_rate> background; ///< none where the critical work ran alone
};

struct contention_result {
  contention_config cfg;
  std::string critical_name, background_name;
  unsigned device_sms = 0, critical_sms = 0, background_sms = 0; ///< SMs of each partition
  std::string background_unit;                                   ///< the workload's unit
  double background_unit_scale = 1;                  ///< rate / scale is shown in background_unit
  background_rate background_full, background_share; ///< alone on all SMs / on its partition
  std::string background_shape;      ///< the workload's shape note for its partition, if any
  double background_launch_work = 0; ///< work of one background launch (the rate's base unit)
  std::vector<placement_result> placements; ///< in the order of placement_names
};

/// Progress for people: one line per step.
using progress_fn = std::function<void(const std::string &)>;

/// Measures every placement of `cfg` with `critical` on the first partition of `set` and
/// `background` on its second. Throws request_error for a set without two partitions, an unknown
/// placement name, no samples, or a workload without a launch.
contention_result measure_contention(const device &dev, const partition_set &set,
                                     const critical_workload &critical,
                                     const background_workload &background,
                                     const contention_config &cfg = {},
                                     const progress_fn &progress = {});

} // namespace greenctx::measure
