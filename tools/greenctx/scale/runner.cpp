#include "scale/runner.hpp"

#include "cli_common.hpp"
#include "run_child.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <set>

namespace greenctx::cli::scale {
namespace {

// Why a run makes the whole measurement meaningless, or "" when it does not.
std::string run_failure(const point &p, const child_result &c, int device) {
  if (c.signal != 0 || c.exit_code != 0)
    return "ended with " + describe_end(c.exit_code, c.signal);
  if (p.baseline)
    return {};
  if (!c.report.cuda_used)
    return "the program never used CUDA (the preload library saw no CUDA call), so its times "
           "cannot depend on the SMs it is given and mean nothing here";
  const auto &confined = c.report.confined_devices;
  if (std::find(confined.begin(), confined.end(), device) == confined.end())
    return fmt::format("the program used CUDA but GPU {} never got a confined context, so nothing "
                       "ran on the {} SMs (does it use another GPU? check --device and "
                       "CUDA_VISIBLE_DEVICES)",
                       device, p.sms);
  return {};
}

run_record record_of(const child_result &c, unsigned repeat) {
  return {repeat,
          c.wall_s,
          c.exit_code,
          c.signal,
          c.report.cuda_used,
          c.report.confined_devices,
          c.report.green_contexts,
          c.report.problems};
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
    const confinement c{p.baseline ? 0u : p.sms, r.device, r.ignore_coscheduling};
    const child_result result = run_child(r.program, c);
    into.push_back(record_of(result, repeat));
    for (const auto &problem :
         result.report.problems) // each once: the same one comes back every run
      if (reported.insert(problem).second)
        print_error(fmt::format("run {} ({}): not confined: {}", done, what, problem));
    if (const std::string why = run_failure(p, result, r.device); !why.empty()) {
      r.failure = fmt::format("run {} of {} ({}): {}", done, total, what, why);
      return false;
    }
    if (!quiet)
      std::fprintf(stderr, "greenctx scale: run %zu of %zu: %.3f s\n", done, total, result.wall_s);
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
