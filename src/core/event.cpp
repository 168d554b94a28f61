// SPDX-License-Identifier: Apache-2.0
#include "greenctx/core/event.hpp"

#include "driver/context_guard.hpp"
#include "driver/driver_api.hpp"
#include "greenctx/plan/error.hpp"
#include "greenctx/core/stream.hpp"

#include <utility>

namespace greenctx {

void event_ref::record(stream_ref s) const {
  GREENCTX_CALL(cuEventRecord, handle_, s.native_handle());
}

void event_ref::synchronize() const {
  GREENCTX_CALL(cuEventSynchronize, handle_);
}

bool event_ref::ready() const {
  const CUresult rc = GREENCTX_ENTRY(cuEventQuery)(handle_);
  if (rc == CUDA_ERROR_NOT_READY)
    return false;
  detail::check(rc, "cuEventQuery");
  return true;
}

namespace {
CUevent create_event(execution_context_ref ctx, event_flags flags) {
  if (!ctx)
    throw error(CUDA_ERROR_INVALID_CONTEXT, "greenctx::event",
                "cannot create an event on a null execution context");
  // Events are created in the device's primary context: a green context may be current to one
  // thread at a time, so greenctx never pushes one where it can avoid it.
  detail::scoped_primary_context guard(ctx.device());
  CUevent e = nullptr;
  GREENCTX_CALL(cuEventCreate, &e, static_cast<unsigned>(flags));
  return e;
}
} // namespace

event::event(execution_context_ref ctx, event_flags flags) : event_ref(create_event(ctx, flags)) {
}

event::event(event &&other) noexcept
    : event_ref(std::exchange(static_cast<event_ref &>(other), event_ref(CUevent{}))) {
}

event &event::operator=(event &&other) noexcept {
  event tmp(std::move(other));
  std::swap(static_cast<event_ref &>(*this), static_cast<event_ref &>(tmp));
  return *this;
}

event::~event() {
  if (native_handle())
    detail::release_with(detail::driver().cuEventDestroy, native_handle());
}

event event::from_native_handle(CUevent handle) noexcept {
  event e;
  static_cast<event_ref &>(e) = event_ref(handle);
  return e;
}

CUevent event::release() noexcept {
  return std::exchange(static_cast<event_ref &>(*this), event_ref(CUevent{})).native_handle();
}

float elapsed_ms(event_ref start, event_ref end) {
  float ms = 0;
  GREENCTX_CALL(cuEventElapsedTime, &ms, start.native_handle(), end.native_handle());
  return ms;
}

} // namespace greenctx
