// SPDX-License-Identifier: Apache-2.0
#include "greenctx/measure/tune.hpp"

#include "greenctx/core/partition.hpp"
#include "greenctx/plan/error.hpp"
#include "greenctx/plan/partition_plan.hpp"
#include "measure/sampling.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>

namespace greenctx::measure {
namespace {

using clock = std::chrono::steady_clock;
constexpr const char *api = "greenctx::measure::tune";

double seconds_since(clock::time_point t0) {
  return std::chrono::duration<double>(clock::now() - t0).count();
}

std::string us(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f us", v);
  return text;
}

std::string number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

// The state of one search: every measurement, and per size the best-sampled one.
class search_state {
public:
  search_state(const std::vector<unsigned> &sizes, const tune_config &cfg, double alone_p99,
               const tune_measure_fn &measure)
      : sizes_(sizes), cfg_(cfg), alone_p99_(alone_p99), measure_(measure) {}

  const tune_point &take(std::size_t i, unsigned samples) {
    tune_point p = measure_(sizes_[i], samples);
    p.critical_sms = sizes_[i];
    answer_.measured.push_back(p);
    tune_point &best = best_[sizes_[i]];
    if (best.critical.count <= p.critical.count)
      best = p;
    return best;
  }
  // The size's measurement with the confirming sample count, measured now if there is none.
  const tune_point &confirmed(std::size_t i) {
    const auto it = best_.find(sizes_[i]);
    if (it != best_.end() && it->second.critical.count >= cfg_.confirm_samples)
      return it->second;
    return take(i, cfg_.confirm_samples);
  }
  // Measured during the search with the search's sample count, unless better known already.
  const tune_point &searched(std::size_t i) {
    const auto it = best_.find(sizes_[i]);
    return it != best_.end() ? it->second : take(i, cfg_.samples);
  }

  // The p99 bound of the objective; for smallest_within_best, from the confirmed points so far.
  double limit() const {
    switch (cfg_.objective.goal) {
    case tune_goal::p99_at_most_us:
      return cfg_.objective.value;
    case tune_goal::p99_at_most_times_alone:
      return cfg_.objective.value * alone_p99_;
    case tune_goal::smallest_within_best:
      break;
    }
    double best = INFINITY;
    for (const auto &[sms, p] : best_)
      if (is_confirmed(p))
        best = std::min(best, p.critical.p99);
    return (1 + cfg_.objective.value) * best;
  }
  bool meets(const tune_point &p) const { return p.critical.p99 <= limit(); }
  bool is_confirmed(const tune_point &p) const { return p.critical.count >= cfg_.confirm_samples; }

