// SPDX-License-Identifier: Apache-2.0
// The adaptive measurement (see greenctx/measure/adaptive.hpp).
#include "greenctx/measure/adaptive.hpp"

#include "greenctx/core/event.hpp"
#include "greenctx/core/pool.hpp"
#include "measure/sampling.hpp"

#include <algorithm>
#include <deque>
#include <random>

namespace greenctx::measure {
namespace {

using detail::clock;
using detail::us_between;
using micros = std::chrono::duration<double, std::micro>;
constexpr const char *api = "greenctx::measure::measure_adaptive";

// Background chunks on whichever stream the caller names, at most `depth` queued over all
// streams. Rate: work of finished chunks over host wall time from the first launch to finish().
class chunk_feeder {
public:
  chunk_feeder(const device &dev, const background_workload &work, unsigned depth)
      : dev_(dev), work_(work), depth_(depth) {}

  void top_up(stream_ref s) {
    retire();
    while (queued_.size() < depth_) {
      if (!started_) {
        start_ = clock::now();
        started_ = true;
      }
      const double work = detail::launch_unit(work_, s, api);
      event e(dev_.primary_context());
      e.record(s);
      queued_.push_back({std::move(e), work, s.native_handle()});
    }
  }
  /// Spins (feeding nothing) until no chunk queued on `s` is unfinished.
  void wait_for(stream_ref s) {
    for (;;) {
      retire();
      if (std::none_of(queued_.begin(), queued_.end(),
                       [&](const item &i) { return i.stream == s.native_handle(); }))
        return;
    }
  }
  background_rate finish() {
    for (auto &i : queued_)
      i.done.synchronize();
    const auto end = clock::now();
    for (auto &i : queued_)
      work_done_ += i.work;
    queued_.clear();
    return {work_done_, started_ ? std::chrono::duration<double>(end - start_).count() : 0};
  }

private:
  struct item {
    event done;
    double work;
    CUstream stream;
  };
  // Chunks finish in order per stream, not across streams: retire every finished one.
  void retire() {
    for (auto it = queued_.begin(); it != queued_.end();) {
      if (it->done.ready()) {
        work_done_ += it->work;
        it = queued_.erase(it);
      } else {
        ++it;
      }
    }
  }
  const device &dev_;
  const background_workload &work_;
  unsigned depth_;
  std::deque<item> queued_;
  double work_done_ = 0;
  bool started_ = false;
  clock::time_point start_;
};

// What a configuration runs: no background, the background held wide, or the adaptive policy
// with the narrow layout `narrow`.
struct plan {
  adaptive_configuration *out;
  bool background = false, adapt = false;
  std::size_t narrow = 0; // pool layout index
  adaptive_policy pol = adaptive_policy::lead;
};

// The configurations of `cfg` ("alone", "static", then each N with each policy) with what each
// runs; `out.configurations` must not grow afterwards (the plans point into it).
std::vector<plan> configurations(const adaptive_config &cfg, adaptive_findings &out) {
  const std::string wide = std::to_string(out.wide_sms_obtained);
  out.configurations.push_back(
      {"alone",
       "critical alone on its " + std::to_string(out.critical_sms_obtained) + " SMs",
       0,
       "",
       critical_stats{},
       std::nullopt,
       {}});
  out.configurations.push_back({"static",
                                "static: background on " + wide + " SMs throughout",
                                0,
                                "",
                                critical_stats{},
                                background_rate{},
                                {}});
  for (std::size_t i = 0; i < cfg.shrink_to.size(); ++i)
    for (adaptive_policy pol : cfg.policies)
      out.configurations.push_back(
          {"adaptive-" + std::to_string(cfg.shrink_to[i]) + "-" + name(pol),
           pol == adaptive_policy::narrow
               ? "narrow: background on " + std::to_string(out.narrow_sms_obtained[i]) +
                     " SMs throughout"
               : "adaptive " + std::string(name(pol)) + ": background " + wide + " -> " +
                     std::to_string(out.narrow_sms_obtained[i]) + " SMs",
           cfg.shrink_to[i],
           name(pol),
           critical_stats{},
           background_rate{},
           {}});
  std::vector<plan> plans{{&out.configurations[0], false, false, 0, adaptive_policy::lead},
                          {&out.configurations[1], true, false, 0, adaptive_policy::lead}};
  std::size_t k = 2;
  for (std::size_t i = 0; i < cfg.shrink_to.size(); ++i)
    for (adaptive_policy pol : cfg.policies)
      plans.push_back({&out.configurations[k++], true, true, i + 1, pol});
  return plans;
}

} // namespace

adaptive_result measure_adaptive(const device &dev, const critical_workload &critical,
                                 const background_workload &background, const adaptive_config &cfg,
                                 const progress_fn &progress) {
  const auto say = [&](const std::string &line) {
    if (progress)
      progress(line);
  };
  detail::require_launches(critical, background, api);
  adaptive_result out;
  out.cfg = cfg;
  detail::name_workloads(out, critical, background);
  out.device_sms = dev.sms().sm_count();
  validate_adaptive(cfg, out.device_sms);
  const std::string c = std::to_string(cfg.critical_sms);
  std::vector<std::string> names{c + ",rest"};
  for (unsigned n : cfg.shrink_to)
    names.push_back(c + "," + std::to_string(n) + ",rest");
  say("making a pool of " + std::to_string(names.size()) + " layouts");
  pool_options po;
  po.streams_per_partition = 1;
  pool p = pool::create(dev, names, po);
  const auto layouts = p.layouts();
  const pool_layout &wide = layouts[0];
  out.critical_sms_obtained = wide.parts[0].sm_count;
  out.wide_sms_obtained = wide.parts[1].sm_count;
  out.critical_shared = true;
  for (std::size_t i = 1; i < layouts.size(); ++i) {
    out.narrow_sms_obtained.push_back(layouts[i].parts[1].sm_count);
    if (layouts[i].parts[0].slot != wide.parts[0].slot)
      out.critical_shared = false;
  }
  out.critical_sharing =
      out.critical_shared
          ? "one green context (pool slot " + std::to_string(wide.parts[0].slot) + ", " +
                std::to_string(out.critical_sms_obtained) +
                " SMs) in every layout: the pool found equal descriptor content ids"
          : "NOT shared: the layouts' critical pieces differ (different green contexts, "
            "possibly on different SMs); each adaptive sample launches on its narrow layout's "
            "critical stream";
  say(out.critical_sharing);
  const stream_ref crit_wide = wide.parts[0].streams[0], bg_wide = wide.parts[1].streams[0];

  // Warm-up of every stream: module loading and clock ramp-up are not measured.
  say("warming up");
  for (const auto &l : layouts) {
    critical.launch(l.parts[0].streams[0]);
    for (int i = 0; i < 3; ++i)
      detail::launch_unit(background, l.parts[1].streams[0], api);
  }
  for (std::size_t i = 0; i < layouts.size(); ++i)
    p.synchronize(i);

  // The background alone on each partition it may use.
  for (const auto &l : layouts) {
    const unsigned sms = l.parts[1].sm_count;
    say("background alone on " + std::to_string(sms) + " SMs");
    chunk_feeder f(dev, background, cfg.queue_depth);
    const auto until = clock::now() + cfg.rate_window;
    while (clock::now() < until)
      f.top_up(l.parts[1].streams[0]);
    out.alone.push_back({sms, f.finish()});
  }

  const std::vector<plan> plans = configurations(cfg, out);
  const event before(dev.primary_context()), after(dev.primary_context());
  std::mt19937 rng(12345);
  std::uniform_real_distribution<double> jitter(0.5, 1.5);
  const detail::rounds_plan rounds(cfg.samples, cfg.warmup, cfg.rounds);
  for (unsigned round = 0; round < rounds.rounds; ++round) {
    say("round " + std::to_string(round + 1) + "/" + std::to_string(rounds.rounds) + ": " +
        std::to_string(plans.size()) + " configurations");
    const unsigned count = rounds.count(round), warmup = rounds.warmup_of(round);
    for (const plan &pl : plans) {
      chunk_feeder f(dev, background, cfg.queue_depth);
      const std::size_t narrow = pl.adapt ? pl.narrow : 0;
      // narrow holds its layout; the other policies switch to it and back around each arrival.
      const bool holds = pl.adapt && pl.pol == adaptive_policy::narrow;
      const bool switches = pl.adapt && !holds;
      const stream_ref crit = pl.adapt ? layouts[narrow].parts[0].streams[0] : crit_wide;
      // Keeps the background fed for `d` on the layout in use, as a program would: it reads
      // the pool's current layout before each launch (nothing without a background).
      const auto feed_for = [&](micros d) {
        const auto until = clock::now() + std::chrono::duration_cast<clock::duration>(d);
        do {
          if (pl.background)
            f.top_up(p.current().parts[1].streams[0]);
        } while (clock::now() < until);
      };
      p.use(holds ? narrow : std::size_t{0});
      if (pl.background)
        feed_for(std::chrono::milliseconds(2)); // let the background fill its SMs first
      for (unsigned s = 0; s < warmup + count; ++s) {
        const micros gap(cfg.gap.count() * jitter(rng));
        const adaptive_step st =
            pl.adapt ? adaptive_schedule(pl.pol, gap, cfg.lead) : adaptive_step{gap, micros(0)};
        feed_for(st.wide);
        if (switches)
          p.use(narrow);
        if (st.narrow.count() > 0) // reactive: the critical work arrives as the layout switches
          feed_for(st.narrow);
        const auto arrival = clock::now();
        double waited = 0;
        if (pl.adapt && waits(pl.pol)) {
          f.wait_for(bg_wide);
          waited = us_between(arrival, clock::now());
        }
        before.record(crit);
        critical.launch(crit);
        after.record(crit);
        // The host does not feed the background while it waits (a launch of its own would delay
        // noticing the completion, in every configuration with a background but not alone): the
        // queue filled up to the arrival (queue depth x chunk) covers the critical work.
        while (!after.ready()) {
        }
        const auto done = clock::now();
        if (switches)
          p.use(std::size_t{0});
        const auto exec = critical.execution_us ? critical.execution_us(crit) : std::nullopt;
        if (s < warmup)
          continue;
        critical_stats &st_out = pl.out->critical;
        const double gpu = 1000.0 * elapsed_ms(before, after);
        st_out.host_us.push_back(us_between(arrival, done));
        st_out.gpu_us.push_back(gpu);
        if (exec)
          st_out.start_delay_us.push_back(std::max(0.0, gpu - *exec));
        if (pl.adapt && waits(pl.pol))
          pl.out->wait_us.push_back(waited);
      }
      if (pl.background) {
        const background_rate seg = f.finish();
        pl.out->background->work += seg.work;
        pl.out->background->seconds += seg.seconds;
      }
    }
  }
  p.use(std::size_t{0});
  for (auto &cf : out.configurations)
    detail::summarize_all(cf.critical);
  return out;
}

} // namespace greenctx::measure
