#include "greenctx/error.hpp"

#include "detail/driver_api.hpp"

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

std::string result_name(CUresult code) noexcept {
  try {
    const char *name = nullptr;
    if (const auto *d = detail::driver_if_loaded(); d && d->cuGetErrorName)
      d->cuGetErrorName(code, &name);
    if (name)
      return name;
    return "CUresult " + std::to_string(static_cast<int>(code));
  } catch (...) {
    return {};
  }
}

} // namespace greenctx
