// SPDX-License-Identifier: Apache-2.0
// A GPU, and its primary context.
#pragma once

#include "greenctx/cxx_standard.hpp"

#include "greenctx/core/execution_context.hpp"
#include "greenctx/plan/resource.hpp"

#include <cuda.h>

#include <optional>
#include <string>

namespace greenctx {

/// A GPU by ordinal. Owns a retain of the device's primary context (released in the destructor):
/// green contexts are created on top of the primary context, and creating them is faster when it
/// is already initialised. Move-only; a moved-from device holds nothing and may only be destroyed
/// or assigned to.
///
/// Thread safety: all const members may be called from any thread at the same time. None of them
/// reads or changes the calling thread's current context.
class device {
public:
  /// Opens device `ordinal`. Throws error (CUDA_ERROR_NO_DEVICE when there is no driver or GPU,
  /// CUDA_ERROR_INVALID_DEVICE with the valid range when the ordinal is out of range).
  explicit device(int ordinal);
  device(device &&other) noexcept;
  device &operator=(device &&other) noexcept;
  device(const device &) = delete;
  device &operator=(const device &) = delete;
  ~device();

  /// Number of GPUs the driver sees. Throws error when there is no driver.
  static int count();

  int ordinal() const noexcept { return s_.ordinal; }
  CUdevice native_handle() const noexcept { return s_.handle; }
  std::string name() const;
  /// {major, minor}, e.g. {9, 0}.
  std::pair<int, int> compute_capability() const;
  int attribute(CUdevice_attribute which) const;
  /// "0000:19:00.0": the PCI address, which matches the GPU in nvidia-smi and NVML.
  std::string pci_bus_id() const;

  /// All SMs of the device (cuDeviceGetDevResource), with min partition and alignment filled in.
  sm_resource sms() const;

  /// The primary context as an execution context.
  execution_context_ref primary_context() const noexcept;

  /// {least, greatest} stream priority (numerically greatest first: e.g. {0, -5}).
  std::pair<int, int> stream_priority_range() const;

  /// Free and total device memory, in bytes.
  std::pair<std::size_t, std::size_t> memory_info() const;

private:
  struct state {
    int ordinal = -1;
    CUdevice handle = 0;
    CUcontext primary = nullptr; // retained
  };
  state s_;
};

/// CUDA_DEVICE_MAX_CONNECTIONS from the environment when it is a whole number in the documented
/// range 1..32, else nullopt (unset, malformed or out of range: the driver's default of 8 is
/// assumed; what the driver does with out-of-range values is not measured).
std::optional<int> max_connections_from_environment();

/// Why `connections` (CUDA_DEVICE_MAX_CONNECTIONS as max_connections_from_environment reads it)
/// defeats green contexts, or nullopt when it does not. With one connection every stream of the
/// process is fed through one work queue, so critical work waits behind the kernels queued before
/// it whatever green context each runs in (measured on an H100: a 20-us kernel's p99 29 ms
/// instead of 49 us beside a background of 29-ms kernels, benchmarks/RESULTS.md "Isolation").
std::optional<std::string> max_connections_warning(std::optional<int> connections);
/// The same for the environment's value.
std::optional<std::string> max_connections_warning();

} // namespace greenctx
