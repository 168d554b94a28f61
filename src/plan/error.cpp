#include "greenctx/plan/error.hpp"

#include <utility>

namespace greenctx {

error::error(CUresult code, std::string api, const std::string &message)
    : std::runtime_error(message), code_(code), api_(std::move(api)) {
}

unsupported_error::unsupported_error(std::string feature, int required_version, int driver_version)
    : error(CUDA_ERROR_NOT_SUPPORTED, feature,
            feature + " needs a CUDA " + format_cuda_version(required_version) +
                " driver; the loaded driver is CUDA " + format_cuda_version(driver_version)),
      feature_(std::move(feature)), required_(required_version), driver_(driver_version) {
}

std::string format_cuda_version(int version) {
  if (version <= 0)
    return "unknown";
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

} // namespace greenctx
