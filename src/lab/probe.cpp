#include "greenctx/lab/probe.hpp"

#include "driver/driver_api.hpp"
#include "greenctx/plan/error.hpp"
#include "core/kernels.hpp"

#include <algorithm>
#include <utility>

namespace greenctx {
namespace {
constexpr unsigned no_sm = 0xffffffffu; // written before a launch; a block that never ran keeps it
constexpr unsigned probe_threads = 32;
} // namespace

sm_probe::sm_probe(const device &dev, unsigned blocks, std::chrono::nanoseconds spin)
    : ids_(blocks ? device_buffer(dev, blocks * sizeof(unsigned)) : device_buffer()),
      blocks_(blocks),
      spin_ns_(static_cast<unsigned long long>(std::max<long long>(0, spin.count()))) {
  if (blocks == 0)
    throw request_error(CUDA_ERROR_INVALID_VALUE, "greenctx::sm_probe", "a probe needs blocks > 0");
}

void sm_probe::launch(stream_ref s) const {
  // Asynchronous and on the probe's own stream: launch() never waits for the device, so probes
  // on several partitions can be queued back to back and run at the same time.
  ids_.fill_async(no_sm, s);
  CUdeviceptr ids = ids_.get();
  unsigned long long spin = spin_ns_;
  void *args[] = {&ids, &spin};
  detail::launch(detail::kernel_id::probe, s.native_handle(), blocks_, probe_threads, args);
}

std::vector<unsigned> sm_probe::block_sms() const {
  std::vector<unsigned> out(blocks_);
  ids_.copy_to_host(out.data(), out.size() * sizeof(unsigned));
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

} // namespace greenctx
