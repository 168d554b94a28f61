// SPDX-License-Identifier: Apache-2.0
#include "greenctx/measure/verify.hpp"

#include "driver/driver_api.hpp"
#include "greenctx/core/event.hpp"
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

verify_report verify_partitions(const device &dev, const partition_set &set, unsigned blocks_per_sm,
                                std::chrono::nanoseconds spin) {
  const unsigned device_sms = dev.sms().sm_count();
  const unsigned blocks = std::max(1u, blocks_per_sm) * device_sms;

  std::vector<stream> streams;
  std::vector<sm_probe> probes;
  std::vector<event> starts, ends;
  std::vector<partition_usage> usage;
  for (const auto &p : set.parts()) {
    streams.push_back(p.context.create_stream());
    probes.emplace_back(dev, blocks, spin);
    starts.emplace_back(dev.primary_context());
    ends.emplace_back(dev.primary_context());
    usage.push_back({p.label(), p.requested, p.obtained(), {}, 0, 0});
  }
  // Queued back to back with nothing that waits in between, so the partitions are busy at the
  // same time and any spill into a neighbour would show.
  for (std::size_t i = 0; i < streams.size(); ++i) {
    starts[i].record(streams[i]);
    probes[i].launch(streams[i]);
    ends[i].record(streams[i]);
  }
  for (auto &s : streams)
    s.synchronize();
  for (std::size_t i = 0; i < streams.size(); ++i) {
    usage[i].start_us = 1000.0 * elapsed_ms(starts.front(), starts[i]);
    usage[i].end_us = 1000.0 * elapsed_ms(starts.front(), ends[i]);
  }
  for (std::size_t i = 0; i < probes.size(); ++i)
    usage[i].sms = probes[i].sms_used();
  return check_usage(std::move(usage), device_sms);
}

} // namespace greenctx
