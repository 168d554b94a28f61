// cuBLAS, opened at run time like the driver, for the GEMM workloads of `greenctx bench`.
#pragma once

#include <greenctx/greenctx.hpp>

#include <memory>
#include <string>

namespace greenctx::cli::bench {

/// A square bf16 GEMM (C = A * B, fp32 accumulate) of size n on whatever stream it is given.
/// The matrices hold random values. Needs libcublas (GREENCTX_CUBLAS names the file, else
/// libcublas.so.13, libcublas.so.12 and /usr/local/cuda/lib64 are tried).
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

  /// Where cuBLAS was loaded from, or why it could not be.
  static std::string availability();

private:
  const device &dev_;
  unsigned n_;
  device_buffer a_, b_, c_;
  void *handle_ = nullptr;
};

} // namespace greenctx::cli::bench
