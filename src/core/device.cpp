// SPDX-License-Identifier: Apache-2.0
#include "greenctx/core/device.hpp"

#include "driver/driver_api.hpp"
#include "core/resources.hpp"
#include "greenctx/core/current_context.hpp"
#include "greenctx/plan/error.hpp"

#include <charconv>
#include <cstdlib>
#include <cstring>
#include <utility>

namespace greenctx {

device::device(int ordinal) {
  const int n = count();
  if (ordinal < 0 || ordinal >= n)
    throw error(CUDA_ERROR_INVALID_DEVICE, "greenctx::device",
                "there is no GPU " + std::to_string(ordinal) + ": " +
                    (n == 1 ? std::string("the only GPU is 0")
                            : "valid GPUs are 0 to " + std::to_string(n - 1)));
  s_.ordinal = ordinal;
  GREENCTX_CALL(cuDeviceGet, &s_.handle, ordinal);
  GREENCTX_CALL(cuDevicePrimaryCtxRetain, &s_.primary, s_.handle);
}

device::device(device &&other) noexcept : s_(std::exchange(other.s_, state{})) {
}

device &device::operator=(device &&other) noexcept {
  device tmp(std::move(other));
  std::swap(s_, tmp.s_);
  return *this;
}

device::~device() {
  if (s_.primary)
    detail::release_with(detail::driver().cuDevicePrimaryCtxRelease, s_.handle);
}

int device::count() {
  int n = 0;
  GREENCTX_CALL(cuDeviceGetCount, &n);
  return n;
}

std::string device::name() const {
  char buf[256] = {};
  GREENCTX_CALL(cuDeviceGetName, buf, sizeof buf, s_.handle);
  return buf;
}

int device::attribute(CUdevice_attribute which) const {
  int v = 0;
  GREENCTX_CALL(cuDeviceGetAttribute, &v, which, s_.handle);
  return v;
}

std::string device::pci_bus_id() const {
  char buf[64] = {};
  GREENCTX_CALL(cuDeviceGetPCIBusId, buf, sizeof buf, s_.handle);
  return buf;
}

std::pair<int, int> device::compute_capability() const {
  return {attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR),
          attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)};
}

sm_resource device::sms() const {
  CUdevResource raw{};
  GREENCTX_CALL(cuDeviceGetDevResource, s_.handle, &raw, CU_DEV_RESOURCE_TYPE_SM);
  return detail::make_sm_resource(raw, s_.handle);
}

execution_context_ref device::primary_context() const noexcept {
  return execution_context_ref::primary(s_.primary, s_.handle);
}

std::pair<int, int> device::stream_priority_range() const {
  scoped_current_context guard(primary_context());
  int least = 0, greatest = 0;
  GREENCTX_CALL(cuCtxGetStreamPriorityRange, &least, &greatest);
  return {least, greatest};
}

std::pair<std::size_t, std::size_t> device::memory_info() const {
  scoped_current_context guard(primary_context());
  std::size_t free = 0, total = 0;
  GREENCTX_CALL(cuMemGetInfo, &free, &total);
  return {free, total};
}

std::optional<int> max_connections_from_environment() {
  const char *v = std::getenv("CUDA_DEVICE_MAX_CONNECTIONS");
  if (!v || !*v)
    return std::nullopt;
  int n = 0;
  const auto [ptr, ec] = std::from_chars(v, v + std::strlen(v), n);
  if (ec != std::errc() || *ptr != '\0' || n < 1 || n > 32)
    return std::nullopt;
  return n;
}

std::optional<std::string> max_connections_warning() {
  return max_connections_warning(max_connections_from_environment());
}

std::optional<std::string> max_connections_warning(std::optional<int> connections) {
  if (connections != 1)
    return std::nullopt;
  return "CUDA_DEVICE_MAX_CONNECTIONS=1: every stream of this process shares one work queue, so "
         "work on one green context waits behind the kernels queued before it on any other: green "
         "contexts isolate nothing. Leave it unset (the driver's default of 8) or set 8 or more";
}

} // namespace greenctx
