#include "capi/state.hpp"

#include "driver/driver_api.hpp"

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <string>

namespace greenctx::compat {
namespace {

std::mutex &state_mutex() {
  static std::mutex m;
  return m;
}

struct device_state {
  std::unique_ptr<device> dev;
  cudaExecutionContext_t primary = nullptr;
  std::vector<cudaExecutionContext_t> green;
};

// Kept for the life of the process and never destroyed: handles given out stay valid, and no
// driver call runs from a static destructor after the driver may be gone.
std::map<int, device_state> &devices() {
  static auto *d = new std::map<int, device_state>;
  return *d;
}

device_state &state_of(int ordinal, const char *api) {
  auto &all = devices();
  auto it = all.find(ordinal);
  if (it != all.end())
    return it->second;
  const int count = device::count();
  if (ordinal < 0 || ordinal >= count)
    refuse(CUDA_ERROR_INVALID_DEVICE, api,
           "device " + std::to_string(ordinal) + " does not exist: valid devices are 0.." +
               std::to_string(count - 1));
  device_state s;
  s.dev = std::make_unique<device>(ordinal);
  auto *primary = new cudaExecutionContext_st;
  primary->ordinal = ordinal;
  primary->ref = s.dev->primary_context();
  primary->id = next_context_id();
  s.primary = primary;
  return all.emplace(ordinal, std::move(s)).first->second;
}

} // namespace

void refuse(CUresult code, const char *api, const std::string &message) {
  throw request_error(code, api, message);
}

void require_pointer(const void *p, const char *api, const char *name) {
  if (!p)
    refuse(CUDA_ERROR_INVALID_VALUE, api, std::string(name) + " is NULL");
}

const device &device_at(int ordinal, const char *api) {
  std::lock_guard lock(state_mutex());
  return *state_of(ordinal, api).dev;
}

int ordinal_of(CUdevice dev) {
  // Runtime ordinals and driver handles agree (both follow CUDA_VISIBLE_DEVICES).
  const int count = device::count();
  for (int i = 0; i < count; ++i) {
    CUdevice d = 0;
    GREENCTX_CALL(cuDeviceGet, &d, i);
    if (d == dev)
      return i;
  }
  refuse(CUDA_ERROR_INVALID_DEVICE, "greenctx", "unknown device handle");
}

cudaExecutionContext_t primary_context(int ordinal, const char *api) {
  std::lock_guard lock(state_mutex());
  return state_of(ordinal, api).primary;
}

cudaExecutionContext_t checked_context(cudaExecutionContext_t ctx, const char *api) {
  if (!ctx)
    refuse(CUDA_ERROR_INVALID_VALUE, api, "the execution context is NULL");
  if (ctx->magic != cudaExecutionContext_st{}.magic)
    refuse(CUDA_ERROR_INVALID_HANDLE, api,
           "not an execution context made by greenctx (from a 13.1 cudart, or freed memory?)");
  if (ctx->destroyed.load())
    refuse(CUDA_ERROR_INVALID_HANDLE, api,
           "the execution context was destroyed by cudaExecutionCtxDestroy");
  return ctx;
}

std::uint64_t next_context_id() {
  static std::atomic<std::uint64_t> next{1};
  return next++;
}

std::vector<cudaExecutionContext_t> live_green_contexts(int ordinal) {
  std::lock_guard lock(state_mutex());
  std::vector<cudaExecutionContext_t> out;
  for (auto *c : state_of(ordinal, "greenctx").green)
    if (!c->destroyed.load())
      out.push_back(c);
  return out;
}

void register_green_context(cudaExecutionContext_t ctx) {
  std::lock_guard lock(state_mutex());
  state_of(ctx->ordinal, "greenctx").green.push_back(ctx);
}

unsigned workqueue_limit() {
  // The documented default of CUDA_DEVICE_MAX_CONNECTIONS; the GPU check measures it.
  return static_cast<unsigned>(max_connections_from_environment().value_or(8));
}

cudaDevWorkqueueConfigResource default_workqueue_config(int ordinal) {
  return {ordinal, workqueue_limit(), cudaDevWorkqueueConfigScopeDeviceCtx};
}

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

void clear_last_error() noexcept { last_message.clear(); }

std::string last_error_message() { return last_message; }

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
