#include "greenctx/lab/verify.hpp"

#include "greenctx/core/event.hpp"
#include "greenctx/core/stream.hpp"
#include "greenctx/lab/probe.hpp"

namespace greenctx {

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
