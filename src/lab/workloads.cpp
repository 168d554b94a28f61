#include "greenctx/lab/workloads.hpp"

#include "driver/driver_api.hpp"
#include "greenctx/core/execution_context.hpp"
#include "greenctx/plan/error.hpp"
#include "core/kernels.hpp"

#include <algorithm>
#include <atomic>

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
  using detail::kernel_id;
  for (const auto &[n, id] :
       {std::pair{"greenctx_spin", kernel_id::spin},
        std::pair{"greenctx_timed_spin", kernel_id::timed_spin},
        std::pair{"greenctx_timed_work", kernel_id::timed_work},
        std::pair{"greenctx_stream_copy", kernel_id::stream_copy},
        std::pair{"greenctx_probe", kernel_id::probe}, std::pair{"greenctx_hold", kernel_id::hold}})
    if (name == n)
      return detail::kernel(id);
  throw request_error(CUDA_ERROR_NOT_FOUND, "greenctx::builtin_kernel",
                      "no built-in kernel named '" + std::string(name) + "'");
}

} // namespace greenctx
