// SPDX-License-Identifier: Apache-2.0
// Device memory owned by greenctx objects and benchmarks.
#pragma once

#include "greenctx/cxx_standard.hpp"

#include "greenctx/core/device.hpp"
#include "greenctx/core/stream.hpp"

#include <cuda.h>

#include <cstddef>

namespace greenctx {

/// Device memory (cuMemAlloc in the device's primary context, which green contexts share).
/// Move-only; moved-from buffers are empty. Thread safety: distinct buffers are independent; one
/// buffer's copies must not race with kernels that write it.
class device_buffer {
public:
  device_buffer() = default;
  /// Allocates `bytes` (> 0) on `dev`. Throws error (CUDA_ERROR_OUT_OF_MEMORY says how much).
  device_buffer(const device &dev, std::size_t bytes);
  device_buffer(device_buffer &&other) noexcept;
  device_buffer &operator=(device_buffer &&other) noexcept;
  device_buffer(const device_buffer &) = delete;
  device_buffer &operator=(const device_buffer &) = delete;
  ~device_buffer();

  CUdeviceptr get() const noexcept { return s_.ptr; }
  std::size_t size() const noexcept { return s_.bytes; }

  /// Copies the first `bytes` to `host` (synchronous).
  void copy_to_host(void *host, std::size_t bytes) const;
  /// Copies the first `bytes` to `host` in order on `s`, and waits for `s`: use it when other
  /// streams keep the device busy and the copy must not queue behind them.
  void copy_to_host(void *host, std::size_t bytes, stream_ref s) const;
  /// Copies `bytes` from `host` into the start of the buffer (synchronous).
  void copy_from_host(const void *host, std::size_t bytes);
  /// Fills the buffer with a 32-bit pattern, asynchronously on `s`.
  void fill_async(unsigned pattern, stream_ref s) const;

private:
  struct state {
    CUdevice device = 0;
    CUdeviceptr ptr = 0;
    std::size_t bytes = 0;
  };
  state s_;
};

/// Page-locked host memory that kernels read and write directly (cuMemHostAlloc, portable and
/// mapped): for flags the host and the device exchange while a kernel runs. Zero-filled.
/// Move-only; moved-from buffers are empty.
class mapped_host_buffer {
public:
  mapped_host_buffer() = default;
  /// Allocates `bytes` (> 0) for `dev`. Throws error.
  mapped_host_buffer(const device &dev, std::size_t bytes);
  mapped_host_buffer(mapped_host_buffer &&other) noexcept;
  mapped_host_buffer &operator=(mapped_host_buffer &&other) noexcept;
  mapped_host_buffer(const mapped_host_buffer &) = delete;
  mapped_host_buffer &operator=(const mapped_host_buffer &) = delete;
  ~mapped_host_buffer();

  void *host() const noexcept { return s_.host; }
  CUdeviceptr device_pointer() const noexcept { return s_.ptr; } ///< the same memory, for kernels
  std::size_t size() const noexcept { return s_.bytes; }

private:
  struct state {
    CUdevice device = 0;
    void *host = nullptr;
    CUdeviceptr ptr = 0;
    std::size_t bytes = 0;
  };
  state s_;
};

} // namespace greenctx
