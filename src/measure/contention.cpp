// SPDX-License-Identifier: Apache-2.0
#include "greenctx/measure/contention.hpp"

#include "greenctx/core/event.hpp"
#include "greenctx/core/stream_flags.hpp"
#include "greenctx/plan/error.hpp"
#include "measure/sampling.hpp"

#include <algorithm>
#include <atomic>
#include <deque>
#include <exception>
#include <iterator>
#include <optional>
#include <random>
#include <string_view>
#include <thread>

namespace greenctx::measure {
namespace {

using detail::busy_wait;
using detail::clock;
constexpr const char *api = "greenctx::measure::measure_contention";

// Keeps a stream fed with background units (`depth` queued at all times) and accounts for the
// work finished between the first unit's start and the last finished unit's end.
class feeder {
public:
  feeder(const device &dev, stream_ref s, const background_workload &work, unsigned depth)
      : dev_(dev), s_(s), work_(work), depth_(depth), first_(dev.primary_context()) {
    first_.record(s_);
    top_up();
  }
  void top_up() {
    while (!queued_.empty() && queued_.front().first.ready())
      retire();
    while (queued_.size() < depth_) {
      const double w = detail::launch_unit(work_, s_, api);
      event e(dev_.primary_context());
      e.record(s_);
      queued_.emplace_back(std::move(e), w);
    }
  }
  background_rate finish() {
    s_.synchronize();
    while (!queued_.empty())
      retire();
    return {done_, elapsed_ms(first_, last_) / 1000.0};
  }

private:
  void retire() {
    done_ += queued_.front().second;
    last_ = std::move(queued_.front().first);
    queued_.pop_front();
  }

  const device &dev_;
  stream_ref s_;
  const background_workload &work_;
  unsigned depth_;
  event first_, last_;
  std::deque<std::pair<event, double>> queued_;
  double done_ = 0;
};

// Tops a feeder up from a thread of its own until stopped; an error there ends the thread and is
// thrown again by check() or stop() on the calling thread.
class feeder_thread {
public:
  explicit feeder_thread(feeder &f)
      : thread_([this, &f] {
          try {
            while (!stop_.load(std::memory_order_relaxed)) {
              f.top_up();
              busy_wait(std::chrono::microseconds(200));
            }
          } catch (...) {
            error_ = std::current_exception();
            failed_.store(true, std::memory_order_release);
          }
        }) {}
  feeder_thread(const feeder_thread &) = delete;
  feeder_thread &operator=(const feeder_thread &) = delete;
  ~feeder_thread() { join(); }
  void check() {
    if (failed_.load(std::memory_order_acquire))
      stop();
  }
  void stop() {
    join();
    if (error_)
      std::rethrow_exception(error_);
  }

private:
  void join() {
    stop_.store(true, std::memory_order_relaxed);
    if (thread_.joinable())
      thread_.join();
  }

