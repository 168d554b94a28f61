// SPDX-License-Identifier: Apache-2.0
#include "greenctx/measure/scaling.hpp"

#include "greenctx/core/partition.hpp"
#include "greenctx/core/stream_flags.hpp"
#include "greenctx/plan/error.hpp"
#include "greenctx/plan/partition_plan.hpp"
#include "measure/sampling.hpp"

#include <algorithm>
#include <random>

namespace greenctx::measure {
namespace {

constexpr const char *api = "greenctx::measure::scaling";

[[noreturn]] void refuse(const std::string &why) {
  throw request_error(CUDA_ERROR_INVALID_VALUE, api, why);
}

// "8 or 16", "8", "16": the valid sizes next to a count that is not one.
std::string next_to(const neighbours &n) {
  if (n.below && n.above)
    return std::to_string(*n.below) + " or " + std::to_string(*n.above);
  return std::to_string(n.below ? *n.below : *n.above);
}

} // namespace

std::vector<scaling_count> plan_scaling(const std::vector<unsigned> &requested, unsigned device_sms,
                                        granularity grain, bool round_counts) {
  const std::vector<unsigned> valid = valid_counts(device_sms, grain);
  if (valid.empty())
    refuse("a GPU of " + std::to_string(device_sms) + " SMs makes no green context: the " +
           "minimum partition is " + std::to_string(grain.min_partition) + " SMs");
  std::vector<scaling_count> out;
  if (requested.empty()) {
    for (unsigned n : valid)
      out.push_back({n, n, {}});
    return out;
  }
  for (std::size_t i = 0; i < requested.size(); ++i) {
    const unsigned n = requested[i];
    if (n == 0)
      refuse("count " + std::to_string(i + 1) + " is 0 SMs: a green context holds at least the " +
             "minimum partition of " + std::to_string(grain.min_partition));
    for (std::size_t j = 0; j < i; ++j)
      if (requested[j] == n)
        refuse(std::to_string(n) + " SMs is named twice (counts " + std::to_string(j + 1) +
               " and " + std::to_string(i + 1) + "): name each count once");
    // One partition of n SMs, the rest unused: the planner's rounding and refusals as they are.
    const partition_plan plan = plan_partitions(partition_request{{n}, false}, device_sms, grain);
    const auto &part = plan.parts.at(0);
    if (part.planned != n && !round_counts)
      refuse(part.rounding + "; no green context of this GPU has exactly " + std::to_string(n) +
             " SMs: give " + next_to(nearest_valid(n, valid)) + ", or set round_counts to " +
             "measure it on " + std::to_string(part.planned));
    for (const auto &earlier : out)
      if (earlier.sms == part.planned)
        refuse(std::to_string(earlier.requested) + " and " + std::to_string(n) +
               " SMs both make green contexts of " + std::to_string(part.planned) +
               " SMs: give one of them");
    out.push_back({n, part.planned, part.rounding});
  }
  std::sort(out.begin(), out.end(),
            [](const scaling_count &a, const scaling_count &b) { return a.sms < b.sms; });
  return out;
}

unsigned scaling_speedups(std::vector<scaling_point> &points) {
  if (points.empty())
    return 0;
  const scaling_point &top = points.back();
  for (auto &p : points) {
    p.ideal = top.sms ? static_cast<double>(p.sms) / top.sms : 0;
    const bool timed = p.time.gpu.count > 0 && top.time.gpu.count > 0 && p.time.gpu.p50 > 0;
    p.speedup = timed ? top.time.gpu.p50 / p.time.gpu.p50 : 0;
    p.efficiency = timed && p.ideal > 0 ? p.speedup / p.ideal : 0;
  }
  return top.sms;
}

scaling_result scaling(const device &dev, const critical_workload &workload,
                       const std::vector<unsigned> &sm_counts, const scaling_config &cfg,
                       const progress_fn &progress) {
  if (!workload.launch)
    refuse("the workload '" + workload.name + "' has no launch function");
  if (cfg.samples == 0)
    refuse("samples must be at least 1");
  const auto say = [&](const std::string &line) {
    if (progress)
      progress(line);
  };
  scaling_result out;
  out.cfg = cfg;
  out.workload_name = workload.name;
  out.device_sms = dev.sms().sm_count();
  const std::vector<scaling_count> counts =
      plan_scaling(sm_counts, out.device_sms, dev.sms().grain(), cfg.round_counts);

  // Every green context first (each costs about 1.5 ms and leaks device memory when destroyed on
  // driver 580), then the samples.
  say("making " + std::to_string(counts.size()) + " green contexts");
  std::vector<partition_set> sets;
  std::vector<stream> streams;
  for (const auto &c : counts) {
    sets.push_back(partition_set::create(dev, partition_request{{c.requested}, false}));
    const partition &part = sets.back().parts().at(0);
    streams.push_back(part.context.create_stream(stream_flags::non_blocking));
    scaling_point p;
    p.requested = c.requested;
    p.sms = part.obtained();
    p.rounding = !part.rounding.empty() ? part.rounding : c.rounding;
    if (p.sms != c.sms && p.rounding.empty())
      p.rounding =
          "planned " + std::to_string(c.sms) + " SMs, the driver gave " + std::to_string(p.sms);
    if (!p.rounding.empty())
      say(std::to_string(c.requested) + " SMs: " + p.rounding);
    out.points.push_back(std::move(p));
  }

  std::mt19937 rng(12345);
  const detail::rounds_plan rounds(cfg.samples, cfg.warmup, cfg.rounds);
  const detail::sampling how{cfg.gap, cfg.hold_launch, api, "workload"};
  for (unsigned round = 0; round < rounds.rounds; ++round) {
    say("round " + std::to_string(round + 1) + "/" + std::to_string(rounds.rounds) + ": " +
        std::to_string(out.points.size()) + " SM counts");
    for (std::size_t i = 0; i < out.points.size(); ++i)
      detail::sample(dev, workload, streams[i], how, rounds.warmup_of(round), rounds.count(round),
                     rng, out.points[i].time);
  }
  for (auto &p : out.points)
    detail::summarize_all(p.time);
  out.reference_sms = scaling_speedups(out.points);
  return out;
}

} // namespace greenctx::measure
