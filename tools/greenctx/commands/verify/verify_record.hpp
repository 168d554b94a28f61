// SPDX-License-Identifier: Apache-2.0
// What `greenctx verify SPLIT` found, as a record of the report model (report/record.hpp): pure
// code, so that the CPU tests check it.
#pragma once

#include "report/record.hpp"

#include <greenctx/plan/process_check.hpp>
#include <greenctx/plan/verify_check.hpp>

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace greenctx::cli::verification {

/// One GPU's verification.
struct gpu_result {
  nlohmann::json environment; ///< environment_json of the GPU (device, gpu, sm_count, ...)
  unsigned piece_size = 0;    ///< the plan: one split into `groups` groups of `piece_size` SMs
  unsigned groups = 0;        ///< (0: no split, one partition over the whole device)
  bool rest = false;          ///< the last partition is the remainder
  std::vector<std::string> rounding; ///< per partition, what the planner rounded (or empty)
  verify_report report;
};

struct results {
  std::string split; ///< as asked ("16,rest")
  bool ignore_coscheduling = false;
  unsigned blocks_per_sm = 8; ///< probe blocks per device SM
  std::vector<gpu_result> gpus;
  /// How many GPUs passed.
  std::size_t passed() const;
  bool ok() const { return passed() == gpus.size(); }
};

/// "one split into 2 groups of 8 SMs, the remainder as 'rest'".
std::string plan_summary(const gpu_result &g);

/// The record (kind "verify"): the split asked, the verdict, a table "partitions" (the CSV one:
/// each partition's counts and SM map, the SMs it used, its probe's times; an "all" row per GPU
/// with the maps combined, '!' where two partitions met), a detail table "gpus" (the plan and the
/// checks per GPU), and notes (rounding, timing, violations, the verdict). `environment` is the
/// GPU's environment_json when one GPU was verified, else the driver's fields; with the run's date
/// and command either way.
report::record verify_record(const results &r, const nlohmann::json &environment);

/// What `greenctx verify SPLIT --processes` measured (verify_processes.cpp).
struct process_results {
  std::string split;
  bool ignore_coscheduling = false;
  std::optional<bool> mps_active;
  unsigned spin_ms = 0, waves = 0, rounds = 0;
  double expected_ns = 0;            ///< a fill on exactly its piece: waves x spin
  unsigned long long iterations = 0; ///< the fixed work's multiply-adds a thread
  std::vector<piece_measurement> pieces;
  std::vector<long long> pids; ///< per piece, its process
  process_check_report report;
};

/// The record (kind "verify-processes"): the split and the fill's settings, MPS, a table "pieces"
/// (the CSV one: SMs planned, told and used, the fill and the work alone, the work beside the
/// others as the median over rounds and its slowdown), a detail table "rounds" (every piece's work
/// in every round on the GPU's timer) and notes (the overlap, the checks' notes, violations, the
/// verdict). `environment` is the GPU's environment_json with the run's date and command.
report::record processes_record(const process_results &r, const nlohmann::json &environment);

} // namespace greenctx::cli::verification
