// `greenctx bench --adaptive`: a memory-bound background whose partition shrinks around critical
// work, against the same background held on its static partition.
//
// Green contexts split SMs, not memory bandwidth: a streaming copy on 116 SMs still slows a
// critical kernel on the other 16 (bench/RESULTS.md). Fewer SMs running the copy draw less
// bandwidth, so the adaptive mode runs the background in short chunks on a pool (greenctx::pool)
// of two layouts, "C,rest" (wide) and "C,N,rest" (narrow, the background on N SMs, the rest idle),
// the critical work on the same C SMs in both, and switches to the narrow layout around each
// critical arrival.
//
// The policies (what the host does before and after each critical launch):
//   lead      switches to the narrow layout `lead` microseconds before the arrival, which it knows
//             (the bench schedules every arrival itself); chunks already queued on the wide layout
//             keep running until they end.
//   lead-wait the same, and at the arrival the host also waits for the wide chunks still queued
//             before it launches the critical work.
//   reactive  switches at the arrival, without knowing it in advance.
//   reactive-wait  the same, then waits for the wide chunks before launching.
// After the critical work completes the host switches back to the wide layout. A critical
// sample's latency is counted from its arrival, so time spent waiting for wide chunks counts.
// The host feeds the background (reading the pool's current layout before each chunk) until the
// arrival and not while it waits for the critical kernel: the queue (depth x chunk) covers it, and
// a launch of its own would delay noticing the completion in the configurations with a background.
//
// This header and adaptive_report.cpp are pure code (CPU-tested); adaptive_run.cpp measures.
#pragma once

#include "bench/engine.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace greenctx::cli::bench::adaptive {

enum class policy { lead, lead_wait, reactive, reactive_wait };

/// "lead", "lead-wait", "reactive", "reactive-wait".
const char *name(policy p);
/// Whether the policy knows the arrival in advance (shrinks `lead` before it).
inline bool predictive(policy p) {
  return p == policy::lead || p == policy::lead_wait;
}
/// Whether the host waits for the wide layout's queued chunks before launching critical work.
inline bool waits(policy p) {
  return p == policy::lead_wait || p == policy::reactive_wait;
}

/// What `greenctx bench --adaptive` measures.
struct config {
  int device = 0;
  unsigned critical_sms = 16;
  std::vector<unsigned> shrink_to{8, 16, 32, 64}; ///< N: SMs of the narrow background partition
  std::vector<policy> policies{policy::lead, policy::lead_wait, policy::reactive,
                               policy::reactive_wait};
  std::chrono::microseconds lead{100}; ///< lead policies: shrink this long before each arrival
  std::size_t chunk_bytes = std::size_t{64} << 20; ///< bytes each background chunk copies
  unsigned queue_depth = 2;                        ///< background chunks queued at most
  unsigned samples = 1000, warmup = 50, rounds = 10;
  std::chrono::microseconds gap{300}; ///< mean time between critical arrivals (jittered +-50%)
  unsigned critical_blocks = 16;
  std::chrono::microseconds critical_block_time{20};
  std::chrono::milliseconds rate_window{300}; ///< how long each background-alone rate is measured
};

/// Parses --shrink-to: SM counts separated by commas ("8,16,32,64"), each 1..4096, no duplicates.
/// Throws request_error saying which item is wrong and what would work.
std::vector<unsigned> parse_shrink_to(std::string_view text);
/// Parses --policies: names of `policy` separated by commas, no duplicates. Throws request_error.
std::vector<policy> parse_policies(std::string_view text);
/// Refuses (request_error) what cannot run on a device of `device_sms` SMs: a narrow partition
/// that leaves no SMs for the wide layout's difference (critical + N >= device_sms), a lead not
/// shorter than the shortest gap (0.5 x gap), a chunk smaller than one byte per copy thread.
void validate(const config &cfg, unsigned device_sms);

/// The host's schedule for one critical arrival `gap` after the previous sample ended: run wide
/// for `wide`, then narrow for `narrow` until the arrival (wide + narrow == gap).
struct step {
  std::chrono::duration<double, std::micro> wide{0}, narrow{0};
};
/// The schedule of `p` for an arrival after `gap`, with lead time `lead` (ignored when reactive;
/// a lead longer than the gap shrinks at once).
step schedule(policy p, std::chrono::duration<double, std::micro> gap,
              std::chrono::microseconds lead);

/// One measured configuration.
struct configuration {
  std::string name;        ///< "alone", "static", "adaptive-N-POLICY"
  std::string description; ///< for people
  unsigned shrink_to = 0;  ///< N; 0 for alone and static
  std::string policy;      ///< empty for alone and static
  critical_stats critical;
  std::optional<background_rate> background; ///< bytes copied / seconds; none for alone
  std::vector<double> wait_us; ///< wait policies: host time waiting for wide chunks, per sample
};

/// A background rate measured alone (no critical work) on `sms` SMs.
struct alone_rate {
  unsigned sms = 0;
  background_rate rate;
};

struct results {
  config cfg;
  unsigned device_sms = 0, critical_sms_obtained = 0, wide_sms_obtained = 0;
  bool critical_shared = false; ///< the critical partition is one green context in all layouts
  std::string critical_sharing; ///< how that was checked, or what differs
  std::vector<unsigned> narrow_sms_obtained; ///< per shrink_to value
  std::vector<alone_rate> alone; ///< background alone: wide first, then each narrow partition
  std::vector<configuration> configurations; ///< "alone", "static", then the adaptive ones
};

/// The targets for one adaptive configuration.
constexpr double isolation_limit = 1.2;  ///< its critical p99 / p99 alone at most this
constexpr double background_limit = 0.8; ///< its background rate / the static rate at least this

/// One row of the verdict: isolation (critical p99 / alone p99, host launch-to-completion, as
/// `greenctx bench`'s isolation target) and background rate / static background rate.
struct verdict {
  std::string name;
  double isolation = 0, background_ratio = 0;
  bool available = false; ///< alone (and, for the ratio, static) measured
  bool isolation_met() const { return available && isolation <= isolation_limit; }
  bool background_met() const { return available && background_ratio >= background_limit; }
  bool met() const { return isolation_met() && background_met(); }
};

/// A verdict per configuration with a background (static included, its ratio 1).
std::vector<verdict> evaluate(const results &r);

std::string markdown(const results &r, const nlohmann::json &environment);
/// Everything, raw samples included.
nlohmann::json to_json(const results &r, const nlohmann::json &environment);
/// Reads back what to_json wrote (summaries recomputed). Throws nlohmann::json::exception on a
/// file of another shape.
results from_json(const nlohmann::json &j);
/// configuration,sample,host_us,gpu_us
std::string to_csv(const results &r);
/// Isolation and background ratio per configuration, with the target lines.
std::string to_svg(const results &r, const nlohmann::json &environment);

/// Measures every configuration of `cfg` on `dev` (adaptive_run.cpp). Throws request_error for a
/// configuration validate() refuses or a layout the GPU cannot make.
results run(const device &dev, const config &cfg,
            const std::function<void(const std::string &)> &progress);

} // namespace greenctx::cli::bench::adaptive
