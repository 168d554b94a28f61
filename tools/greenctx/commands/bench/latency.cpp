#include "commands/bench/latency.hpp"
#include "common/workload_options.hpp"

namespace greenctx::cli::bench {

results run(const device &dev, const config &cfg,
            const std::function<void(const std::string &)> &progress) {
  const partition_set set = partition_set::create(dev, partition_request{{cfg.critical_sms}, true});
  return run(dev, set, cfg, progress);
}

results run(const device &dev, const partition_set &set, const config &cfg,
            const std::function<void(const std::string &)> &progress) {
  const auto [critical, background] = workloads(dev, cfg);
  const measure::contention_config how{cfg.samples, cfg.warmup,      cfg.rounds,
                                       cfg.gap,     cfg.rate_window, cfg.placements};
  measure::contention_result m =
      measure::measure_contention(dev, set, critical, background, how, progress);
  results out;
  out.cfg = cfg;
  out.device_sms = m.device_sms;
  out.critical_sms_obtained = m.critical_sms;
  out.background_sms_obtained = m.background_sms;
  out.background_unit = m.background_unit;
  out.background_unit_scale = m.background_unit_scale;
  out.background_full = m.background_full;
  out.background_share = m.background_share;
  out.quantization = m.background_shape;
  out.background_launch_work = m.background_launch_work;
  out.placements = std::move(m.placements);
  return out;
}

} // namespace greenctx::cli::bench
