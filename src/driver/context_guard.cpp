// SPDX-License-Identifier: Apache-2.0
#include "driver/context_guard.hpp"

#include "driver/driver_api.hpp"

namespace greenctx::detail {

scoped_primary_context::scoped_primary_context(CUdevice dev) : dev_(dev) {
  CUcontext primary = nullptr;
  GREENCTX_CALL(cuDevicePrimaryCtxRetain, &primary, dev);
  CUresult rc = CUDA_ERROR_NOT_SUPPORTED;
  try {
    rc = GREENCTX_ENTRY(cuCtxPushCurrent)(primary);
  } catch (...) {
    release_with(driver().cuDevicePrimaryCtxRelease, dev);
    throw;
  }
  if (rc != CUDA_SUCCESS) {
    release_with(driver().cuDevicePrimaryCtxRelease, dev);
    check(rc, "cuCtxPushCurrent");
  }
}

scoped_primary_context::~scoped_primary_context() {
  CUcontext popped = nullptr;
  release_with(driver().cuCtxPopCurrent, &popped);
  release_with(driver().cuDevicePrimaryCtxRelease, dev_);
}

} // namespace greenctx::detail
