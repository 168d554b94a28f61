// SPDX-License-Identifier: Apache-2.0
#include "commands/tune/comm_tune.hpp"

#include "common/cli_common.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

namespace greenctx::cli::bench::comm {
namespace {

const point *find_point(const results &r, const mode &m) {
  const auto it = std::find_if(r.points.begin(), r.points.end(),
                               [&](const point &p) { return p.m == m && p.failure.empty(); });
  return it == r.points.end() ? nullptr : &*it;
}

// Why a partitioned point cannot stand for its split, or "" when it can.
std::string unusable(const group_outcome &g, const point *p, unsigned k) {
  if (!g.failure.empty())
    return g.failure;
  if (!p || p->allreduce_us.empty())
    return "no all-reduce was timed";
  if (p->confined == false)
    return fmt::format("the all-reduce ran outside its {} SMs ({})", k, p->confinement);
  for (unsigned got : p->comm_sms)
    if (got != k)
      return fmt::format("a GPU's partition obtained {} SMs, not {}", got, k);
  return {};
}

} // namespace

int tune(const tune_plan &p, measure::tune_result &out, tune_extras &extras,
         const std::function<void(const std::string &)> &log) {
  measure::check_tune_config(p.tune);
  const std::size_t bytes = p.run.measure.sizes.at(0);
  results all;
  start_results(p.run, all);

  plan first = p.run;
  first.measure.iterations = p.tune.confirm_samples;
  log("the all-reduce alone on all SMs of every GPU, and the GEMM loop alone");
  const mode alone_mode{mode_kind::alone, 0};
  const group_outcome g = run_group(first, {alone_mode}, std::nullopt, true, all, extras.env, log);
  const point *alone = find_point(all, alone_mode);
  if (!g.failure.empty() || !alone || alone->allreduce_us.empty()) {
    print_error(g.failure.empty() ? std::string("the all-reduce alone was not timed") : g.failure);
    return g.failure.empty() ? exit_cuda_error : g.exit;
  }
  extras.gemm_alone_tflops = all.gemm_alone_tflops;

  out.cfg = p.tune;
  out.critical_name = fmt::format("NCCL all-reduce of {} over {} GPU{}", format_bytes(bytes),
                                  all.gpus, all.gpus == 1 ? "" : "s");
  out.background_name = fmt::format("cuBLAS GEMM loop (n={}) on every GPU", p.run.measure.gemm_n);
  out.background_unit = "TFLOP/s";
  out.background_unit_scale = 1e12;
  out.device_sms = extras.env.at("sm_count").get<unsigned>();
  out.candidates =
      measure::tune_sizes(p.tune, extras.env.at("split_sizes").get<std::vector<unsigned>>());
  out.alone = measure::summarize(alone->allreduce_us);

  measure::run_tune(
      out,
      [&](unsigned k, unsigned samples) {
        plan one = p.run;
        one.measure.iterations = samples;
        results r;
        start_results(one, r);
        nlohmann::json unused;
        const mode m{mode_kind::partitioned, k};
        const group_outcome done = run_group(one, {m}, std::nullopt, false, r, unused, log);
        const point *pt = find_point(r, m);
        measure::tune_point t;
        t.critical_sms = k;
        t.background_sms = out.device_sms - k;
        if (const std::string why = unusable(done, pt, k); !why.empty()) {
          extras.failures.push_back(fmt::format("{},rest: {}", k, why));
          log("failed: " + extras.failures.back());
          t.critical.p50 = t.critical.p99 = std::numeric_limits<double>::infinity();
          return t;
        }
        t.critical = measure::summarize(pt->allreduce_us);
        t.p99_interval = measure::quantile_interval_of(pt->allreduce_us, 0.99);
        t.background_rate = pt->gemm_tflops * 1e12;
        return t;
      },
      log);
  return exit_ok;
}

} // namespace greenctx::cli::bench::comm
