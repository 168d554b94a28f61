// SPDX-License-Identifier: Apache-2.0
#include "greenctx/core/stream.hpp"

#include "driver/driver_api.hpp"
#include "greenctx/plan/error.hpp"
#include "greenctx/core/event.hpp"

#include <utility>

namespace greenctx {

void stream_ref::synchronize() const {
  GREENCTX_CALL(cuStreamSynchronize, handle_);
}

bool stream_ref::ready() const {
  const CUresult rc = GREENCTX_ENTRY(cuStreamQuery)(handle_);
  if (rc == CUDA_ERROR_NOT_READY)
    return false;
  detail::check(rc, "cuStreamQuery");
  return true;
}

void stream_ref::wait(event_ref e) const {
  GREENCTX_CALL(cuStreamWaitEvent, handle_, e.native_handle(), 0);
}

int stream_ref::priority() const {
  int p = 0;
  GREENCTX_CALL(cuStreamGetPriority, handle_, &p);
  return p;
}

unsigned stream_ref::flags() const {
  unsigned f = 0;
  GREENCTX_CALL(cuStreamGetFlags, handle_, &f);
  return f;
}

std::uint64_t stream_ref::id() const {
  unsigned long long id = 0;
  GREENCTX_CALL(cuStreamGetId, handle_, &id);
  return id;
}

execution_context_ref stream_ref::context() const {
  const auto &api = detail::driver();
  CUcontext ctx = nullptr;
  CUgreenCtx green = nullptr;
  if (api.cuStreamGetCtx_v2) {
    GREENCTX_CALL(cuStreamGetCtx_v2, handle_, &ctx, &green);
  } else {
    GREENCTX_CALL(cuStreamGetGreenCtx, handle_, &green);
    if (!green)
      throw unsupported_error("the context of a primary-context stream without a current context",
                              12050, api.version);
  }
  CUdevice dev = 0;
  if (api.cuStreamGetDevice) {
    GREENCTX_CALL(cuStreamGetDevice, handle_, &dev);
  } else {
    // Before 12.8 the device is only known through a current context.
    CUcontext owner = ctx;
    if (green)
      GREENCTX_CALL(cuCtxFromGreenCtx, &owner, green);
    dev = device_of(owner);
  }
  if (green)
    return green_context_ref(green, dev);
  return execution_context_ref::primary(ctx, dev);
}

sm_resource stream_ref::sms() const {
  return context().sms();
}

stream::stream(stream &&other) noexcept
    : stream_ref(std::exchange(static_cast<stream_ref &>(other), stream_ref(CUstream{}))) {
}

stream &stream::operator=(stream &&other) noexcept {
  stream tmp(std::move(other));
  std::swap(static_cast<stream_ref &>(*this), static_cast<stream_ref &>(tmp));
  return *this;
}

stream::~stream() {
  if (native_handle())
    detail::release_with(detail::driver().cuStreamDestroy, native_handle());
}

CUstream stream::release() noexcept {
  return std::exchange(static_cast<stream_ref &>(*this), stream_ref(CUstream{})).native_handle();
}

} // namespace greenctx
