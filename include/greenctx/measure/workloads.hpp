// SPDX-License-Identifier: Apache-2.0
// Workloads: the built-in kernels, whose size and duration you choose so that what a partition
// does to them is easy to see (namespace greenctx: spin, timed spin and work, SM fill, stream copy,
// the launch hold), and, for the measurements, callables that launch their work on the stream they
// are given, so that the stream's context (a green context, the primary context) decides which SMs
// run it (namespace greenctx::measure: bench's spin, memory and GEMM backgrounds, its kernel and
// GEMM critical work). Pass your own kernels to the measurements, or use these.
#pragma once

#include "greenctx/cxx_standard.hpp"

#include "greenctx/core/device.hpp"
#include "greenctx/core/memory.hpp"
#include "greenctx/core/stream.hpp"

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace greenctx {

/// `blocks` blocks of `threads` threads, each spinning for `duration` (on %globaltimer): a
/// compute-bound workload of known length, like the guide's long and critical kernels.
void launch_spin(stream_ref s, unsigned blocks, std::chrono::nanoseconds duration,
                 unsigned threads = 32);

/// The blocks that hold an SM whole: two blocks an SM of half its thread limit each (1024 threads
/// on an H100/H200). fill_sms launches this shape; so does greenctx verify --processes, in waves.
struct sm_filling_blocks {
  unsigned threads = 0; ///< per block
  unsigned per_sm = 0;  ///< blocks resident on one SM at once
};
/// The shape for device `device`. Throws error when the driver cannot say.
sm_filling_blocks sm_filling_blocks_of(CUdevice device);

/// Fills every SM of the stream's context for `duration`: two blocks per SM of half the SM's
/// thread limit each (1024 threads on an H100/H200), spinning, so that no other block can be
/// resident on those SMs until they end. A kernel launched elsewhere that should run on these SMs
/// must wait for them: the test of whether a library's kernels stay on a partition. Returns the
/// blocks launched.
unsigned fill_sms(stream_ref s, std::chrono::nanoseconds duration);

/// Like launch_spin, writing each block's start and end time (%globaltimer, ns) into `stamps`:
/// two 64-bit values per block. Throws request_error when `stamps` is too small.
void launch_timed_spin(stream_ref s, unsigned blocks, std::chrono::nanoseconds duration,
                       unsigned threads, const device_buffer &stamps);

/// Like launch_timed_spin, but each thread runs `iterations` dependent multiply-adds instead of
/// spinning on the clock: a fixed amount of work, so that a block that shares its SM, or whose
/// process loses the GPU to another's time slice, takes longer (a spin on the clock would not).
/// Throws request_error when `stamps` is too small.
void launch_timed_work(stream_ref s, unsigned blocks, unsigned long long iterations,
                       unsigned threads, const device_buffer &stamps);

/// Copies `in` to `out` in `blocks` equal chunks of 16-byte words, one chunk per block: a
/// memory-bound workload. The bytes copied are the largest multiple of 16 * blocks that fits in
/// both buffers, and are returned. Throws request_error when that is 0.
std::size_t launch_stream_copy(stream_ref s, const device_buffer &in, const device_buffer &out,
                               unsigned blocks, unsigned threads = 256);

/// Holds back the work enqueued on a stream until the host lets it go: hold() enqueues a one-thread
/// kernel that waits, the caller enqueues its work, release() lets it start. The work then starts
/// as one batch, as if it had been enqueued at once, so that the time its launches took on the
/// host is not part of its device time. A hold that is not released within `timeout` lets go by
/// itself and says so (timed_out): work that waits for its own stream while held is late, never
/// stuck. Not thread-safe; one hold at a time.
class stream_hold {
public:
  explicit stream_hold(const device &dev); ///< throws error
  /// Enqueues the hold on `s`. Each hold() must be followed by release().
  void hold(stream_ref s, std::chrono::nanoseconds timeout = std::chrono::seconds(1));
  void release();
  /// Whether the last hold let go by its timeout; read it once `s` has run past the hold.
  bool timed_out() const;

private:
  mapped_host_buffer words_; // [0] the ticket released, [1] the last ticket that timed out
  unsigned ticket_ = 0;
};

/// The context-independent handle (CUkernel) of a built-in kernel, for raw driver launches that
/// compare with greenctx's: "greenctx_spin" (args: unsigned long long ns), "greenctx_timed_spin",
/// "greenctx_timed_work", "greenctx_stream_copy", "greenctx_probe", "greenctx_hold",
/// "greenctx_bandwidth". Throws request_error for an unknown name.
CUkernel builtin_kernel(std::string_view name);

} // namespace greenctx

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
