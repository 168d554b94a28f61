// Workloads for measurements: callables that launch their work on the stream they are given, so
// that the stream's context (a green context, the primary context) decides which SMs run it. Pass
// your own kernels, or use the built-in ones below (bench's spin, memory and GEMM backgrounds, its
// kernel and GEMM critical work).
#pragma once

#include "greenctx/cxx_standard.hpp"

#include "greenctx/core/device.hpp"
#include "greenctx/core/stream.hpp"

#include <chrono>
#include <functional>
#include <optional>
#include <string>

namespace greenctx::measure {

/// The latency-critical work, launched once per sample.
struct critical_workload {
  std::string name; ///< what the reports call it ("kernel", "gemm", or yours)
  /// Enqueues one instance on the stream (no synchronization: the measurement waits for it).
  std::function<void(stream_ref)> launch;
  /// Optional. Called after the instance has finished (on the same stream, which it may use):
  /// the instance's own execution time in microseconds, first block start to last block end.
  /// With it, each sample's start delay (its device time minus its execution) is reported too.
  std::function<std::optional<double>(stream_ref)> execution_us;
};

/// Work that keeps its SMs busy, launched over and over, whose rate is measured over whole
/// launches.
struct background_workload {
  std::string name; ///< what the reports call it ("spin", "memory", "gemm", or yours)
  /// Enqueues one unit on the stream and returns the work it does (any positive amount: blocks,
  /// bytes, FLOPs; rates are this per second).
  std::function<double(stream_ref)> launch;
  std::string unit = "units/s"; ///< how a rate is shown, after dividing by unit_scale
  double unit_scale = 1;
  /// Optional: how the unit's shape bends its rate on `sms` SMs (for example whole waves of
  /// blocks), for people reading a report.
  std::function<std::string(unsigned sms)> shape_note;
};

/// `blocks` blocks of 128 threads spinning `block_time` each, writing their start and end times:
/// compute-bound critical work of known length whose execution time is measured on the GPU.
/// `dev` must outlive it.
critical_workload kernel_critical(const device &dev, unsigned blocks,
                                  std::chrono::microseconds block_time);

/// One square bf16 cuBLAS GEMM of size n (measure::gemm; throws unsupported_error without
/// cuBLAS). `dev` must outlive it.
critical_workload gemm_critical(const device &dev, unsigned n);

/// Spinning blocks of 128 threads, `block_time` each, `waves` full-GPU waves per launch (every SM
/// of `dev` filled with resident blocks): compute-bound work, counted in blocks.
background_workload spin_background(const device &dev, unsigned waves,
                                    std::chrono::microseconds block_time);

/// A device-to-device copy of `bytes` in 64 blocks per SM of `dev`: memory-bound work, counted in
/// bytes read and written. `dev` must outlive it.
background_workload memory_background(const device &dev, std::size_t bytes);

/// The adaptive measurement's default background (adaptive.hpp): a device-to-device copy of
/// `chunk_bytes` in 8 blocks of 256 threads per SM of `dev`, short enough that a switch of
/// layouts takes effect at the next chunk; counted in bytes read and written. Throws
/// request_error for a chunk smaller than min_copy_chunk_bytes. `dev` must outlive it.
background_workload copy_chunks(const device &dev, std::size_t chunk_bytes = std::size_t{64} << 20);

/// The smallest chunk copy_chunks copies on a GPU of `device_sms` SMs: one 16-byte word per copy
/// thread. Pure code.
std::size_t min_copy_chunk_bytes(unsigned device_sms);

/// Square bf16 cuBLAS GEMMs of size n: tensor-core work, counted in FLOPs (throws
/// unsupported_error without cuBLAS). `dev` must outlive it.
background_workload gemm_background(const device &dev, unsigned n);

} // namespace greenctx::measure
