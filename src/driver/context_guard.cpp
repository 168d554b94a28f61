#include "driver/context_guard.hpp"

#include "driver/driver_api.hpp"

namespace greenctx::detail {

scoped_primary_context::scoped_primary_context(CUdevice dev) : dev_(dev) {
  CUcontext primary = nullptr;
  GREENCTX_CALL(cuDevicePrimaryCtxRetain, &primary, dev);
  const CUresult rc = driver().cuCtxPushCurrent(primary);
  if (rc != CUDA_SUCCESS) {
    driver().cuDevicePrimaryCtxRelease(dev);
    check(rc, "cuCtxPushCurrent");
  }
}

scoped_primary_context::~scoped_primary_context() {
  CUcontext popped = nullptr;
  driver().cuCtxPopCurrent(&popped);
  driver().cuDevicePrimaryCtxRelease(dev_);
}

} // namespace greenctx::detail
