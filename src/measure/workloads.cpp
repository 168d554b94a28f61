// SPDX-License-Identifier: Apache-2.0
#include "greenctx/measure/workloads.hpp"

#include "core/kernels.hpp"
#include "driver/driver_api.hpp"
#include "greenctx/core/execution_context.hpp"
#include "greenctx/core/memory.hpp"
#include "greenctx/measure/gemm.hpp"
#include "greenctx/plan/error.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <memory>
#include <vector>

namespace greenctx {
namespace {
unsigned long long to_ns(std::chrono::nanoseconds d) {
  return static_cast<unsigned long long>(std::max<long long>(0, d.count()));
}
} // namespace

void launch_spin(stream_ref s, unsigned blocks, std::chrono::nanoseconds duration,
                 unsigned threads) {
  unsigned long long ns = to_ns(duration);
  void *args[] = {&ns};
  detail::launch(detail::kernel_id::spin, s.native_handle(), blocks, threads, args);
}

sm_filling_blocks sm_filling_blocks_of(CUdevice device) {
  int per_sm = 0;
  GREENCTX_CALL(cuDeviceGetAttribute, &per_sm, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR,
                device);
  // Two blocks of half the thread limit: at most 1024 threads a block on every GPU so far.
  sm_filling_blocks shape;
  shape.threads = static_cast<unsigned>(std::clamp(per_sm / 2, 32, 1024));
  shape.per_sm = std::max(1u, static_cast<unsigned>(per_sm) / shape.threads);
  return shape;
}

unsigned fill_sms(stream_ref s, std::chrono::nanoseconds duration) {
  const execution_context_ref ctx = s.context();
  const sm_filling_blocks shape = sm_filling_blocks_of(ctx.device());
  const unsigned blocks = ctx.sms().sm_count() * shape.per_sm;
  launch_spin(s, blocks, duration, shape.threads);
  return blocks;
}

namespace {
// A kernel of (unsigned long long, stamps) whose blocks record their start and end.
void launch_stamped(detail::kernel_id id, const char *api, stream_ref s, unsigned blocks,
                    unsigned long long value, unsigned threads, const device_buffer &stamps) {
  if (stamps.size() < 2ull * blocks * sizeof(unsigned long long))
    throw request_error(CUDA_ERROR_INVALID_VALUE, api,
                        "the stamps buffer holds " + std::to_string(stamps.size()) + " bytes; " +
                            std::to_string(blocks) + " blocks need " +
                            std::to_string(16ull * blocks));
  CUdeviceptr out = stamps.get();
  void *args[] = {&value, &out};
  detail::launch(id, s.native_handle(), blocks, threads, args);
}
} // namespace

void launch_timed_spin(stream_ref s, unsigned blocks, std::chrono::nanoseconds duration,
                       unsigned threads, const device_buffer &stamps) {
  launch_stamped(detail::kernel_id::timed_spin, "greenctx::launch_timed_spin", s, blocks,
                 to_ns(duration), threads, stamps);
}

void launch_timed_work(stream_ref s, unsigned blocks, unsigned long long iterations,
                       unsigned threads, const device_buffer &stamps) {
  launch_stamped(detail::kernel_id::timed_work, "greenctx::launch_timed_work", s, blocks,
                 iterations, threads, stamps);
}

std::size_t launch_stream_copy(stream_ref s, const device_buffer &in, const device_buffer &out,
                               unsigned blocks, unsigned threads) {
  const std::size_t words = std::min(in.size(), out.size()) / 16;
  unsigned long long chunk = blocks ? words / blocks : 0;
  if (chunk == 0)
    throw request_error(CUDA_ERROR_INVALID_VALUE, "greenctx::launch_stream_copy",
                        "buffers of " + std::to_string(std::min(in.size(), out.size())) +
                            " bytes are too small for " + std::to_string(blocks) +
                            " blocks of at least 16 bytes");
  CUdeviceptr src = in.get(), dst = out.get();
  void *args[] = {&src, &dst, &chunk};
  detail::launch(detail::kernel_id::stream_copy, s.native_handle(), blocks, threads, args);
  return chunk * blocks * 16;
}

stream_hold::stream_hold(const device &dev) : words_(dev, 2 * sizeof(unsigned)) {
}

void stream_hold::hold(stream_ref s, std::chrono::nanoseconds timeout) {
  CUdeviceptr words = words_.device_pointer();
  unsigned ticket = ticket_ + 1;
  unsigned long long ns = to_ns(timeout);
  void *args[] = {&words, &ticket, &ns};
  detail::launch(detail::kernel_id::hold, s.native_handle(), 1, 1, args);
  ticket_ = ticket;
}

void stream_hold::release() {
  std::atomic_ref<unsigned>(static_cast<unsigned *>(words_.host())[0])
      .store(ticket_, std::memory_order_release);
}

bool stream_hold::timed_out() const {
  return ticket_ != 0 && std::atomic_ref<unsigned>(static_cast<unsigned *>(words_.host())[1])
                                 .load(std::memory_order_acquire) == ticket_;
}

CUkernel builtin_kernel(std::string_view name) {
  if (const auto id = detail::kernel_named(name))
    return detail::kernel(*id);
  throw request_error(CUDA_ERROR_NOT_FOUND, "greenctx::builtin_kernel",
                      "no built-in kernel named '" + std::string(name) + "'");
}

} // namespace greenctx

