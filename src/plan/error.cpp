// SPDX-License-Identifier: Apache-2.0
#include "greenctx/plan/error.hpp"

#include <utility>

namespace greenctx {

error::error(CUresult code, std::string api, const std::string &message)
    : std::runtime_error(message), code_(code), api_(std::move(api)) {
}

namespace {

std::string unsupported_message(const std::string &feature, int required, int driver) {
  const std::string needs = "CUDA " + format_cuda_version(required);
  if (driver > 0 &&
      driver >= required) // new enough, and still without it: a stub or broken libcuda
    return "the loaded driver (CUDA " + format_cuda_version(driver) + ") does not provide " +
           feature + ", which " + needs + " drivers have: is it a stub or an incomplete libcuda?";
  return feature + " needs a " + needs + " driver; the loaded driver is CUDA " +
         format_cuda_version(driver);
}

} // namespace

unsupported_error::unsupported_error(std::string feature, int required_version, int driver_version)
    : error(CUDA_ERROR_NOT_SUPPORTED, feature,
            unsupported_message(feature, required_version, driver_version)),
      feature_(std::move(feature)), required_(required_version), driver_(driver_version) {
}

std::string format_cuda_version(int version) {
  if (version <= 0)
    return "unknown";
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

} // namespace greenctx
