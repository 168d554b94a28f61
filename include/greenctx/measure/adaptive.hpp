// SPDX-License-Identifier: Apache-2.0
// The adaptive measurement (`greenctx bench adaptive`): background work whose partition shrinks
// around each arrival of critical work, against the same background held on its static partition.
//
// Green contexts split SMs, not memory bandwidth: a streaming copy on 116 SMs still slows a
// critical kernel on the other 16 (benchmarks/RESULTS.md). Fewer SMs running the copy draw less
// bandwidth, so the measurement runs the background in short chunks on a pool (greenctx::pool) of
// two layouts, "C,rest" (wide) and "C,N,rest" (narrow: the background on N SMs, the rest idle),
// the critical work on the same C SMs in both, and switches to the narrow layout around each
// critical arrival.
//
// The policies (what the host does before and after each critical launch):
//   lead      switches to the narrow layout `lead` microseconds before the arrival, which it knows
//             (the measurement schedules every arrival itself); chunks already queued on the wide
//             layout keep running until they end.
//   lead-wait the same, and at the arrival the host also waits for the wide chunks still queued
//             before it launches the critical work.
//   reactive  switches at the arrival, without knowing it in advance.
//   reactive-wait  the same, then waits for the wide chunks before launching.
//   narrow    holds the background on the narrow layout throughout, switching nothing: a width
//             chosen once (from the bandwidth curve, greenctx/measure/bandwidth.hpp), which needs
//             no knowledge of when critical work comes.
// After the critical work completes the host switches back to the wide layout (but narrow). A
// critical sample's latency is counted from its arrival, so time spent waiting for wide chunks
// counts (and so does the time its launch takes on the host). The host feeds the background
// (reading the pool's current layout before each chunk) until the arrival and not while it waits
// for the critical work: the queue (depth x chunk) covers it, and a launch of its own would delay
// noticing the completion in the configurations with a background.
//
// The background is a background_workload whose every launch is one chunk: the measurement
// launches it chunk by chunk on the stream of the layout in use, so a switch takes effect at the
// next chunk (keep chunks short; copy_chunks is the built-in streaming copy). The critical
// work is a critical_workload, launched once per arrival on the critical partition's stream.
#pragma once

#include "greenctx/cxx_standard.hpp"

#include "greenctx/core/device.hpp"
#include "greenctx/measure/contention.hpp"
#include "greenctx/measure/workloads.hpp"

#include <chrono>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace greenctx::measure {

enum class adaptive_policy { lead, lead_wait, reactive, reactive_wait, narrow };

/// Every policy, in report order.
inline constexpr adaptive_policy adaptive_policies[] = {
    adaptive_policy::lead, adaptive_policy::lead_wait, adaptive_policy::reactive,
    adaptive_policy::reactive_wait, adaptive_policy::narrow};

/// "lead", "lead-wait", "reactive", "reactive-wait", "narrow".
const char *name(adaptive_policy p);
/// Whether the policy knows the arrival in advance (shrinks `lead` before it).
inline bool predictive(adaptive_policy p) {
  return p == adaptive_policy::lead || p == adaptive_policy::lead_wait;
}
/// Whether the host waits for the wide layout's queued chunks before launching critical work.
inline bool waits(adaptive_policy p) {
  return p == adaptive_policy::lead_wait || p == adaptive_policy::reactive_wait;
}

/// Parses policy names separated by commas ("reactive,lead-wait"), each once. Throws
/// request_error starting with `what` (how the caller names the list) that says which name is
/// wrong and what would work.
std::vector<adaptive_policy> parse_adaptive_policies(std::string_view text,
                                                     const std::string &what = "policies");

struct adaptive_config {
  unsigned critical_sms = 16;                     ///< C: SMs of the critical partition
  std::vector<unsigned> shrink_to{8, 16, 32, 64}; ///< N: SMs of the narrow background partition
  std::vector<adaptive_policy> policies{std::begin(adaptive_policies), std::end(adaptive_policies)};
  std::chrono::microseconds lead{100}; ///< lead policies: shrink this long before each arrival
  unsigned queue_depth = 2;            ///< background chunks queued at most, over both layouts
  unsigned samples = 1000, warmup = 50, rounds = 10; ///< per configuration, as contention's
  std::chrono::microseconds gap{300}; ///< mean time between critical arrivals (jittered +-50%)
  std::chrono::milliseconds rate_window{300}; ///< how long each background-alone rate is measured
};

/// How validate_adaptive's messages name the fields of adaptive_config (a CLI names its options).
struct adaptive_field_names {
  std::string critical_sms = "critical_sms", shrink_to = "shrink_to", policies = "policies",
              lead = "lead", gap = "gap", queue_depth = "queue_depth", samples = "samples";
};