namespace greenctx::measure {
namespace {

constexpr unsigned spin_threads = 128;
constexpr unsigned copy_threads = 256;      // launch_stream_copy's default
constexpr unsigned chunk_blocks_per_sm = 8; // copy_chunks (bench adaptive's copy)

// Blocks of `threads` threads that fit on one SM at once (no shared memory, few registers).
unsigned resident_blocks(const device &dev, unsigned threads) {
  const int by_blocks = dev.attribute(CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR);
  const int by_threads =
      dev.attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR) / static_cast<int>(threads);
  return static_cast<unsigned>(std::max(1, std::min(by_blocks, by_threads)));
}

constexpr const char *api = "greenctx::measure workloads";

void require(bool ok, const std::string &what) {
  if (!ok)
    throw request_error(CUDA_ERROR_INVALID_VALUE, api, what);
}

std::string fixed(double x, int digits) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", digits, x);
  return text;
}

// The kernel critical work's state: where its blocks write their times, and a host copy.
struct timed_spin {
  timed_spin(const device &dev, unsigned blocks, std::chrono::microseconds block_time)
      : stamps(dev, 2 * sizeof(unsigned long long) * blocks), blocks(blocks), time(block_time),
        host(2 * blocks) {}
  device_buffer stamps;
  unsigned blocks;
  std::chrono::microseconds time;
  std::vector<unsigned long long> host;
};

// A device-to-device copy of `bytes` per launch in `blocks` blocks, counted in bytes read and
// written (memory_background, copy_chunks).
background_workload copy_workload(const device &dev, std::size_t bytes, unsigned blocks) {
  struct buffers {
    device_buffer in, out;
  };
  auto b = std::make_shared<buffers>(buffers{device_buffer(dev, bytes), device_buffer(dev, bytes)});
  background_workload w;
  w.unit = "GB/s";
  w.unit_scale = 1e9;
  w.launch = [b, blocks](stream_ref s) {
    return 2.0 * static_cast<double>(launch_stream_copy(s, b->in, b->out, blocks)); // read+write
  };
  w.shape_note = [](unsigned) {
    return std::string("memory-bound: the rate follows memory bandwidth, which fewer SMs may "
                       "still saturate, so the SM share is a floor, not a ceiling");
  };
  return w;
}

} // namespace

critical_workload kernel_critical(const device &dev, unsigned blocks,
                                  std::chrono::microseconds block_time) {
  require(blocks >= 1, "the kernel critical work needs at least 1 block");
  require(block_time.count() >= 0, "the kernel critical work's block time cannot be negative");
  auto k = std::make_shared<timed_spin>(dev, blocks, block_time);
  critical_workload w;
  w.name = "kernel";
  w.launch = [k](stream_ref s) {
    launch_timed_spin(s, k->blocks, k->time, spin_threads, k->stamps);
  };
  w.execution_us = [k](stream_ref s) -> std::optional<double> {
    // On the critical stream itself: a copy on the NULL stream could queue behind the background.
    k->stamps.copy_to_host(k->host.data(), k->host.size() * sizeof(unsigned long long), s);
    unsigned long long first = ~0ull, last = 0;
    for (unsigned b = 0; b < k->blocks; ++b) {
      first = std::min(first, k->host[2 * b]);
      last = std::max(last, k->host[2 * b + 1]);
    }
    return static_cast<double>(last - first) / 1000.0;
  };
  return w;
}

