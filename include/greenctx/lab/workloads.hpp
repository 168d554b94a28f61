// Kernels for experiments and benchmarks: work whose size and duration you choose, so that what a
// partition does to it is easy to see. They launch on any stream; the stream's context decides
// which SMs they use.
#pragma once

#include "greenctx/cxx_standard.hpp"

#include "greenctx/core/memory.hpp"
#include "greenctx/core/stream.hpp"

#include <chrono>
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
/// "greenctx_timed_work", "greenctx_stream_copy", "greenctx_probe", "greenctx_hold". Throws
/// request_error for an unknown name.
CUkernel builtin_kernel(std::string_view name);

} // namespace greenctx
