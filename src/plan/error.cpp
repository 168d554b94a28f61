#include "greenctx/plan/error.hpp"

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <mutex>

namespace greenctx {

namespace {

thread_local std::string last_message;

// One line per error to GREENCTX_LOG_FILE. Only the code's number: naming it would ask the driver,
// and errors are also made while the driver is being loaded.
void record(CUresult code, const std::string &api, const std::string &message) noexcept {
  try {
    last_message = message;
    const char *path = std::getenv("GREENCTX_LOG_FILE");
    if (!path || !*path)
      return;
    static std::mutex file_mutex;
    const std::lock_guard lock(file_mutex);
    if (std::FILE *f = std::fopen(path, "a")) {
      const std::time_t now = std::time(nullptr);
      char stamp[32] = {};
      std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
      std::fprintf(f, "%s greenctx [%s] CUresult %d: %s\n", stamp, api.c_str(),
                   static_cast<int>(code), message.c_str());
      std::fclose(f);
    }
  } catch (...) {
    // recording must never turn one error into another
  }
}

} // namespace

error::error(CUresult code, std::string api, const std::string &message)
    : std::runtime_error(message), code_(code), api_(std::move(api)) {
  record(code_, api_, message);
}

std::string last_error_message() { return last_message; }

void clear_last_error() noexcept { last_message.clear(); }

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