  std::atomic<bool> stop_{false}, failed_{false};
  std::exception_ptr error_;
  std::thread thread_; // last: started once the flags above exist
};

background_rate background_alone(const device &dev, stream_ref s, const background_workload &work,
                                 unsigned depth, std::chrono::milliseconds window) {
  feeder f(dev, s, work, depth);
  const auto until = clock::now() + window;
  while (clock::now() < until) {
    f.top_up();
    busy_wait(std::chrono::microseconds(200));
  }
  return f.finish();
}

void check(const partition_set &set, const critical_workload &critical,
           const background_workload &background, const contention_config &cfg) {
  if (set.parts().size() != 2)
    throw request_error(CUDA_ERROR_INVALID_VALUE, api,
                        "the contention measurement needs a set of two partitions (the critical "
                        "work's, then the background's), not " +
                            std::to_string(set.parts().size()));
  detail::require_launches(critical, background, api);
  if (cfg.samples == 0)
    throw request_error(CUDA_ERROR_INVALID_VALUE, api, "samples must be at least 1");
  if (cfg.background_depth == 0 || cfg.background_depth > 64)
    throw request_error(CUDA_ERROR_INVALID_VALUE, api,
                        "the background's queue depth is 1 to 64 units, not " +
                            std::to_string(cfg.background_depth));
  for (auto it = cfg.placements.begin(); it != cfg.placements.end(); ++it)
    if (std::find(std::next(it), cfg.placements.end(), *it) != cfg.placements.end())
      throw request_error(CUDA_ERROR_INVALID_VALUE, api,
                          "the placement '" + *it + "' is named twice: name each once");
  for (const auto &name : cfg.placements)
    if (std::find_if(std::begin(placement_names), std::end(placement_names),
                     [&](const char *p) { return name == p; }) == std::end(placement_names)) {
      std::string known;
      for (const char *p : placement_names)
        known += (known.empty() ? "" : ", ") + std::string(p);
      throw request_error(CUDA_ERROR_INVALID_VALUE, api,
                          "no placement is named '" + name + "'; the placements are " + known);
    }
}

} // namespace

contention_result measure_contention(const device &dev, const partition_set &set,
                                     const critical_workload &critical,
                                     const background_workload &background,
                                     const contention_config &cfg, const progress_fn &progress) {
  check(set, critical, background, cfg);
  const auto say = [&](const std::string &line) {
    if (progress)
      progress(line);
  };
  contention_result out;
  out.cfg = cfg;
  detail::name_workloads(out, critical, background);
  out.device_sms = dev.sms().sm_count();
  const execution_context_ref crit_ctx = set.parts()[0].context, bg_ctx = set.parts()[1].context;
  out.critical_sms = set.parts()[0].obtained();
  out.background_sms = set.parts()[1].obtained();
  if (background.shape_note)
    out.background_shape = background.shape_note(out.background_sms);

  const auto [least, greatest] = dev.stream_priority_range();
  const execution_context_ref primary = dev.primary_context();
  const stream bg_primary = primary.create_stream(stream_flags::non_blocking, least);
  const stream crit_primary = primary.create_stream(stream_flags::non_blocking, least);
  const stream crit_primary_high = primary.create_stream(stream_flags::non_blocking, greatest);
  const stream crit_green = crit_ctx.create_stream(stream_flags::none, least);
  const stream crit_green_high = crit_ctx.create_stream(stream_flags::none, greatest);
  const stream bg_green = bg_ctx.create_stream(stream_flags::none, least);

  struct plan {
    const char *name;
    std::string description;
    stream_ref critical;
    const stream *background;
  };
  const std::string c = std::to_string(out.critical_sms), b = std::to_string(out.background_sms);
  std::vector<plan> plans = {
      {"alone", "critical alone, whole GPU", crit_primary, nullptr},
      {"alone_green", "critical alone in its " + c + "-SM green context", crit_green, nullptr},
      {"shared", "shared GPU, equal priority", crit_primary, &bg_primary},
      {"priority", "shared GPU, critical stream at highest priority", crit_primary_high,
       &bg_primary},
      {"green", "green contexts: critical " + c + " SMs, background " + b + " SMs", crit_green,
       &bg_green},
      {"green_priority", "green contexts, critical stream at highest priority", crit_green_high,
       &bg_green},
      {"trap", "TRAP: background left in the primary context, critical green", crit_green,
       &bg_primary},
  };
  const auto unwanted = [&](const plan &p) {
    return !cfg.placements.empty() &&
           std::find(cfg.placements.begin(), cfg.placements.end(), p.name) == cfg.placements.end();
  };
  plans.erase(std::remove_if(plans.begin(), plans.end(), unwanted), plans.end());
  // Warm-up: the first units pay for module loading, cuBLAS's first-call setup and clock ramp-up
  // (measured: a GEMM baseline taken cold read 20% low), so run a few on each stream the
  // measurement uses first (only those: with long background units each costs milliseconds).
  const bool alone_rates = cfg.rate_window.count() > 0;
  const auto used = [&](const stream &s) {
    return alone_rates || std::any_of(plans.begin(), plans.end(),
                                      [&](const plan &p) { return p.background == &s; });
  };
  say("warming up the background workload");
  for (const stream *s : {&bg_primary, &bg_green}) {
    if (!used(*s))
      continue;
    for (int i = 0; i < 3; ++i)
      out.background_launch_work = detail::launch_unit(background, *s, api);
    s->synchronize();
  }
  if (alone_rates) {
    say("background alone on all SMs");
    out.background_full =
        background_alone(dev, bg_primary, background, cfg.background_depth, cfg.rate_window);
    say("background alone on its " + std::to_string(out.background_sms) + " SMs");
    out.background_share =
        background_alone(dev, bg_green, background, cfg.background_depth, cfg.rate_window);
  }
  // Rounds: every placement takes its share of the samples in each round (detail::rounds_plan).
  for (const plan &p : plans)
    out.placements.push_back({p.name, p.description, std::string_view(p.name) == "trap",
                              critical_stats{}, std::nullopt});
  std::mt19937 rng(12345);
  const detail::rounds_plan rounds(cfg.samples, cfg.warmup, cfg.rounds);
  const detail::sampling how{cfg.gap, cfg.hold_launch, api, "critical workload"};
  for (unsigned round = 0; round < rounds.rounds; ++round) {
    say("round " + std::to_string(round + 1) + "/" + std::to_string(rounds.rounds) + ": " +
        std::to_string(plans.size()) + " placements");
    const unsigned count = rounds.count(round), warmup = rounds.warmup_of(round);
    for (std::size_t i = 0; i < plans.size(); ++i) {
      const plan &p = plans[i];
      placement_result &r = out.placements[i];
      if (p.background) {
        feeder f(dev, *p.background, background, cfg.background_depth);
        std::optional<feeder_thread> fed;
        if (cfg.background_thread)
          fed.emplace(f);
        busy_wait(std::chrono::milliseconds(2)); // let the background fill the GPU first
        detail::sample(dev, critical, p.critical, how, warmup, count, rng, *r.critical, [&] {
          if (fed)
            fed->check();
          else
            f.top_up();
        });
        if (fed)
          fed->stop();
        const background_rate segment = f.finish();
        if (!r.background)
          r.background = background_rate{};
        r.background->work += segment.work;
        r.background->seconds += segment.seconds;
      } else {
        detail::sample(dev, critical, p.critical, how, warmup, count, rng, *r.critical);
      }
    }
  }
  for (auto &r : out.placements)
    detail::summarize_all(*r.critical);
  return out;
}

} // namespace greenctx::measure
