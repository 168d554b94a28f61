// SPDX-License-Identifier: Apache-2.0
#include "measure/sampling.hpp"

#include "greenctx/core/event.hpp"
#include "greenctx/measure/workloads.hpp"
#include "greenctx/plan/error.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

namespace greenctx::measure::detail {

double us_between(clock::time_point a, clock::time_point b) {
  return std::chrono::duration<double, std::micro>(b - a).count();
}

void busy_wait(std::chrono::duration<double, std::micro> d) {
  const auto until = clock::now() + std::chrono::duration_cast<clock::duration>(d);
  while (clock::now() < until) {
  }
}

void require_launches(const critical_workload &critical, const background_workload &background,
                      const char *api) {
  if (!critical.launch || !background.launch)
    throw request_error(CUDA_ERROR_INVALID_VALUE, api,
                        std::string("the ") + (critical.launch ? "background" : "critical") +
                            " workload has no launch function");
}

double launch_unit(const background_workload &work, stream_ref s, const char *api) {
  const double w = work.launch(s);
  if (!(w > 0) || !std::isfinite(w))
    throw request_error(CUDA_ERROR_INVALID_VALUE, api,
                        "the background workload '" + work.name + "' returned " +
                            std::to_string(w) +
                            " as the work of one launch; it must return the positive amount of "
                            "work it enqueued (blocks, bytes, FLOPs), of which rates are taken");
  return w;
}

rounds_plan::rounds_plan(unsigned samples, unsigned warmup, unsigned rounds)
    : samples(samples), warmup(warmup), rounds(std::max(1u, std::min(rounds, samples))) {
}

unsigned rounds_plan::count(unsigned r) const {
  return samples / rounds + (r < samples % rounds ? 1 : 0);
}

unsigned rounds_plan::warmup_of(unsigned r) const {
  return r == 0 ? warmup : std::min(warmup, 5u);
}

void sample(const device &dev, const critical_workload &work, stream_ref s, const sampling &how,
            unsigned warmup, unsigned count, std::mt19937 &rng, critical_stats &st,
            const std::function<void()> &before_each) {
  const event before(dev.primary_context()), after(dev.primary_context());
  std::optional<stream_hold> hold;
  if (how.hold_launch)
    hold.emplace(dev);
  std::uniform_real_distribution<double> jitter(0.5, 1.5);
  for (unsigned i = 0; i < warmup + count; ++i) {
    if (before_each)
      before_each();
    busy_wait(std::chrono::duration<double, std::micro>(how.gap.count() * jitter(rng)));
    // Warm-up samples are never held: code a kernel loads on its first launch may wait for the
    // GPU, and so for the hold.
    const bool held = hold && i >= warmup;
    const auto t0 = clock::now();
    if (held)
      hold->hold(s);
    before.record(s);
    work.launch(s);
    after.record(s);
    if (held)
      hold->release();
    s.synchronize();
    const auto t1 = clock::now();
    if (held && hold->timed_out())
      throw request_error(CUDA_ERROR_INVALID_VALUE, how.api,
                          std::string("the ") + how.role + " '" + work.name +
                              "' was held back for a whole second: its launch waited for the "
                              "GPU (it synchronized, or enqueued more than a stream holds "
                              "unstarted). A launch must only enqueue work; measure it without "
                              "the hold (hold_launch off) if it cannot");

    const auto exec = work.execution_us ? work.execution_us(s) : std::nullopt;
    if (i < warmup)
      continue;
    const double gpu = 1000.0 * elapsed_ms(before, after);
    st.host_us.push_back(us_between(t0, t1));
    st.gpu_us.push_back(gpu);
    if (exec)
      st.start_delay_us.push_back(std::max(0.0, gpu - *exec));
  }
}

void summarize_all(critical_stats &st) {
  st.host = summarize(st.host_us);
  st.gpu = summarize(st.gpu_us);
  st.start_delay = summarize(st.start_delay_us);
}

} // namespace greenctx::measure::detail
