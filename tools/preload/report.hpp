// What `greenctx run` asked for (the environment of tools/run_protocol.hpp) and what the library
// tells back: problems on stderr as they happen, one report line per process, and the summary
// printed by the process `greenctx run` became.
#pragma once

#include <atomic>
#include <string>

namespace greenctx::preload {

/// The settings, read once from the environment.
struct settings {
  bool active = false;            ///< GREENCTX_RUN_SMS is set: confine
  unsigned sms = 0;               ///< SMs per confined device
  bool all_devices = true;        ///< GREENCTX_RUN_DEVICES=all (or unset)
  unsigned long long devices = 0; ///< bit d: device d is confined (when !all_devices)
  unsigned split_flags = 0;       ///< cuDevSmResourceSplitByCount flags
  bool strict = false;            ///< a guarantee that cannot be kept ends the process
  bool quiet = false;             ///< no summary at exit
  bool debug = false;             ///< trace on stderr
  const char *report = nullptr;
  long root_pid = -1;
  std::string error; ///< a malformed setting (then active is false)

  bool confines(int device) const {
    return all_devices || (device >= 0 && device < 64 && ((devices >> device) & 1ull));
  }
};

const settings &config();

/// Counters for the report (relaxed atomics: read only at exit).
struct counters {
  std::atomic<bool> cuda_used{false};
  std::atomic<unsigned long long> confined_devices{0}; ///< bit d: device d got its green context
  std::atomic<unsigned> green_contexts{0};
  std::atomic<unsigned> blocking_streams{0};
  std::atomic<unsigned> per_thread_streams{0};
};
counters &stats();

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
