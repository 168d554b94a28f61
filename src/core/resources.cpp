// SPDX-License-Identifier: Apache-2.0
// SM resources as the driver fills them in, with the granularity completed, and split serials.
#include "core/resources.hpp"

#include "driver/driver_api.hpp"
#include "greenctx/plan/granularity.hpp"
#include "greenctx/plan/resource.hpp"

#include <atomic>

namespace greenctx::detail {

sm_resource make_sm_resource(const CUdevResource &raw, CUdevice dev, std::uint64_t origin) {
  int major = 0, minor = 0;
  GREENCTX_CALL(cuDeviceGetAttribute, &major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
  GREENCTX_CALL(cuDeviceGetAttribute, &minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
  return reported_sm_resource(raw, dev, documented_granularity(major, minor), major, origin);
}

std::uint64_t next_split_origin() noexcept {
  static std::atomic<std::uint64_t> counter{0};
  return ++counter;
}

} // namespace greenctx::detail