critical_workload gemm_critical(const device &dev, unsigned n) {
  require(n >= 1, "the critical GEMM's size must be at least 1");
  auto g = std::make_shared<gemm>(dev, n);
  critical_workload w;
  w.name = "gemm";
  w.launch = [g](stream_ref s) { g->launch(s); };
  return w;
}

background_workload spin_background(const device &dev, unsigned waves,
                                    std::chrono::microseconds block_time) {
  require(block_time.count() >= 1, "the spin background's blocks need at least 1 us each");
  const unsigned resident = resident_blocks(dev, spin_threads);
  const unsigned per_wave = dev.sms().sm_count() * resident;
  constexpr unsigned most_blocks = (1u << 31) - 1; // the most blocks of a grid's x dimension
  require(waves >= 1 && waves <= most_blocks / per_wave,
          "the spin background takes 1 to " + std::to_string(most_blocks / per_wave) +
              " waves of " + std::to_string(per_wave) + " blocks on this GPU, not " +
              std::to_string(waves));
  const unsigned blocks = waves * per_wave;
  background_workload w;
  w.name = "spin";
  w.unit = "blocks/s";
  w.launch = [blocks, block_time](stream_ref s) {
    launch_spin(s, blocks, block_time, spin_threads);
    return static_cast<double>(blocks);
  };
  w.shape_note = [=](unsigned sms) {
    const double share_waves = static_cast<double>(blocks) / (sms * resident);
    const double whole_waves = std::ceil(share_waves);
    return "each background kernel is " + std::to_string(waves) + " full-GPU waves (" +
           std::to_string(blocks) + " blocks of " + std::to_string(block_time.count()) + " us, " +
           std::to_string(resident) + " resident per SM); on " + std::to_string(sms) +
           " SMs that is " + fixed(share_waves, 2) + " waves, run as " + fixed(whole_waves, 0) +
           ": whole waves alone allow " + fixed(share_waves / whole_waves, 3) + " of the SM share";
  };
  return w;
}

background_workload memory_background(const device &dev, std::size_t bytes) {
  require(bytes >= 1, "the memory background copies at least 1 byte per launch");
  background_workload w = copy_workload(dev, bytes, dev.sms().sm_count() * 64);
  w.name = "memory";
  return w;
}

std::size_t min_copy_chunk_bytes(unsigned device_sms) {
  return std::size_t{16} * copy_threads * chunk_blocks_per_sm * device_sms;
}

background_workload copy_chunks(const device &dev, std::size_t chunk_bytes) {
  const unsigned sms = dev.sms().sm_count();
  const std::size_t least = min_copy_chunk_bytes(sms);
  require(chunk_bytes >= least, std::to_string(chunk_bytes) +
                                    " bytes per chunk are fewer than one 16-byte word per " +
                                    "copy thread (" + std::to_string(chunk_blocks_per_sm * sms) +
                                    " blocks of " + std::to_string(copy_threads) +
                                    " threads): give at least " + std::to_string(least) + " bytes");
  background_workload w = copy_workload(dev, chunk_bytes, chunk_blocks_per_sm * sms);
  w.name = "copy chunks";
  return w;
}

background_workload gemm_background(const device &dev, unsigned n) {
  require(n >= 1, "the background GEMM's size must be at least 1");
  auto g = std::make_shared<gemm>(dev, n);
  background_workload w;
  w.name = "gemm";
  w.unit = "TFLOP/s";
  w.unit_scale = 1e12;
  w.launch = [g](stream_ref s) {
    g->launch(s);
    return g->flops();
  };
  w.shape_note = [](unsigned) {
    return std::string("cuBLAS sizes its tiles for the whole GPU; on fewer SMs the last wave "
                       "of tiles can run partly empty");
  };
  return w;
}

} // namespace greenctx::measure
