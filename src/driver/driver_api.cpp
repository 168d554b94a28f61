// SPDX-License-Identifier: Apache-2.0
#include "driver/driver_api.hpp"
#include "greenctx/driver/driver.hpp"

#include "greenctx/plan/error.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <optional>

namespace greenctx::detail {
namespace {

// The outcome of the one attempt to load the driver: either a usable table or the error to
// throw on every use.
struct load_result {
  driver_api api;
  std::optional<error> failure;
};

load_result load() {
  load_result out;
  const char *override_path = std::getenv("GREENCTX_LIBCUDA");
  out.api.library_path = (override_path && *override_path) ? override_path : "libcuda.so.1";

  // The handle is never closed: entry points stay valid for the life of the process.
  void *lib = dlopen(out.api.library_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *why = dlerror();
    out.failure.emplace(CUDA_ERROR_NO_DEVICE, "dlopen",
                        "no NVIDIA driver: " + out.api.library_path + " could not be opened (" +
                            (why ? why : "unknown reason") +
                            "). Install the NVIDIA driver, or run on a machine with a GPU.");
    return out;
  }
  auto get_proc = reinterpret_cast<PFN_cuGetProcAddress_v12000>(dlsym(lib, "cuGetProcAddress_v2"));
  if (!get_proc) {
    out.failure.emplace(CUDA_ERROR_NOT_SUPPORTED, "dlsym",
                        "the NVIDIA driver in " + out.api.library_path +
                            " has no cuGetProcAddress_v2: it is older than CUDA 12.0; greenctx "
                            "needs a driver for CUDA 12.4 or newer");
    return out;
  }
  auto fetch = [&](const char *symbol, int version) -> void * {
    void *fn = nullptr;
    CUdriverProcAddressQueryResult found{};
    if (get_proc(symbol, &fn, version, CU_GET_PROC_ADDRESS_DEFAULT, &found) != CUDA_SUCCESS ||
        found != CU_GET_PROC_ADDRESS_SUCCESS)
      return nullptr;
    return fn;
  };

  auto init = reinterpret_cast<PFN_cuInit_v2000>(fetch("cuInit", 2000));
  if (!init) {
    out.failure.emplace(CUDA_ERROR_NOT_SUPPORTED, "cuGetProcAddress",
                        "the driver in " + out.api.library_path + " does not provide cuInit");
    return out;
  }
#define GREENCTX_FETCH(member, symbol, version)                                                    \
  out.api.member = reinterpret_cast<PFN_##symbol##_v##version>(fetch(#symbol, version));
  GREENCTX_DRIVER_ENTRY_POINTS(GREENCTX_FETCH)
#undef GREENCTX_FETCH
#define GREENCTX_FETCH_RAW(symbol, version) out.api.symbol = fetch(#symbol, version);
  GREENCTX_DRIVER_13_1_ENTRY_POINTS(GREENCTX_FETCH_RAW)
#undef GREENCTX_FETCH_RAW

  if (out.api.cuDriverGetVersion)
    out.api.cuDriverGetVersion(&out.api.version);

  const CUresult rc = init(0);
  if (rc != CUDA_SUCCESS) {
    std::string why = rc == CUDA_ERROR_NO_DEVICE
                          ? "the NVIDIA driver is installed but sees no GPU"
                          : "cuInit failed: the driver could not be initialised";
    // result_name() would re-enter this loader, so ask the fetched entry point directly.
    const char *name = nullptr;
    if (out.api.cuGetErrorName)
      out.api.cuGetErrorName(rc, &name);
    out.failure.emplace(rc, "cuInit",
                        why + " (driver " + format_cuda_version(out.api.version) + ", " +
                            (name ? name : "CUresult " + std::to_string(rc)) + ")");
  }
  return out;
}

const load_result &loaded() {
  static const load_result result = load();
  return result;
}

} // namespace

const driver_api &load_driver() {
  const auto &r = loaded();
  if (r.failure) // a fresh error each time: the remembered one may be in flight on another thread
    throw error(r.failure->code(), r.failure->api(), r.failure->what());
  loaded_table.store(&r.api, std::memory_order_release);
  return r.api;
}

const driver_api *driver_if_loaded() noexcept {
  try {
    const auto &r = loaded();
    return r.failure ? nullptr : &r.api;
  } catch (...) {
    return nullptr;
  }
}

void throw_unsupported(const char *name, int version) {
  throw unsupported_error(name, version, driver().version);
}

void throw_driver_error(CUresult code, const char *api, const std::string &context) {
  std::string message = std::string(api) + " failed: " + result_name(code);
  const char *description = nullptr;
  if (const auto *d = driver_if_loaded(); d && d->cuGetErrorString)
    d->cuGetErrorString(code, &description);
  if (description)
    message += std::string(" (") + description + ")";
  if (!context.empty())
    message += ": " + context;
  if (code == CUDA_ERROR_NO_BINARY_FOR_GPU || code == CUDA_ERROR_UNSUPPORTED_PTX_VERSION)
    message += "; greenctx's kernels are built for " GREENCTX_KERNEL_ARCHS
               ": build greenctx with CMAKE_CUDA_ARCHITECTURES naming this GPU's compute "
               "capability (greenctx info shows it), or with a toolkit no newer than the driver";
  throw error(code, api, message);
}

} // namespace greenctx::detail
