#include "capi/state.hpp"

#include "driver/driver_api.hpp"

#include <map>
#include <memory>
#include <mutex>
#include <new>

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

cudaError_t translate_current_exception() noexcept {
  try {
    throw;
  } catch (const error &e) { // recorded when it was made
    return static_cast<cudaError_t>(e.code());
  } catch (const std::bad_alloc &) {
    try {
      error(CUDA_ERROR_OUT_OF_MEMORY, "greenctx", "out of host memory");
    } catch (...) {
    }
    return cudaErrorMemoryAllocation;
  } catch (const std::exception &e) {
    try {
      error(CUDA_ERROR_UNKNOWN, "greenctx", e.what());
    } catch (...) {
    }
    return cudaErrorUnknown;
  } catch (...) {
    return cudaErrorUnknown;
  }
}

} // namespace greenctx::compat

extern "C" const char *greenctxGetLastErrorMessage(void) {
  thread_local std::string message;
  message = greenctx::last_error_message();
  return message.c_str();
}
