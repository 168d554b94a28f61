// How `greenctx scale` runs the program: the warm-ups, then rounds over every point, each run in
// a child process confined to the point's SMs (run_child), until one run makes the measurement
// meaningless.
#pragma once

#include "scale/records.hpp"

namespace greenctx::cli::scale {

/// Runs `r.warmup` warm-ups on `r.warmup_sms` SMs, then `r.repeat` rounds over `r.points`,
/// recording every run in `r`. Stops at the first run that fails, never uses CUDA, or (confined)
/// never gets a confined context on `r.device`: false, with r.failure saying which and why.
/// Progress lines go to stderr unless `quiet`; what the preload library could not confine is
/// printed once per problem.
bool run_points(results &r, bool quiet);

} // namespace greenctx::cli::scale
