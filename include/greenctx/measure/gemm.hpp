// SPDX-License-Identifier: Apache-2.0
// A cuBLAS GEMM as a workload (bench's GEMM critical and background work, the communication
// sweep's compute): cuBLAS is opened at run time like the driver, so nothing links it.
#pragma once

#include "greenctx/cxx_standard.hpp"

#include "greenctx/core/device.hpp"
#include "greenctx/core/memory.hpp"
#include "greenctx/core/stream.hpp"

#include <memory>
#include <string>

namespace greenctx::measure {

/// A square bf16 GEMM (C = A * B, fp32 accumulate) of size n on whatever stream it is given.
/// The matrices hold random values. Needs libcublas (GREENCTX_CUBLAS names the file, else
/// libcublas.so.13, libcublas.so.12 and /usr/local/cuda/lib64 are tried). `dev` must outlive it.
class gemm {
public:
  /// Throws greenctx::unsupported_error when cuBLAS cannot be loaded, with the paths tried.
  gemm(const device &dev, unsigned n);
  ~gemm();
  gemm(const gemm &) = delete;
  gemm &operator=(const gemm &) = delete;

  /// Enqueues one GEMM on `s`.
  void launch(stream_ref s);
  unsigned n() const noexcept { return n_; }
  double flops() const noexcept { return 2.0 * n_ * n_ * n_; }

  /// Whether cuBLAS can be loaded (what the constructor needs).
  static bool available();
  /// Where cuBLAS was loaded from, or why it could not be.
  static std::string availability();

private:
  const device &dev_;
  unsigned n_;
  device_buffer a_, b_, c_;
  void *handle_ = nullptr;
};

} // namespace greenctx::measure
