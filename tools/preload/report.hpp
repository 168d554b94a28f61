// SPDX-License-Identifier: Apache-2.0
// What `greenctx run` asked for (the environment of tools/run_protocol.hpp) and what the library
// tells back: problems on stderr as they happen, one report line per process, and the summary
// printed by the process `greenctx run` became.
#pragma once

#include <atomic>
#include <ctime>
#include <string>

namespace greenctx::preload {

/// The settings, read once from the environment.
struct settings {
  bool active = false;            ///< GREENCTX_RUN_SMS or GREENCTX_RUN_SPLIT is set: confine
  bool measure = false;           ///< GREENCTX_RUN_MEASURE=1: time the GPU phase (also unconfined)
  bool real_sm_count = false;     ///< GREENCTX_RUN_REAL_SM_COUNT=1: do not report N SMs
  bool cuda_13_1 = false;         ///< GREENCTX_RUN_CUDA_13_1=1: provide the 13.1 entry points
  unsigned sms = 0;               ///< SMs per confined device (0 with a piece of a split)
  bool all_devices = true;        ///< GREENCTX_RUN_DEVICES=all (or unset)
  unsigned long long devices = 0; ///< bit d: device d is confined (when !all_devices)
  unsigned split_flags = 0;       ///< cuDevSmResourceSplitByCount flags
  std::string split;              ///< GREENCTX_RUN_SPLIT: run on a piece of this split...
  unsigned piece = 0;             ///< ...this one (when `split` is not empty)
  bool strict = false;            ///< a guarantee that cannot be kept ends the process
  bool quiet = false;             ///< no summary at exit
  bool debug = false;             ///< trace on stderr
  bool trace_calls = false;       ///< GREENCTX_PRELOAD_DEBUG=calls: every hooked call too
  const char *report = nullptr;
  long root_pid = -1;
  std::string error; ///< a malformed setting (then active is false)

  /// What a confined device runs on, for messages: "the 16 SMs", "piece 1 of '16,rest'".
  std::string confinement() const {
    return split.empty() ? "the " + std::to_string(sms) + " SMs"
                         : "piece " + std::to_string(piece) + " of '" + split + "'";
  }

  /// Whether the hooks are handed out at all: to confine, or only to time the GPU phase.
  bool hooks() const { return active || measure || cuda_13_1; }

  bool confines(int device) const {
    return all_devices || (device >= 0 && device < 64 && ((devices >> device) & 1ull));
  }
};

/// The settings as `lookup` (getenv, or a test's) gives the protocol's variables; a malformed one
/// leaves `active` false and says why in `error`. Pure.
settings read_settings(const char *(*lookup)(const char *));

/// The settings of this process, read once from its environment.
const settings &config();

/// Counters for the report (relaxed atomics: read only at exit).
struct counters {
  std::atomic<bool> cuda_used{false};
  std::atomic<unsigned long long> confined_devices{0}; ///< bit d: device d got its green context
  std::atomic<unsigned> green_contexts{0};
  std::atomic<unsigned> blocking_streams{0};
  std::atomic<unsigned> per_thread_streams{0};
  std::atomic<long long> first_work_ns{0}; ///< CLOCK_MONOTONIC of the first kernel launch
  std::atomic<long long> last_sync_ns{0};  ///< CLOCK_MONOTONIC of the last synchronization's end
};
counters &stats();

inline long long monotonic_ns() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000000000LL + t.tv_nsec;
}

/// A kernel (or graph) is launched: the first time, the start of the GPU phase is stamped (one
/// relaxed load afterwards).
inline void note_work() {
  if (stats().first_work_ns.load(std::memory_order_relaxed) == 0) {
    long long expected = 0;
    stats().first_work_ns.compare_exchange_strong(expected, monotonic_ns(),
                                                  std::memory_order_relaxed);
  }
}

/// A synchronization with the GPU returned (after some work was submitted): the GPU phase lasts
/// at least until now.
inline void note_sync() {
  if (stats().first_work_ns.load(std::memory_order_relaxed) != 0)
    stats().last_sync_ns.store(monotonic_ns(), std::memory_order_relaxed);
}

/// Marks that the program called the driver (cheap when already marked).
inline void mark_cuda_used() {
  if (!stats().cuda_used.load(std::memory_order_relaxed))
    stats().cuda_used.store(true, std::memory_order_relaxed);
}

/// Reports something greenctx cannot keep: printed once on stderr, kept for the report; with
/// --strict the process ends here with run_protocol::exit_strict.
void problem(const std::string &what);

/// Like problem(), but never fatal: something that may matter, said once.
void warning(const std::string &what);

/// A trace line on stderr when GREENCTX_PRELOAD_DEBUG is set.
void debug(const char *format, ...) __attribute__((format(printf, 1, 2)));

} // namespace greenctx::preload