/// Refuses (request_error, its message starting with the field's name) what cannot run on a
/// device of `device_sms` SMs: no critical SMs or samples; a narrow partition of 0 SMs, one named
/// twice, or one that leaves no SMs for the wide layout's difference (critical + N >= device_sms);
/// a policy named twice; a lead not shorter than the shortest gap (0.5 x gap) when a lead policy
/// is measured; a queue depth of 0.
void validate_adaptive(const adaptive_config &cfg, unsigned device_sms,
                       const adaptive_field_names &names = {});

/// The host's schedule for one critical arrival `gap` after the previous sample ended: run wide
/// for `wide`, then narrow for `narrow` until the arrival (wide + narrow == gap).
struct adaptive_step {
  std::chrono::duration<double, std::micro> wide{0}, narrow{0};
};
/// The schedule of `p` for an arrival after `gap`, with lead time `lead` (ignored when reactive;
/// a lead longer than the gap shrinks at once). Pure code.
adaptive_step adaptive_schedule(adaptive_policy p, std::chrono::duration<double, std::micro> gap,
                                std::chrono::microseconds lead);

/// One measured configuration.
struct adaptive_configuration {
  std::string name;        ///< "alone", "static", "adaptive-N-POLICY"
  std::string description; ///< for people
  unsigned shrink_to = 0;  ///< N; 0 for alone and static
  std::string policy;      ///< empty for alone and static
  /// Latencies in microseconds: host, from the arrival to the completion seen by the host; gpu,
  /// events around the launch; start delay when the critical workload reports its execution.
  critical_stats critical;
  std::optional<background_rate> background; ///< work done / host seconds; none for alone
  std::vector<double> wait_us; ///< wait policies: host time waiting for wide chunks, per sample
};

/// A background rate measured alone (no critical work) on `sms` SMs.
struct adaptive_alone_rate {
  unsigned sms = 0;
  background_rate rate;
};

/// What an adaptive run found (adaptive_result adds what it was asked).
struct adaptive_findings {
  std::string critical_name, background_name;
  std::string background_unit = "units/s"; ///< the background's unit, after unit_scale
  double background_unit_scale = 1;
  unsigned device_sms = 0, critical_sms_obtained = 0, wide_sms_obtained = 0;
  bool critical_shared = false; ///< the critical partition is one green context in all layouts
  std::string critical_sharing; ///< how that was checked, or what differs
  std::vector<unsigned> narrow_sms_obtained; ///< per shrink_to value
  std::vector<adaptive_alone_rate> alone;    ///< background alone: wide first, then each narrow
  /// "alone" (the critical work alone on its C SMs), "static" (the background held wide), then
  /// the adaptive ones: each N of shrink_to with each policy, in that order.
  std::vector<adaptive_configuration> configurations;
};

struct adaptive_result : adaptive_findings {
  adaptive_config cfg;
};

/// The targets for one adaptive configuration: its critical p99 / p99 alone at most
/// the first, its background rate / the static rate at least the second.
inline constexpr double adaptive_isolation_limit = 1.2;
inline constexpr double adaptive_background_limit = 0.8;

/// One row of the verdict: isolation (critical p99 / alone p99, host latency) and background rate
/// / static background rate.
struct adaptive_verdict {
  std::string name;
  double isolation = 0, background_ratio = 0;
  bool available = false; ///< alone (and, for the ratio, static) measured
  bool isolation_met() const { return available && isolation <= adaptive_isolation_limit; }
  bool background_met() const { return available && background_ratio >= adaptive_background_limit; }
  bool met() const { return isolation_met() && background_met(); }
};

/// A verdict per configuration with a background (static included, its ratio 1). Pure code.
std::vector<adaptive_verdict> adaptive_verdicts(const adaptive_findings &r);

/// Measures "alone", "static" and every adaptive configuration of `cfg` on `dev`, with
/// `critical` on the C SMs and `background` chunk by chunk on the rest (copy_chunks: the
/// built-in streaming copy). The pool of layouts is made once (its green contexts are kept until
/// it returns). Throws request_error for a configuration validate_adaptive refuses, a layout the
/// GPU cannot make, a workload without a launch or a background chunk that reports no work;
/// error for driver failures; what the workloads throw.
adaptive_result measure_adaptive(const device &dev, const critical_workload &critical,
                                 const background_workload &background,
                                 const adaptive_config &cfg = {}, const progress_fn &progress = {});

} // namespace greenctx::measure
