// SPDX-License-Identifier: Apache-2.0
#include "greenctx/core/execution_context.hpp"

#include "greenctx/core/current_context.hpp" // defined here: it checks contexts as the rest does

#include "driver/driver_api.hpp"
#include "core/resources.hpp"
#include "greenctx/plan/error.hpp"
#include "greenctx/core/event.hpp"
#include "greenctx/core/descriptor.hpp"
#include "greenctx/core/stream.hpp"

#include <utility>

namespace greenctx {
namespace {

void require_context(const execution_context_ref &ctx, const char *what) {
  if (!ctx)
    throw error(CUDA_ERROR_INVALID_CONTEXT, what,
                std::string(what) + ": the execution context is null (moved-from or default)");
}

} // namespace

std::uint64_t execution_context_ref::id() const {
  require_context(*this, "execution_context_ref::id");
  unsigned long long id = 0;
  if (is_green())
    GREENCTX_CALL(cuGreenCtxGetId, green_, &id);
  else
    GREENCTX_CALL(cuCtxGetId, ctx_, &id);
  return id;
}

sm_resource execution_context_ref::sms() const {
  require_context(*this, "execution_context_ref::sms");
  CUdevResource raw{};
  if (is_green())
    GREENCTX_CALL(cuGreenCtxGetDevResource, green_, &raw, CU_DEV_RESOURCE_TYPE_SM);
  else
    GREENCTX_CALL(cuCtxGetDevResource, ctx_, &raw, CU_DEV_RESOURCE_TYPE_SM);
  return detail::make_sm_resource(raw, device_);
}

stream execution_context_ref::create_stream(stream_flags flags, int priority) const {
  require_context(*this, "execution_context_ref::create_stream");
  CUstream s = nullptr;
  const auto &api = detail::driver();
  if (is_green() && api.cuGreenCtxStreamCreate) {
    // The driver requires CU_STREAM_NON_BLOCKING for green-context streams (13.1 semantics: the
    // default flag means non-blocking there).
    GREENCTX_CALL(cuGreenCtxStreamCreate, &s, green_, CU_STREAM_NON_BLOCKING, priority);
  } else {
    // 12.4 drivers, and the primary context: a stream created while the context is current
    // belongs to it (measured on 580 for green contexts). The push lasts for this call only.
    const unsigned raw_flags =
        is_green() ? unsigned{CU_STREAM_NON_BLOCKING} : static_cast<unsigned>(flags);
    scoped_current_context guard(*this);
    GREENCTX_CALL(cuStreamCreateWithPriority, &s, raw_flags, priority);
  }
  return stream(s);
}

void execution_context_ref::record(event_ref e) const {
  require_context(*this, "execution_context_ref::record");
  if (is_green())
    GREENCTX_CALL(cuGreenCtxRecordEvent, green_, e.native_handle());
  else
    GREENCTX_CALL(cuCtxRecordEvent, ctx_, e.native_handle());
}

void execution_context_ref::wait(event_ref e) const {
  require_context(*this, "execution_context_ref::wait");
  if (is_green())
    GREENCTX_CALL(cuGreenCtxWaitEvent, green_, e.native_handle());
  else
    GREENCTX_CALL(cuCtxWaitEvent, ctx_, e.native_handle());
}

void execution_context_ref::synchronize() const {
  require_context(*this, "execution_context_ref::synchronize");
  if (!is_green() && !detail::driver().cuCtxRecordEvent) {
    // 12.4 drivers have no cuCtxRecordEvent: synchronise the primary context while it is pushed.
    scoped_current_context guard(*this);
    GREENCTX_CALL(cuCtxSynchronize);
    return;
  }
  // An event recorded on the context captures all its work so far; waiting on it is a
  // synchronisation that needs no current context.
  event done(*this, event_flags::disable_timing);
  record(done);
  done.synchronize();
}

namespace {
CUcontext context_of(CUgreenCtx handle) {
  CUcontext ctx = nullptr;
  GREENCTX_CALL(cuCtxFromGreenCtx, &ctx, handle);
  return ctx;
}
} // namespace

green_context_ref::green_context_ref(CUgreenCtx handle, CUdevice dev)
    : execution_context_ref(context_of(handle), handle, dev) {
}

scoped_current_context::scoped_current_context(execution_context_ref ctx) {
  require_context(ctx, "greenctx::scoped_current_context");
  GREENCTX_CALL(cuCtxPushCurrent, ctx.context());
}

scoped_current_context::~scoped_current_context() {
  CUcontext popped = nullptr;
  detail::release_with(detail::driver().cuCtxPopCurrent, &popped);
}

CUdevice device_of(CUcontext ctx) {
  // Only to push the raw context: the device (the placeholder 0) is what is being asked.
  const scoped_current_context guard(execution_context_ref::primary(ctx, 0));
  CUdevice dev = 0;
  GREENCTX_CALL(cuCtxGetDevice, &dev);
  return dev;
}

green_context green_context::create(const descriptor &desc) {
  if (!desc.native_handle())
    throw request_error(CUDA_ERROR_INVALID_VALUE, "green_context::create",
                        "the descriptor is empty: build it with descriptor::from(pieces)");
  CUgreenCtx h = nullptr;
  // CU_GREEN_CTX_DEFAULT_STREAM is required by every driver so far.
  GREENCTX_CALL(cuGreenCtxCreate, &h, desc.native_handle(), desc.device(),
                CU_GREEN_CTX_DEFAULT_STREAM);
  try {
    return from_native_handle(h, desc.device());
  } catch (...) {
    detail::release_with(detail::driver().cuGreenCtxDestroy, h);
    throw;
  }
}

green_context green_context::from_native_handle(CUgreenCtx handle, CUdevice dev) {
  return green_context(green_context_ref(handle, dev));
}

green_context::green_context(green_context &&other) noexcept
    : green_context_ref(
          std::exchange(static_cast<green_context_ref &>(other), green_context_ref{})) {
}

green_context &green_context::operator=(green_context &&other) noexcept {
  green_context tmp(std::move(other));
  swap(tmp);
  return *this;
}

void green_context::swap(green_context &other) noexcept {
  std::swap(static_cast<green_context_ref &>(*this), static_cast<green_context_ref &>(other));
}

green_context::~green_context() {
  if (green_handle())
    detail::release_with(detail::driver().cuGreenCtxDestroy, green_handle());
}

CUgreenCtx green_context::release() noexcept {
  return std::exchange(static_cast<green_context_ref &>(*this), green_context_ref{}).green_handle();
}

} // namespace greenctx