  // The choice among the confirmed points, and why.
  tune_answer finish(clock::time_point t0) {
    answer_.limit_us = limit();
    const tune_point *chosen = nullptr, *closest = nullptr;
    unsigned confirmed_count = 0;
    for (const auto &[sms, p] : best_) {
      if (!is_confirmed(p))
        continue;
      ++confirmed_count;
      if (!closest || p.critical.p99 < closest->critical.p99)
        closest = &p;
      if (!meets(p))
        continue;
      // smallest_within_best wants the smallest (best_ is by size); the others the most
      // background work (the smaller split on a tie).
      const bool better = !chosen || (cfg_.objective.goal != tune_goal::smallest_within_best &&
                                      p.background_rate > chosen->background_rate);
      if (better)
        chosen = &p;
    }
    const std::string of = std::to_string(confirmed_count) + " split(s) measured with " +
                           std::to_string(cfg_.confirm_samples) + " samples";
    if (chosen) {
      answer_.chosen = chosen->critical_sms;
      answer_.reason = std::to_string(chosen->critical_sms) + " SMs: critical p99 " +
                       us(chosen->critical.p99) + " <= " + us(answer_.limit_us) + " (" +
                       cfg_.objective.describe() + "), " +
                       (cfg_.objective.goal == tune_goal::smallest_within_best
                            ? "the smallest partition that does, of "
                            : "with the most background throughput of those that do, of ") +
                       of;
    } else if (closest) {
      answer_.closest = closest->critical_sms;
      answer_.reason = "no split meets " + cfg_.objective.describe() +
                       " (p99 <= " + us(answer_.limit_us) + "); the closest is " +
                       std::to_string(closest->critical_sms) + " SMs with p99 " +
                       us(closest->critical.p99) + ", of " + of;
    }
    answer_.seconds = seconds_since(t0);
    return std::move(answer_);
  }

private:
  const std::vector<unsigned> &sizes_;
  const tune_config &cfg_;
  double alone_p99_;
  const tune_measure_fn &measure_;
  std::map<unsigned, tune_point> best_;
  tune_answer answer_;
};

void check_config(const tune_config &cfg) {
  const double v = cfg.objective.value;
  const auto refuse = [](const std::string &why) {
    throw request_error(CUDA_ERROR_INVALID_VALUE, api, why);
  };
  switch (cfg.objective.goal) {
  case tune_goal::p99_at_most_us:
    if (!(v > 0) || !std::isfinite(v))
      refuse("the p99 bound is a positive number of microseconds, not " + number(v));
    break;
  case tune_goal::p99_at_most_times_alone:
    if (!(v >= 1) || !std::isfinite(v))
      refuse("the factor over the p99 alone is at least 1 (1.5: 50% slower than alone), not " +
             number(v));
    break;
  case tune_goal::smallest_within_best:
    if (!(v >= 0) || !std::isfinite(v))
      refuse("the margin over the best p99 is a fraction, at least 0 (0.1: within 10%), not " +
             number(v));
    break;
  }
  if (cfg.samples == 0 || cfg.confirm_samples == 0)
    refuse("samples and confirm_samples must be at least 1");
}

} // namespace

void check_tune_config(const tune_config &cfg) {
  check_config(cfg);
}

std::string tune_objective::describe() const {
  switch (goal) {
  case tune_goal::p99_at_most_us:
    return "critical p99 <= " + number(value) + " us";
  case tune_goal::p99_at_most_times_alone:
    return "critical p99 <= " + number(value) + " x its p99 alone on the whole GPU";
  case tune_goal::smallest_within_best:
    return "the smallest critical partition with p99 within " + number(value * 100) +
           "% of the best split's";
  }
  return {};
}

std::string tune_result::split() const {
  const auto &a = answer();
  return a.chosen ? std::to_string(*a.chosen) + ",rest" : std::string();
}

std::vector<unsigned> tune_candidates(const sm_resource &sms) {
  std::vector<unsigned> out;
  const unsigned step = std::max(1u, sms.coscheduled_alignment());
  for (unsigned n = std::max(step, sms.min_partition_size()); n < sms.sm_count(); n += step) {
    try {
      const partition_plan plan =
          plan_partitions(partition_request{{n}, true}, sms.sm_count(), sms.grain());
      if (plan.parts[0].planned == n)
        out.push_back(n);
    } catch (const request_error &) {
      // not a size this GPU makes as N,rest
    }
  }
  return out;
}

tune_answer search_split(const std::vector<unsigned> &sizes, const tune_config &cfg,
                         double alone_p99, bool exhaustive, const tune_measure_fn &measure) {
  const auto t0 = clock::now();
  search_state s(sizes, cfg, alone_p99, measure);
  if (sizes.empty())
    return s.finish(t0);
  if (exhaustive) {
    for (std::size_t i = 0; i < sizes.size(); ++i)
      s.confirmed(i);
    return s.finish(t0);
  }
  // The critical p99 falls as its SMs grow. For "within X of the best" the largest split anchors
  // the bound, so it is confirmed first; a fixed bound needs it only if nothing smaller meets it
  // (the largest is also the costliest to measure: a background sized for the whole GPU runs many
  // times longer on the few SMs left to it, and a measurement ends with its launches).
  const std::size_t top = sizes.size() - 1;
  const bool anchored = cfg.objective.goal == tune_goal::smallest_within_best;
  if (anchored && !s.meets(s.confirmed(top)))
    return s.finish(t0); // none is expected to: said with the closest
  // Bisection for the smallest size that meets it, with the search's samples (the largest
  // assumed to meet it until measured).
  std::size_t lo = 0, hi = top;
  while (lo < hi) {
    const std::size_t mid = (lo + hi) / 2;
    if (s.meets(s.searched(mid)))
      hi = mid;
    else
      lo = mid + 1;
  }
  if (hi == top && !s.meets(s.confirmed(top)))
    return s.finish(t0);
  // Confirmed with more samples: up while the found size fails, down while the one below meets,
  // and the neighbour above measured too (its rate may be higher: whole waves).
  std::size_t i = hi;
  while (i < top && !s.meets(s.confirmed(i)))
    ++i;
  while (i > 0 && s.meets(s.confirmed(i - 1)))
    --i;
  if (i < top)
    s.confirmed(i + 1);
  return s.finish(t0);
}

std::vector<unsigned> pareto_front(const std::vector<tune_point> &curve) {
  std::vector<unsigned> out;
  for (const auto &p : curve) {
    const bool beaten = std::any_of(curve.begin(), curve.end(), [&](const tune_point &q) {
      return q.critical.p99 <= p.critical.p99 && q.background_rate >= p.background_rate &&
             (q.critical.p99 < p.critical.p99 || q.background_rate > p.background_rate);
    });
    if (!beaten)
      out.push_back(p.critical_sms);
  }
  return out;
}

std::vector<unsigned> tune_sizes(const tune_config &cfg, const std::vector<unsigned> &valid) {
  std::vector<unsigned> out = cfg.sizes.empty() ? valid : cfg.sizes;
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  for (unsigned n : out)
    if (std::find(valid.begin(), valid.end(), n) == valid.end()) {
      std::string list;
      for (unsigned v : valid)
        list += (list.empty() ? "" : ",") + std::to_string(v);
      throw request_error(CUDA_ERROR_INVALID_VALUE, api,
                          std::to_string(n) +
                              ",rest is not a split this GPU makes as asked; "
                              "the critical sizes it makes are " +
                              list);
    }
  if (out.empty())
    throw request_error(CUDA_ERROR_INVALID_VALUE, api,
                        "this GPU makes no N,rest split to choose from");
  return out;
}

void run_tune(tune_result &out, const tune_measure_fn &measure_one, const progress_fn &progress) {
  const tune_config &cfg = out.cfg;
  const auto t0 = clock::now();
  // About how many measurements the tune takes: the bisection's, three to confirm, the repeat;
  // every size for an exhaustive search.
  const auto bisection = static_cast<unsigned>(std::ceil(std::log2(out.candidates.size() + 1)));
  const unsigned expected =
      (cfg.search != tune_search::exhaustive ? bisection + 3 : 0) +
      (cfg.search != tune_search::guided ? static_cast<unsigned>(out.candidates.size()) : 0) +
      (cfg.repeat ? 1 : 0);
  unsigned count = 0;
  const tune_measure_fn measure = [&](unsigned sms, unsigned samples) {
    if (progress) {
      const double so_far = seconds_since(t0);
      std::string line = "measuring " + std::to_string(sms) + ",rest (" + std::to_string(samples) +
                         " samples): measurement " + std::to_string(count + 1) + " of about " +
                         std::to_string(std::max(expected, count + 1)) + ", " +
                         std::to_string(static_cast<int>(so_far)) + " s so far";
      if (count > 0 && expected > count)
        line += ", about " +
                std::to_string(static_cast<int>(std::ceil(so_far / count * (expected - count)))) +
                " s left";
      progress(line);
    }
    const auto m0 = clock::now();
    tune_point p = measure_one(sms, samples);
    ++count;
    p.seconds = seconds_since(m0);
    return p;
  };
  if (cfg.search != tune_search::exhaustive)
    out.guided = search_split(out.candidates, cfg, out.alone.p99, false, measure);
  if (cfg.search != tune_search::guided)
    out.exhaustive = search_split(out.candidates, cfg, out.alone.p99, true, measure);
  if (cfg.repeat && out.answer().chosen) {
    if (progress)
      progress("the chosen split once more");
    out.repeat = measure(*out.answer().chosen, cfg.confirm_samples);
    out.repeat_meets = out.repeat->critical.p99 <= out.answer().limit_us;
  }

  std::map<unsigned, tune_point> best;
  for (const auto *a : {&out.guided, &out.exhaustive})
    if (*a)
      for (const auto &p : (*a)->measured)
        if (best[p.critical_sms].critical.count <= p.critical.count)
          best[p.critical_sms] = p;
  for (const auto &[sms, p] : best)
    out.curve.push_back(p);
  out.pareto = pareto_front(out.curve);
}

tune_result tune(const device &dev, const critical_workload &critical,
                 const background_workload &background, const tune_config &cfg,
                 const progress_fn &progress) {
  check_tune_config(cfg);
  tune_result out;
  out.cfg = cfg;
  detail::name_workloads(out, critical, background);
  out.device_sms = dev.sms().sm_count();
  out.candidates = tune_sizes(cfg, tune_candidates(dev.sms()));

  // Green contexts are costly to make and leak device memory when destroyed (driver 580): each
  // split is made once and kept for the whole tune.
  std::map<unsigned, partition_set> sets;
  const auto set_of = [&](unsigned sms) -> const partition_set & {
    auto it = sets.find(sms);
    if (it == sets.end())
      it = sets.emplace(sms, partition_set::create(dev, partition_request{{sms}, true})).first;
    return it->second;
  };
  const auto one = [&](unsigned sms, unsigned samples, const char *placement) {
    contention_config how;
    how.samples = samples;
    how.warmup = 20;
    how.rounds = cfg.rounds;
    how.gap = cfg.gap;
    how.rate_window = std::chrono::milliseconds(0); // the background alone is not needed here
    how.placements = {placement};
    how.hold_launch = cfg.hold_launch;
    return measure_contention(dev, set_of(sms), critical, background, how);
  };
  if (progress)
    progress("the critical work alone on the whole GPU");
  out.alone =
      one(out.candidates.back(), cfg.confirm_samples, "alone").placements.at(0).critical->gpu;
  run_tune(
      out,
      [&](unsigned sms, unsigned samples) {
        const contention_result r = one(sms, samples, "green");
        tune_point p;
        p.critical_sms = sms;
        p.background_sms = r.background_sms;
        const critical_stats &c = *r.placements.at(0).critical;
        p.critical = c.gpu;
        p.p99_interval = quantile_interval_of(c.gpu_us, 0.99);
        p.background_rate = r.placements.at(0).background->rate();
        return p;
      },
      progress);
  return out;
}

} // namespace greenctx::measure
