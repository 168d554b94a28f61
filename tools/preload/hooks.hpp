// SPDX-License-Identifier: Apache-2.0
// What the program's own lookups find, for code of the preload library that must call the driver
// as the program would (through the hooks, so that confinement applies).
#pragma once

namespace greenctx::preload {

/// What cuGetProcAddress gives the program for `name` at ABI `version` with `flags`: the hook
/// where there is one, else the driver's function; null when neither has it.
void *program_lookup(const char *name, int version, unsigned long long flags);

} // namespace greenctx::preload
