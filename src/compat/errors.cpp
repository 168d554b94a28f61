// SPDX-License-Identifier: Apache-2.0
#include "compat/errors.hpp"

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <mutex>
#include <new>

namespace greenctx::compat {
namespace {

thread_local std::string last_message;

// The thread's last explanation, and one line per failure to GREENCTX_LOG_FILE. Only the code's
// number: naming it would ask the driver, and failures also come from loading it.
void record(CUresult code, const char *api, const char *message) noexcept {
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
      std::fprintf(f, "%s greenctx [%s] CUresult %d: %s\n", stamp, api, static_cast<int>(code),
                   message);
      std::fclose(f);
    }
  } catch (...) {
    // recording must never turn one error into another
  }
}

} // namespace

void refuse(CUresult code, const char *api, const std::string &message) {
  throw request_error(code, api, message);
}

void require_pointer(const void *p, const char *api, const char *name) {
  if (!p)
    refuse(CUDA_ERROR_INVALID_VALUE, api, std::string(name) + " is NULL");
}

void clear_last_error() noexcept {
  last_message.clear();
}

std::string last_error_message() {
  return last_message;
}

cudaError_t translate_current_exception() noexcept {
  try {
    throw;
  } catch (const error &e) {
    record(e.code(), e.api().c_str(), e.what());
    return static_cast<cudaError_t>(e.code());
  } catch (const std::bad_alloc &) {
    record(CUDA_ERROR_OUT_OF_MEMORY, "greenctx", "out of host memory");
    return cudaErrorMemoryAllocation;
  } catch (const std::exception &e) {
    record(CUDA_ERROR_UNKNOWN, "greenctx", e.what());
    return cudaErrorUnknown;
  } catch (...) {
    record(CUDA_ERROR_UNKNOWN, "greenctx", "an unknown C++ exception");
    return cudaErrorUnknown;
  }
}

} // namespace greenctx::compat

extern "C" const char *greenctxGetLastErrorMessage(void) {
  thread_local std::string message; // stays valid until this thread's next call
  message = greenctx::compat::last_error_message();
  return message.c_str();
}
