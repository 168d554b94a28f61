// SPDX-License-Identifier: Apache-2.0
#include "greenctx/core/memory.hpp"

#include "driver/context_guard.hpp"
#include "driver/driver_api.hpp"
#include "greenctx/plan/error.hpp"

#include <cstring>
#include <utility>

namespace greenctx {

device_buffer::device_buffer(const device &dev, std::size_t bytes) {
  if (bytes == 0)
    throw request_error(CUDA_ERROR_INVALID_VALUE, "greenctx::device_buffer",
                        "cannot allocate 0 bytes");
  s_.device = dev.native_handle();
  s_.bytes = bytes;
  detail::scoped_primary_context guard(s_.device);
  const CUresult rc = GREENCTX_ENTRY(cuMemAlloc)(&s_.ptr, bytes);
  if (rc != CUDA_SUCCESS)
    detail::check(rc, "cuMemAlloc", "allocating " + std::to_string(bytes) + " bytes");
}

device_buffer::device_buffer(device_buffer &&other) noexcept
    : s_(std::exchange(other.s_, state{})) {
}

device_buffer &device_buffer::operator=(device_buffer &&other) noexcept {
  device_buffer tmp(std::move(other));
  std::swap(s_, tmp.s_);
  return *this;
}

device_buffer::~device_buffer() {
  if (!s_.ptr)
    return;
  try {
    detail::scoped_primary_context guard(s_.device);
    detail::release_with(detail::driver().cuMemFree, s_.ptr);
  } catch (...) {
    // destructors do not throw; the memory goes with the context
  }
}

namespace {
// Copies never run past the buffer: the same check for every direction.
void check_fits(std::size_t bytes, std::size_t size, const char *api) {
  if (bytes > size)
    throw request_error(CUDA_ERROR_INVALID_VALUE, api,
                        std::to_string(bytes) + " bytes asked of a " + std::to_string(size) +
                            "-byte buffer");
}
} // namespace

void device_buffer::copy_to_host(void *host, std::size_t bytes) const {
  check_fits(bytes, s_.bytes, "greenctx::device_buffer::copy_to_host");
  detail::scoped_primary_context guard(s_.device);
  GREENCTX_CALL(cuMemcpyDtoH, host, s_.ptr, bytes);
}

void device_buffer::copy_to_host(void *host, std::size_t bytes, stream_ref s) const {
  check_fits(bytes, s_.bytes, "greenctx::device_buffer::copy_to_host");
  GREENCTX_CALL(cuMemcpyDtoHAsync, host, s_.ptr, bytes, s.native_handle());
  s.synchronize();
}

void device_buffer::copy_from_host(const void *host, std::size_t bytes) {
  check_fits(bytes, s_.bytes, "greenctx::device_buffer::copy_from_host");
  detail::scoped_primary_context guard(s_.device);
  GREENCTX_CALL(cuMemcpyHtoD, s_.ptr, host, bytes);
}

void device_buffer::fill_async(unsigned pattern, stream_ref s) const {
  GREENCTX_CALL(cuMemsetD32Async, s_.ptr, pattern, s_.bytes / sizeof(unsigned), s.native_handle());
}

mapped_host_buffer::mapped_host_buffer(const device &dev, std::size_t bytes) {
  if (bytes == 0)
    throw request_error(CUDA_ERROR_INVALID_VALUE, "greenctx::mapped_host_buffer",
                        "cannot allocate 0 bytes");
  s_.device = dev.native_handle();
  detail::scoped_primary_context guard(s_.device);
  GREENCTX_CALL(cuMemHostAlloc, &s_.host, bytes,
                CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP);
  s_.bytes = bytes;
  std::memset(s_.host, 0, bytes);
  CUresult rc = CUDA_ERROR_NOT_SUPPORTED;
  try {
    rc = GREENCTX_ENTRY(cuMemHostGetDevicePointer)(&s_.ptr, s_.host, 0);
  } catch (...) {
    detail::release_with(detail::driver().cuMemFreeHost, s_.host);
    throw;
  }
  if (rc != CUDA_SUCCESS) {
    detail::release_with(detail::driver().cuMemFreeHost, s_.host);
    detail::check(rc, "cuMemHostGetDevicePointer", "mapping page-locked host memory");
  }
}

mapped_host_buffer::mapped_host_buffer(mapped_host_buffer &&other) noexcept
    : s_(std::exchange(other.s_, state{})) {
}

mapped_host_buffer &mapped_host_buffer::operator=(mapped_host_buffer &&other) noexcept {
  mapped_host_buffer tmp(std::move(other));
  std::swap(s_, tmp.s_);
  return *this;
}

mapped_host_buffer::~mapped_host_buffer() {
  if (!s_.host)
    return;
  try {
    detail::scoped_primary_context guard(s_.device);
    detail::release_with(detail::driver().cuMemFreeHost, s_.host);
  } catch (...) {
    // destructors do not throw; the memory goes with the process
  }
}

} // namespace greenctx
