// SPDX-License-Identifier: Apache-2.0
// Events: `event_ref` refers to a CUevent, `event` owns one.
#pragma once

#include "greenctx/cxx_standard.hpp"

#include "greenctx/core/execution_context.hpp"

#include <cuda.h>

namespace greenctx {

class stream_ref;

/// Event creation flags (CUevent_flags).
enum class event_flags : unsigned {
  none = CU_EVENT_DEFAULT,
  blocking_sync = CU_EVENT_BLOCKING_SYNC, ///< synchronize() sleeps instead of spinning
  disable_timing = CU_EVENT_DISABLE_TIMING,
};
constexpr event_flags operator|(event_flags a, event_flags b) {
  return static_cast<event_flags>(static_cast<unsigned>(a) | static_cast<unsigned>(b));
}

/// A non-owning, trivially copyable reference to an event. Compares by handle.
class event_ref {
public:
  event_ref() = delete;
  explicit event_ref(CUevent handle) noexcept : handle_(handle) {}
  event_ref(std::nullptr_t) = delete;

  CUevent native_handle() const noexcept { return handle_; }
  /// Records the work submitted to `s` so far.
  void record(stream_ref s) const;
  /// Blocks until the recorded work has finished.
  void synchronize() const;
  /// True when the recorded work has finished.
  bool ready() const;

  friend bool operator==(event_ref a, event_ref b) noexcept { return a.handle_ == b.handle_; }

private:
  CUevent handle_;
};

/// Owns an event. Move-only; moved-from events are null.
class event : public event_ref {
public:
  event() noexcept : event_ref(CUevent{}) {}
  /// Creates an event usable with every execution context of `ctx`'s device (it is created in the
  /// device's primary context, which greenctx pushes and pops around the call).
  explicit event(execution_context_ref ctx, event_flags flags = event_flags::none);
  event(event &&other) noexcept;
  event &operator=(event &&other) noexcept;
  event(const event &) = delete;
  event &operator=(const event &) = delete;
  ~event();

  static event from_native_handle(CUevent handle) noexcept;
  CUevent release() noexcept;
};

/// Milliseconds between two recorded events (both created with timing enabled).
float elapsed_ms(event_ref start, event_ref end);

} // namespace greenctx
