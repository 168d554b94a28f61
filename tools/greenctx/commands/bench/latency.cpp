// SPDX-License-Identifier: Apache-2.0
// The measurement of `greenctx bench latency` and of `greenctx demo`.
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
  results out;
  static_cast<measure::contention_result &>(out) =
      measure::measure_contention(dev, set, critical, background, cfg, progress);
  out.asked = cfg;
  return out;
}

} // namespace greenctx::cli::bench
