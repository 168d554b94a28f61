// SPDX-License-Identifier: Apache-2.0
// Making an execution context current for code that reads the calling thread's current context.
#pragma once

#include "greenctx/cxx_standard.hpp"

#include "greenctx/core/execution_context.hpp"

namespace greenctx {

/// Makes an execution context current on the calling thread for the guard's lifetime (pushes it,
/// pops it in the destructor), for libraries that take the device from the current context, such
/// as the CUDA runtime and cuBLAS. greenctx itself never needs it. A green context may be current
/// to one thread at a time (a driver rule): prefer the primary context here and pass green-context
/// streams explicitly.
class scoped_current_context {
public:
  explicit scoped_current_context(execution_context_ref ctx);
  ~scoped_current_context();
  scoped_current_context(const scoped_current_context &) = delete;
  scoped_current_context &operator=(const scoped_current_context &) = delete;
};

} // namespace greenctx
