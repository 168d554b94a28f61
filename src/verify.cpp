#include "greenctx/verify.hpp"

#include "greenctx/probe.hpp"
#include "greenctx/stream.hpp"

namespace greenctx {

verify_report verify_partitions(const device &dev, const partition_set &set, unsigned blocks_per_sm,
                                std::chrono::nanoseconds spin) {
  const unsigned device_sms = dev.sms().sm_count();
  const unsigned blocks = std::max(1u, blocks_per_sm) * device_sms;

  std::vector<stream> streams;
  std::vector<sm_probe> probes;
  std::vector<partition_usage> usage;
  {
    // All probes start together: each stream waits on the gate (no SM used while waiting), so
    // the partitions are busy at the same time and any spill into a neighbour would show.
    start_gate gate(dev);
    for (const auto &p : set.parts()) {
      streams.push_back(p.context.create_stream());
      probes.emplace_back(dev, blocks, spin);
      gate.hold(streams.back());
      probes.back().launch(streams.back());
      usage.push_back({p.label(), p.requested, p.obtained(), {}});
    }
    gate.open();
    for (auto &s : streams)
      s.synchronize();
  }
  for (std::size_t i = 0; i < probes.size(); ++i)
    usage[i].sms = probes[i].sms_used();
  return check_usage(std::move(usage), device_sms);
}

} // namespace greenctx
