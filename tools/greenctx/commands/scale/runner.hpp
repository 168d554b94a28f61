// SPDX-License-Identifier: Apache-2.0
// How `greenctx scale` runs the program: the warm-ups, then rounds over every point, each run in
// a child process confined to the point's SMs (run_child), until one run makes the measurement
// meaningless.
#pragma once

#include "commands/scale/records.hpp"

namespace greenctx::cli::scale {

/// Runs `r.warmup` warm-ups on `r.warmup_sms` SMs, then `r.repeat` rounds over `r.points`,
/// recording every run and its figure (r.measure) in `r`: the program's stdout is teed through
/// greenctx when the figure is read from it, and the preload library times the GPU phase, the
/// unconfined baseline's too, for gpu-time. Stops at the first run that fails, never uses CUDA,
/// (confined) never gets a confined context on `r.device`, or gives no figure: false, with
/// r.failure saying which and why.
/// Progress lines go to stderr unless `quiet`; what the preload library could not confine is
/// printed once per problem.
bool run_points(results &r, bool quiet);

} // namespace greenctx::cli::scale
