// SPDX-License-Identifier: Apache-2.0
// Execution contexts: the primary context of a device, or a green context bound to a set of SMs.
//
// `execution_context_ref` is a non-owning, trivially copyable reference to either kind;
// `green_context_ref` refers to a green context and `green_context` owns one. Every operation
// names its context explicitly: none reads or changes the calling thread's current context
// (where the driver has no explicit-handle call, greenctx pushes the context and pops it before
// returning, on the calling thread only).
//
// Thread safety: references may be copied and used from any number of threads at once. A
// green_context owner may be used from several threads as long as it is not moved, released or
// destroyed meanwhile.
//
// Lifetime: keep green contexts and reuse them. On driver 580 (CUDA 13.0) every create/destroy
// cycle leaks about 4 MiB of device memory (800 MiB after 200 cycles, measured), and creation
// costs 1.1-1.6 ms. Repartitioning by re-creating contexts in a loop is not viable.
#pragma once

#include "greenctx/cxx_standard.hpp"

#include "greenctx/core/stream_flags.hpp"
#include "greenctx/plan/resource.hpp"

#include <cuda.h>

#include <cstdint>
#include <span>

namespace greenctx {

class stream;
class event_ref;
class descriptor;

/// A primary or green context. Null when default-constructed.
class execution_context_ref {
public:
  execution_context_ref() = default;
  execution_context_ref(std::nullptr_t) = delete;

  /// The primary context `ctx` of `dev` (not retained: the caller keeps it alive).
  static execution_context_ref primary(CUcontext ctx, CUdevice dev) noexcept {
    return execution_context_ref(ctx, nullptr, dev);
  }

  bool is_green() const noexcept { return green_ != nullptr; }
  explicit operator bool() const noexcept { return ctx_ != nullptr; }

  /// The driver context: the primary context, or the context of a green context
  /// (cuCtxFromGreenCtx). Making it current is the caller's business and outside greenctx's rules.
  CUcontext context() const noexcept { return ctx_; }
  /// The green context, or null for the primary context.
  CUgreenCtx green_handle() const noexcept { return green_; }
  CUdevice device() const noexcept { return device_; }

  /// An id unique for the life of the process (cuGreenCtxGetId for green contexts, driver 12.9+;
  /// cuCtxGetId for the primary context). The two counters are separate in the driver, so
  /// greenctx compares (is_green(), id()) pairs, not ids alone.
  std::uint64_t id() const;

  /// The SMs this context may use.
  sm_resource sms() const;

  /// A stream whose kernels run only on this context's SMs. `priority` is clamped to the device's
  /// range (lower numbers are higher priority). Throws error.
  stream create_stream(stream_flags flags = stream_flags::none, int priority = 0) const;

  /// Records in `e` all work submitted to this context so far (all its streams).
  void record(event_ref e) const;
  /// Makes all work submitted to this context after the call wait for `e`.
  void wait(event_ref e) const;
  /// Blocks until all work submitted to this context so far has finished.
  void synchronize() const;

  friend bool operator==(const execution_context_ref &, const execution_context_ref &) = default;

protected:
  execution_context_ref(CUcontext ctx, CUgreenCtx green, CUdevice dev) noexcept
      : ctx_(ctx), green_(green), device_(dev) {}

private:
  CUcontext ctx_ = nullptr;
  CUgreenCtx green_ = nullptr;
  CUdevice device_ = 0;
};

/// The device of a driver context (cuCtxGetDevice while `ctx` is pushed for the call: before
/// CUDA 13.0 the driver has no query that takes the context explicitly). Throws error.
CUdevice device_of(CUcontext ctx);

/// A non-owning reference to a green context.
class green_context_ref : public execution_context_ref {
public:
  green_context_ref() = default;
  green_context_ref(std::nullptr_t) = delete;
  /// Refers to an existing green context of device `dev`. Throws error if the handle is invalid.
  green_context_ref(CUgreenCtx handle, CUdevice dev);

  CUgreenCtx native_handle() const noexcept { return green_handle(); }
};

/// Owns a green context; destroys it in the destructor. Move-only; moved-from owners are null.
class green_context : public green_context_ref {
public:
  green_context() = default;
  green_context(green_context &&other) noexcept;
  green_context &operator=(green_context &&other) noexcept;
  green_context(const green_context &) = delete;
  green_context &operator=(const green_context &) = delete;
  ~green_context();

  /// Creates a green context from a descriptor (cuGreenCtxCreate). Costs about 1.5 ms and, when
  /// later destroyed, leaks about 4 MiB on driver 580: create once, reuse.
  static green_context create(const descriptor &desc);

  /// Takes ownership of an existing handle.
  static green_context from_native_handle(CUgreenCtx handle, CUdevice dev);

  /// Gives up ownership without destroying; returns the handle. The owner becomes null.
  CUgreenCtx release() noexcept;

  /// A reference to the green context.
  green_context_ref ref() const noexcept { return *this; }

private:
  explicit green_context(green_context_ref r) noexcept : green_context_ref(r) {}
  void swap(green_context &other) noexcept;
};

} // namespace greenctx
