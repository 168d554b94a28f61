// SPDX-License-Identifier: Apache-2.0
// The report file of the preload library (tools/run_protocol.hpp): the CLI creates it, each
// process of the program appends one JSON line to it, and the CLI reads the lines back, summed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace greenctx::cli {

/// What the preload library reported, summed over every process of the program (the report file
/// of tools/run_protocol.hpp: one JSON line per process).
struct run_report {
  bool cuda_used = false;            ///< some process called the CUDA driver
  std::vector<int> confined_devices; ///< ordinals that got a confined context, ascending
  unsigned green_contexts = 0;       ///< green contexts the library created
  unsigned blocking_streams = 0;     ///< blocking streams it emulated
  unsigned per_thread_streams = 0;   ///< per-thread default streams it provided
  std::vector<std::string> problems; ///< what could not be kept, each once, sorted
  unsigned processes = 0;            ///< report lines read
  /// CLOCK_MONOTONIC ns of the earliest first GPU work over the processes that reported one
  /// (non-zero field_first_work_ns), or 0 when none did.
  std::uint64_t first_work_ns = 0;
  /// CLOCK_MONOTONIC ns of the latest last synchronization over the processes that reported one
  /// (non-zero field_last_sync_ns), or 0 when none did.
  std::uint64_t last_sync_ns = 0;
};

/// Creates an empty report file in $TMPDIR (else /tmp) with mkstemp, named after this process
/// (greenctx-run-PID-XXXXXX), and returns its path; first removes this user's report files whose
/// process is gone (a program that ended by _exit or a signal leaves its report behind). Throws
/// error when it cannot create one.
std::string make_report_file();

/// Reads a report file (tools/run_protocol.hpp): lines that are not JSON objects are skipped.
/// Counts are summed over the lines, the GPU phase's ends are the earliest non-zero first work
/// and the latest non-zero last synchronization.
run_report read_report(const std::string &path);

} // namespace greenctx::cli
