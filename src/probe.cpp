#include "greenctx/probe.hpp"

#include "detail/context_guard.hpp"
#include "detail/driver_api.hpp"
#include "detail/kernels.hpp"
#include "greenctx/error.hpp"

#include <algorithm>
#include <utility>

namespace greenctx {
namespace {
constexpr unsigned no_sm = 0xffffffffu; // written before a launch; a block that never ran keeps it
constexpr unsigned probe_threads = 32;
} // namespace

sm_probe::sm_probe(const device &dev, unsigned blocks, std::chrono::nanoseconds spin) {
  if (blocks == 0)
    throw request_error(CUDA_ERROR_INVALID_VALUE, "greenctx::sm_probe", "a probe needs blocks > 0");
  s_.device = dev.native_handle();
  s_.blocks = blocks;
  s_.spin_ns = static_cast<unsigned long long>(std::max<long long>(0, spin.count()));
  detail::scoped_primary_context guard(s_.device);
  GREENCTX_CALL(cuMemAlloc, &s_.ids, blocks * sizeof(unsigned));
}

sm_probe::sm_probe(sm_probe &&other) noexcept : s_(std::exchange(other.s_, state{})) {
}

sm_probe &sm_probe::operator=(sm_probe &&other) noexcept {
  sm_probe tmp(std::move(other));
  std::swap(s_, tmp.s_);
  return *this;
}

sm_probe::~sm_probe() {
  if (!s_.ids)
    return;
  try {
    detail::scoped_primary_context guard(s_.device);
    detail::driver().cuMemFree(s_.ids);
  } catch (...) {
    // destructors do not throw; the memory goes with the context
  }
}

void sm_probe::launch(stream_ref s) const {
  // Asynchronous and on the probe's own stream: launch() never waits for the device, so probes
  // on several partitions can be queued back to back and run at the same time.
  GREENCTX_CALL(cuMemsetD32Async, s_.ids, no_sm, s_.blocks, s.native_handle());
  CUdeviceptr ids = s_.ids;
  unsigned long long spin = s_.spin_ns;
  void *args[] = {&ids, &spin};
  detail::launch(detail::kernel_id::probe, s.native_handle(), s_.blocks, probe_threads, args);
}

std::vector<unsigned> sm_probe::block_sms() const {
  std::vector<unsigned> out(s_.blocks);
  detail::scoped_primary_context guard(s_.device);
  GREENCTX_CALL(cuMemcpyDtoH, out.data(), s_.ids, out.size() * sizeof(unsigned));
  return out;
}

std::vector<unsigned> sm_probe::sms_used() const {
  std::vector<unsigned> ids = block_sms();
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  if (!ids.empty() && ids.back() == no_sm)
    throw error(CUDA_ERROR_UNKNOWN, "greenctx::sm_probe",
                "some probe blocks did not run: read the result after the launch completes");
  return ids;
}

void launch_spin(stream_ref s, unsigned blocks, std::chrono::nanoseconds duration,
                 unsigned threads) {
  unsigned long long ns = static_cast<unsigned long long>(std::max<long long>(0, duration.count()));
  void *args[] = {&ns};
  detail::launch(detail::kernel_id::spin, s.native_handle(), blocks, threads, args);
}

} // namespace greenctx
