// greenctx bench --comm: how many SMs an NCCL all-reduce needs while a GEMM loop fills the rest.
// The plan, the records and the report are pure code (CPU-tested); the measurement is in
// comm_run.cpp and the child processes that run it in comm_children.cpp.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace greenctx::cli::bench::comm {

/// How the all-reduce and the GEMM loop share each GPU.
enum class mode_kind {
  alone,            ///< the all-reduce alone on all SMs (no GEMM): its best case
  partitioned,      ///< the all-reduce on a k-SM green context, the GEMM on the rest
  partitioned_ctas, ///< the same with NCCL_MAX_CTAS=k: NCCL's channels match the partition
  shared,           ///< both on all SMs, equal stream priority
  shared_high,      ///< both on all SMs, the all-reduce's stream at the highest priority
  max_ctas,         ///< both on all SMs, equal priority, NCCL_MAX_CTAS=k
};

/// One mode; `k` is the SM count (partitioned, partitioned_ctas) or the CTA limit (max_ctas),
/// else 0.
struct mode {
  mode_kind kind = mode_kind::alone;
  unsigned k = 0;
  /// On a k-SM green context (partitioned or partitioned_ctas).
  bool on_partition() const {
    return kind == mode_kind::partitioned || kind == mode_kind::partitioned_ctas;
  }
  /// Run with NCCL_MAX_CTAS=k (max_ctas or partitioned_ctas).
  bool limits_ctas() const {
    return kind == mode_kind::max_ctas || kind == mode_kind::partitioned_ctas;
  }
  /// "alone", "green-16", "green-ctas-16", "shared", "shared-high", "max-ctas-16".
  std::string name() const;
  /// The inverse of name(); nullopt for any other text.
  static std::optional<mode> from_name(std::string_view text);
  friend bool operator==(const mode &, const mode &) = default;
};

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

/// "1 MiB", "256 KiB", "1.5 GiB", "12 B".
std::string format_bytes(std::size_t bytes);

/// NCCL's bus bandwidth of an all-reduce in GB/s: size / time * 2(n-1)/n.
double bus_bandwidth_gbs(std::size_t bytes, double microseconds, int gpus);

/// One mode at one message size.
struct point {
  mode m;
  std::size_t bytes = 0;
  std::vector<double> allreduce_us; ///< per iteration, the slowest GPU's event time
  double gemm_tflops = 0;           ///< per GPU, mean over the GPUs, while the samples ran
  std::vector<unsigned> comm_sms;   ///< per GPU, the SMs the all-reduce's partition obtained
  /// Partitioned modes: whether the all-reduce stayed on its partition's SMs (a check per mode,
  /// see comm_run.cpp); nullopt when not checked or not known, with the reason in `confinement`.
  std::optional<bool> confined;
  std::string confinement;
  std::string failure; ///< why this point has no samples (hang, error), else empty
};

/// One point of to_json's "points" (files written before the confinement check have no
/// "confined": nullopt). Throws nlohmann::json::exception on a malformed point.
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

/// The report: a table per size (p50, p99, bus bandwidth, GEMM TFLOP/s), then the answers.
std::string markdown(const results &r, const nlohmann::json &env);
/// Every sample, with the environment.
nlohmann::json to_json(const results &r, const nlohmann::json &env);
/// The inverse of to_json's results part. Throws nlohmann::json::exception on a malformed file.
results from_json(const nlohmann::json &j);
/// One line per mode and size: the summary columns.
std::string to_csv(const results &r);
/// Two panels against message size: all-reduce p50 per mode and GEMM TFLOP/s per mode.
std::string to_svg(const results &r, const nlohmann::json &env);

} // namespace greenctx::cli::bench::comm
