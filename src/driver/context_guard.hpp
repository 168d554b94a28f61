// SPDX-License-Identifier: Apache-2.0
// Pushing the primary context for the few driver calls that only act on the current context.
// (Any other context: greenctx::scoped_current_context, in current_context.hpp.)
#pragma once

#include <cuda.h>

namespace greenctx::detail {

/// Retains the primary context of `dev` and pushes it; pops and releases in the destructor.
/// Used instead of pushing a green context, which may be current to one thread at a time only.
class scoped_primary_context {
public:
  explicit scoped_primary_context(CUdevice dev);
  ~scoped_primary_context();
  scoped_primary_context(const scoped_primary_context &) = delete;
  scoped_primary_context &operator=(const scoped_primary_context &) = delete;

private:
  CUdevice dev_;
};

} // namespace greenctx::detail
