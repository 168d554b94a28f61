// Pushing a context for the few driver calls that only act on the current context.
#pragma once

#include <cuda.h>

namespace greenctx::detail {

/// Pushes `ctx` onto the calling thread's context stack and pops it in the destructor, so that
/// the caller's stack is the same afterwards. Throws error if the push fails.
class scoped_context {
public:
  explicit scoped_context(CUcontext ctx);
  ~scoped_context();
  scoped_context(const scoped_context &) = delete;
  scoped_context &operator=(const scoped_context &) = delete;
};

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
