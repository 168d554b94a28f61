// SPDX-License-Identifier: Apache-2.0
#include "commands/scale/runner.hpp"

#include "common/cli_common.hpp"
#include "common/process.hpp"
#include "common/run_child.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <set>

namespace greenctx::cli::scale {
namespace {

// Why a run makes the whole measurement meaningless, or "" when it does not.
std::string run_failure(const point &p, const child_result &c, const run_record &rec, int device) {
  if (c.signal != 0 || c.exit_code != 0)
    return "ended with " + process::describe({c.exit_code, c.signal});
  if (p.baseline)
    return rec.no_figure;
  if (!c.report.cuda_used)
    return "the program never used CUDA (the preload library saw no CUDA call), so its times "
           "cannot depend on the SMs it is given and mean nothing here";
  const auto &confined = c.report.confined_devices;
  if (std::find(confined.begin(), confined.end(), device) == confined.end())
    return fmt::format("the program used CUDA but GPU {} never got a confined context, so nothing "
                       "ran on the {} SMs (does it use another GPU? check --device and "
                       "CUDA_VISIBLE_DEVICES)",
                       device, p.sms);
  return rec.no_figure;
}

// The run's figure under `m`, or why it has none.
extracted figure_of(const metric &m, const child_result &c) {
  switch (m.kind) {
  case metric_kind::wall:
    return {c.wall_s, {}};
  case metric_kind::gpu_time:
    return gpu_phase_figure(c.report.processes, c.report.first_work_ns, c.report.last_sync_ns);
  case metric_kind::regex:
  case metric_kind::json:
    break;
  }
  return figure_from_stdout(m, c.out);
}

run_record record_of(const child_result &c, unsigned repeat, const metric &m) {
  run_record r;
  r.repeat = repeat;
  r.wall_s = c.wall_s;
  r.exit_code = c.exit_code;
  r.signal = c.signal;
  r.cuda_used = c.report.cuda_used;
  r.confined_devices = c.report.confined_devices;
  r.green_contexts = c.report.green_contexts;
  r.problems = c.report.problems;
  if (r.ok()) { // a run that failed has no figure worth keeping, nor a reason to give for it
    extracted f = figure_of(m, c);
    r.figure = f.value;
    r.no_figure = std::move(f.why_not);
  }
  return r;
}

// "12.345 s", or with another figure "12.345 s wall; GPU phase: 1.5 s".
std::string progress_text(const metric &m, const run_record &rec) {
  if (m.kind == metric_kind::wall || !rec.figure)
    return fmt::format("{:.3f} s", rec.wall_s);
  return fmt::format("{:.3f} s wall; {}: {:g} {}", rec.wall_s, m.short_name(), *rec.figure, m.unit);
}

} // namespace

bool run_points(results &r, bool quiet) {
  const std::size_t total = r.warmup + std::size_t{r.repeat} * r.points.size();
  std::size_t done = 0;
  std::set<std::string> reported; // problems of the preload library already printed
  // Runs `p` once; false (with r.failure set) when the measurement has to stop.
  const auto run_once = [&](const point &p, unsigned repeat, bool warmup,
                            std::vector<run_record> &into) {
    ++done;
    const std::string what =
        warmup ? fmt::format("warm-up {} of {}, {}", repeat + 1, r.warmup, p.label())
               : fmt::format("{}, repeat {} of {}", p.label(), repeat + 1, r.repeat);
    if (!quiet)
      std::fprintf(stderr, "greenctx scale: run %zu of %zu (%s)\n", done, total, what.c_str());
    std::fflush(stdout);
    confinement c{p.baseline ? 0u : p.sms, r.device, r.ignore_coscheduling};
    c.measure = r.measure.reads_report(); // the baseline too: then the library confines nothing
    c.real_sm_count = r.real_sm_count;
    const child_result result = run_child(
        r.program, c, r.measure.reads_stdout() ? child_output::tee : child_output::inherit);
    into.push_back(record_of(result, repeat, r.measure));
    for (const auto &problem :
         result.report.problems) // each once: the same one comes back every run
      if (reported.insert(problem).second)
        print_error(fmt::format("run {} ({}): not confined: {}", done, what, problem));
    if (const std::string why = run_failure(p, result, into.back(), r.device); !why.empty()) {
      r.failure = fmt::format("run {} of {} ({}): {}", done, total, what, why);
      return false;
    }
    if (!quiet)
      std::fprintf(stderr, "greenctx scale: run %zu of %zu: %s\n", done, total,
                   progress_text(r.measure, into.back()).c_str());
    return true;
  };

  bool ok = true;
  const point warm{r.warmup_sms, false, {}};
  for (unsigned w = 0; ok && w < r.warmup; ++w)
    ok = run_once(warm, w, true, r.warmups);
  // Rounds over all counts, so that drifts of the machine fall on every count alike.
  for (unsigned k = 0; ok && k < r.repeat; ++k)
    for (auto &p : r.points)
      if (ok)
        ok = run_once(p, k, false, p.runs);

  return ok;
}

} // namespace greenctx::cli::scale
