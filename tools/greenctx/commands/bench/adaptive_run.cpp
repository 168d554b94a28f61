// SPDX-License-Identifier: Apache-2.0
// The measurement of `greenctx bench adaptive`: the library's (measure::measure_adaptive) with
// bench's critical kernel and the built-in chunked copy (see commands/bench/adaptive.hpp).
#include "commands/bench/adaptive.hpp"

namespace greenctx::cli::bench::adaptive {

results run(const device &dev, const config &cfg,
            const std::function<void(const std::string &)> &progress) {
  validate(cfg, dev.sms().sm_count()); // with the options' names, before the library's check
  constexpr unsigned critical_threads = 128;
  const measure::critical_workload critical{
      "kernel",
      [&cfg](stream_ref s) {
        launch_spin(s, cfg.critical_blocks, cfg.critical_block_time, critical_threads);
      },
      {}};
  measure::adaptive_result m = measure::measure_adaptive(
      dev, critical, measure::copy_chunks(dev, cfg.chunk_bytes), cfg, progress);
  results out;
  static_cast<measure::adaptive_findings &>(out) = std::move(m);
  out.cfg = cfg;
  return out;
}

} // namespace greenctx::cli::bench::adaptive
