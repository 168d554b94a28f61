// SPDX-License-Identifier: Apache-2.0
// greenctx bench --comm: how many SMs an NCCL all-reduce needs while a GEMM loop fills the rest.
// The plan, the records and the report are pure code (CPU-tested); the measurement of a list of
// modes is the library's (greenctx/measure/comm.hpp), called in comm_run.cpp, and the child
// processes that run it, one group of modes each, are in comm_children.cpp.
#pragma once

#include <greenctx/measure/comm.hpp>
#include "report/record.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace greenctx::cli::bench::comm {

/// The modes are the library's (greenctx/measure/comm.hpp).
using mode_kind = measure::comm_mode_kind;
using mode = measure::comm_mode;

/// Every mode of a run over `ks`, in report order.
std::vector<mode> all_modes(const std::vector<unsigned> &ks);

/// `--sizes`: byte counts separated by commas, each a decimal number with an optional binary unit
/// (K, KiB, M, MiB, G, GiB; "4M" is 4 MiB), a multiple of 4 bytes (float elements), 4 B..4 GiB,
/// each named once. Throws request_error that says which entry (of `option`) and what would work.
std::vector<std::size_t> parse_sizes(std::string_view text, const char *option = "--sizes");

/// `--comm-sms`: SM counts in decimal separated by commas, each 1..4096 and named once. Throws
/// request_error.
std::vector<unsigned> parse_sm_counts(std::string_view text);

/// 1 MiB, 4 MiB, ... 1 GiB (powers of 4); `quick`: 1 MiB, 16 MiB and 256 MiB.
std::vector<std::size_t> default_sizes(bool quick);

using measure::format_bytes; ///< "1 MiB", "256 KiB", "1.5 GiB", "12 B"

/// NCCL's bus bandwidth of an all-reduce in GB/s: size / time * 2(n-1)/n.
double bus_bandwidth_gbs(std::size_t bytes, double microseconds, int gpus);

/// One mode at one message size (the library's measurement gives them).
using point = measure::comm_point;

/// One point as a child process writes it (comm_run.cpp). Throws nlohmann::json::exception on a
/// malformed point.
point point_from_json(const nlohmann::json &q);

/// A whole run.
struct results {
  int gpus = 0;
  std::vector<int> devices;
  std::vector<unsigned> ks;
  std::vector<std::size_t> sizes;
  unsigned iterations = 0, warmup = 0, gemm_n = 0;
  double tolerance_percent = 10;
  double gemm_alone_tflops = 0; ///< per GPU, the GEMM loop alone on all SMs
  std::vector<point> points;
};

/// The answer for one size: the smallest k whose partitioned all-reduce p50 is within
/// tolerance_percent of the best p50 of any mode with the GEMM running (shared, shared-high,
/// max-ctas, both partitioned kinds), and what the GEMM keeps of its speed alone there. At that k
/// the faster of green-k and green-ctas-k is named. A partitioned mode whose all-reduce ran
/// outside its partition (confined == false) is neither k nor the best.
struct answer {
  std::size_t bytes = 0;
  std::optional<unsigned> k; ///< SMs obtained; nullopt: no k measured came within the tolerance
  std::string k_mode;        ///< the k-SM mode that did (green-k or green-ctas-k)
  double k_p50_us = 0;       ///< the all-reduce p50 at that k
  std::string best_mode;     ///< the mode with the best p50
  double best_p50_us = 0;    ///< its p50
  double gemm_fraction = 0;  ///< GEMM TFLOP/s at that k / GEMM alone (0 when unknown)
  std::string text;          ///< one line that says all this
};

/// One answer per size (pure: from the recorded samples).
std::vector<answer> answers(const results &r);

/// The record of a run (kind "bench-comm", schema 2). Config: the k values, the sizes, the
/// iterations, the GEMM, the tolerance. Values: the GPUs, the GEMM alone. Tables: "points" (the
/// first, so the CSV: one row per mode and size: size, bytes, mode, the all-reduce's SMs, samples,
/// p50, p99, bus bandwidth, GEMM TFLOP/s and what it kept of its speed alone, confined, why it
/// failed), "samples" (raw: every all-reduce time), "partitions" (raw: the SMs each GPU's partition
/// obtained), "confinement" (per partitioned mode, what its check saw) and the detail table
/// "answers"; notes with the answers (and, for GREENCTX_COMM_ONE_GPU_TEST runs, that they answer
/// nothing); two figures against message size: the all-reduce p50 per mode (log scales) and the
/// GEMM's TFLOP/s per mode. `env` is the first child's environment.
report::record comm_record(const results &r, const nlohmann::json &env);
} // namespace greenctx::cli::bench::comm
