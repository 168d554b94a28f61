// SPDX-License-Identifier: Apache-2.0
// The communication measurement (`greenctx bench comm`): how fast an NCCL all-reduce over every
// GPU runs while a cuBLAS GEMM loop fills each GPU, per mode of sharing the SMs: the all-reduce on
// a k-SM green context of each GPU with the GEMM on the rest (checked to stay on its k SMs), or
// both on all SMs, with and without a higher stream priority or NCCL_MAX_CTAS.
//
// The cut between the library and a program: measure_comm measures a list of modes in the calling
// process. What it cannot do there is left to the caller, which is why `greenctx bench comm` runs
// it in child processes (tools/greenctx/commands/bench/comm_children.cpp):
// - NCCL reads NCCL_MAX_CTAS once per process, when it first needs it: a mode that limits the
//   CTAs (max-ctas-k, green-ctas-k) needs a process that had NCCL_MAX_CTAS=k before its first
//   NCCL call. measure_comm refuses such a mode unless the variable says k, and cannot see
//   whether NCCL read it before that.
// - A collective that hangs (a green context too small for NCCL's channels) never ends: the
//   measurement stops at the first hang, returns what it has with the reason, and leaves the
//   GPUs' objects (communicators, buffers, GEMM threads) alive, since releasing them could block
//   forever. The process should then end without more CUDA calls; running each mode in a child
//   process costs one mode per hang, not the whole run.
#pragma once

#include "greenctx/cxx_standard.hpp"

#include "greenctx/measure/contention.hpp"
#include "greenctx/measure/nccl.hpp"

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace greenctx::measure {

/// How the all-reduce and the GEMM loop share each GPU.
enum class comm_mode_kind {
  alone,            ///< the all-reduce alone on all SMs (no GEMM): its best case
  partitioned,      ///< the all-reduce on a k-SM green context, the GEMM on the rest
  partitioned_ctas, ///< the same with NCCL_MAX_CTAS=k: NCCL's channels match the partition
  shared,           ///< both on all SMs, equal stream priority
  shared_high,      ///< both on all SMs, the all-reduce's stream at the highest priority
  max_ctas,         ///< both on all SMs, equal priority, NCCL_MAX_CTAS=k
};

/// One mode; `k` is the SM count (partitioned, partitioned_ctas) or the CTA limit (max_ctas),
/// else 0.
struct comm_mode {
  comm_mode_kind kind = comm_mode_kind::alone;
  unsigned k = 0;
  /// On a k-SM green context (partitioned or partitioned_ctas).
  bool on_partition() const {
    return kind == comm_mode_kind::partitioned || kind == comm_mode_kind::partitioned_ctas;
  }
  /// Run with NCCL_MAX_CTAS=k (max_ctas or partitioned_ctas).
  bool limits_ctas() const {
    return kind == comm_mode_kind::max_ctas || kind == comm_mode_kind::partitioned_ctas;
  }
  /// "alone", "green-16", "green-ctas-16", "shared", "shared-high", "max-ctas-16".
  std::string name() const;
  /// The inverse of name(); nullopt for any other text.
  static std::optional<comm_mode> from_name(std::string_view text);
  friend bool operator==(const comm_mode &, const comm_mode &) = default;
};

/// "1 MiB", "256 KiB", "1.5 GiB", "12 B".
std::string format_bytes(std::size_t bytes);

/// One mode at one message size.
struct comm_point {
  comm_mode m;
  std::size_t bytes = 0;
  std::vector<double> allreduce_us; ///< per iteration, the slowest GPU's event time
  double gemm_tflops = 0;           ///< per GPU, mean over the GPUs, while the samples ran
  std::vector<unsigned> comm_sms;   ///< per GPU, the SMs the all-reduce's partition obtained
  /// Partitioned modes: whether the all-reduce stayed on its partition's SMs (a check per mode:
  /// one GPU's k SMs at a time are filled, and a confined all-reduce must wait for them);
  /// nullopt when not checked or not known, with the reason in `confinement`.
  std::optional<bool> confined;
  std::string confinement;
  std::string failure; ///< why this point has no samples (hang, error), else empty
};

/// What measure_comm measures.
struct comm_config {
  /// The GPUs, by ordinal: 2 or more (one all-reduce over all of them), or 1 with a one-rank
  /// `operation` (average, self_copy), which tests the pipeline and measures no communication.
  std::vector<int> devices;
  std::vector<std::size_t> sizes; ///< message sizes in bytes, multiples of 4 (float elements)
  std::vector<comm_mode> modes;   ///< measured in this order, each at every size
  unsigned iterations = 100;      ///< at least this many timed all-reduces per point
  unsigned warmup = 10;           ///< untimed all-reduces first, per point
  std::chrono::milliseconds window{300}; ///< and at least this long, for the GEMM's rate
  unsigned gemm_n = 8192;                ///< the GEMM loop's square bf16 size
  bool gemm_alone = false;               ///< also time the GEMM loop alone on all SMs
  std::chrono::seconds hang_limit{30};   ///< an all-reduce longer than this is a hang
  /// Partitioned modes: how long the confinement check keeps the all-reduce's SMs full.
  std::chrono::milliseconds confinement_fill{300};
  nccl_clique::operation operation = nccl_clique::operation::sum;
};

struct comm_result {
  std::vector<int> devices;
  std::string nccl_library, nccl_version; ///< the file loaded, "2.27.3"
  std::string cublas;                     ///< where cuBLAS was loaded from (gemm::availability)
  /// The sizes N for which every one of these GPUs makes "N,rest" (tune_candidates of each).
  std::vector<unsigned> split_sizes;
  std::optional<double> gemm_alone_tflops; ///< per GPU, when cfg.gemm_alone
  std::vector<comm_point> points;          ///< in measuring order
  /// Why the measurement stopped before the end (an all-reduce that did not finish), else empty;
  /// the point being measured then is the last one, with the same failure. See the file comment.
  std::string error;
};

/// Measures cfg.modes at every size in this process: per point, the all-reduce's time per
/// iteration (the slowest GPU's, by events) while the GEMM loop runs on every GPU's other SMs
/// (none in mode alone), and the GEMM's rate. Partitioned modes first check that the all-reduce
/// stays on its k SMs. Throws request_error for no devices, one device with the sum, a size that
/// is not a positive multiple of 4, a mode of 0 SMs or CTAs, or a CTA-limiting mode without
/// NCCL_MAX_CTAS=k in the environment; unsupported_error without NCCL or cuBLAS; error for driver
/// and NCCL failures. A hang ends it early (comm_result::error; see the file comment). `progress`
/// gets a line per step.
comm_result measure_comm(const comm_config &cfg, const progress_fn &progress = {});

} // namespace greenctx::measure
