// SPDX-License-Identifier: Apache-2.0
// The memory bandwidth of a green context against its SM count: DRAM and L2, read, write and copy,
// each alone and beside the rest of the GPU doing the same (`greenctx bench bandwidth`). Green
// contexts split SMs, not DRAM bandwidth or L2: this is how much of either N SMs reach, and how
// much two partitions take from each other.
#pragma once

#include "greenctx/cxx_standard.hpp"

#include "greenctx/core/device.hpp"
#include "greenctx/measure/contention.hpp"

#include <cstddef>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

namespace greenctx::measure {

/// What a bandwidth kernel does with its buffers.
enum class memory_op { read, write, copy };
/// Every op, in report order.
inline constexpr memory_op memory_ops[] = {memory_op::read, memory_op::write, memory_op::copy};
/// "read", "write", "copy".
inline const char *name(memory_op op) {
  return op == memory_op::read ? "read" : op == memory_op::write ? "write" : "copy";
}
/// Bytes one pass over `words` 16-byte words moves: the words once, twice for a copy (read and
/// written).
inline std::size_t bytes_per_pass(memory_op op, std::size_t words) {
  return words * 16 * (op == memory_op::copy ? 2 : 1);
}

/// Where the data lives: a footprint far larger than L2 (DRAM), or one a quarter of L2 per buffer,
/// streamed over many times (L2 after the first pass).
enum class memory_level { dram, l2 };
/// Every level, in report order.
inline constexpr memory_level memory_levels[] = {memory_level::dram, memory_level::l2};
/// "dram", "l2".
inline const char *name(memory_level level) {
  return level == memory_level::dram ? "dram" : "l2";
}

struct bandwidth_config {
  /// SM counts, each the first piece of an N,rest split this GPU makes, increasing; empty: every
  /// such N (tune_candidates). The whole device (every SM, on the primary context) is always
  /// measured last.
  std::vector<unsigned> sizes;
  std::vector<memory_op> ops{std::begin(memory_ops), std::end(memory_ops)};
  std::vector<memory_level> levels{std::begin(memory_levels), std::end(memory_levels)};
  std::size_t dram_bytes = std::size_t{1} << 30; ///< each DRAM buffer (at least 4x L2)
  unsigned repeats = 10; ///< timed kernels per measurement, after one untimed
  bool beside = true;    ///< also measure each N beside its rest doing the same
};

/// Refuses, before any GPU work, what cannot be measured on a GPU of `sms` with `l2_bytes` of
/// L2: a size that is not an N,rest split of this GPU (saying which are), sizes not increasing,
/// no op or level, the same op or level twice, a DRAM buffer smaller than 4x L2, 0 repeats.
/// Throws request_error.
void check_bandwidth_config(const bandwidth_config &cfg, const sm_resource &sms,
                            std::size_t l2_bytes);

/// One rate: bytes moved over the time of the timed kernels, in GB/s (10^9 bytes per second).
struct bandwidth_rate {
  double bytes = 0;
  double seconds = 0;
  double gbs() const { return seconds > 0 ? bytes / seconds / 1e9 : 0; }
};

/// One SM count, op and level.
struct bandwidth_point {
  unsigned sms = 0;
  bool whole_device = false; ///< every SM, on the primary context (no rest)
  memory_op op = memory_op::read;
  memory_level level = memory_level::dram;
  std::size_t footprint = 0; ///< bytes of each buffer
  unsigned passes = 1;       ///< over the footprint per kernel
  bandwidth_rate alone;
  unsigned rest_sms = 0; ///< the other piece of the split (0: whole device)
  /// With cfg.beside: this partition while its rest does the same, the rest alone, and the rest
  /// while this partition does the same. The side measured runs its kernels while the other
  /// streams longer, so that its whole time is shared.
  std::optional<bandwidth_rate> beside, rest_alone, rest_beside;
  /// Whether the other side was still running when each measured side ended (false: part of the
  /// measured time was not shared, and the beside rates are too high).
  bool overlapped = true;
};

struct bandwidth_result {
  bandwidth_config cfg; ///< sizes filled in
  unsigned device_sms = 0;
  std::size_t l2_bytes = 0;
  std::vector<bandwidth_point> points; ///< by level, op, then SM count (whole device last)
};

/// Measures cfg on `dev`: for each level, op and SM count, a green context of N SMs (N,rest) runs
/// the bandwidth kernel (8 blocks of 256 threads per SM) `repeats` times; then, with cfg.beside,
/// again while the rest runs the same kernel on buffers of its own, and the other way round. The
/// splits are made once and kept. Throws request_error (check_bandwidth_config), error for driver
/// failures.
bandwidth_result measure_bandwidth(const device &dev, const bandwidth_config &cfg = {},
                                   const progress_fn &progress = {});

} // namespace greenctx::measure
