// SPDX-License-Identifier: Apache-2.0
#include "compat/registry.hpp"

#include "compat/errors.hpp"
#include "driver/driver_api.hpp"

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>

namespace greenctx::compat {
namespace {

// --- handles handed out ------------------------------------------------------------------------

// Every execution context and descriptor the compat layer has handed out (none is ever freed), so
// that a handle is checked by its value before anything is read through it: a forged or stray
// pointer is refused, not followed.
std::mutex handles_mutex;
std::set<const void *> &handed_out() {
  static auto *h = new std::set<const void *>;
  return *h;
}
void hand_out(const void *handle) {
  std::lock_guard lock(handles_mutex);
  handed_out().insert(handle);
}
bool was_handed_out(const void *handle) {
  std::lock_guard lock(handles_mutex);
  return handed_out().count(handle) > 0;
}

// --- devices ----------------------------------------------------------------------------------

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
  hand_out(primary);
  s.primary = primary;
  return all.emplace(ordinal, std::move(s)).first->second;
}

// --- contexts and streams by driver handle ----------------------------------------------------

constexpr auto stream_detached = static_cast<CUresult>(917);

struct stream_entry {
  unsigned long long id = 0; // cuStreamGetId: tells a reused handle from the original stream
  cudaExecutionContext_t owner = nullptr;
};

std::mutex registry_mutex;
std::map<CUstream, stream_entry> &streams() {
  static auto *s = new std::map<CUstream, stream_entry>;
  return *s;
}
// Every execution context greenctx made or met, by driver context.
std::map<CUcontext, cudaExecutionContext_t> &contexts() {
  static auto *c = new std::map<CUcontext, cudaExecutionContext_t>;
  return *c;
}

[[noreturn]] void detached(const char *api) {
  throw error(stream_detached, api,
              "the stream's execution context was destroyed (cudaErrorStreamDetached): only "
              "destroying the stream is still allowed");
}

bool is_special_stream(cudaStream_t s) {
  return s == nullptr || s == cudaStreamLegacy || s == cudaStreamPerThread;
}

} // namespace

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
  if (!was_handed_out(ctx) || ctx->magic != cudaExecutionContext_st{}.magic)
    refuse(CUDA_ERROR_INVALID_HANDLE, api,
           "not an execution context made by greenctx (from a 13.1 cudart, or freed memory?)");
  if (ctx->destroyed.load())
    refuse(CUDA_ERROR_INVALID_HANDLE, api,
           "the execution context was destroyed by cudaExecutionCtxDestroy");
  return ctx;
}

cudaDevResourceDesc_t keep_descriptor(std::unique_ptr<greenctx_resource_desc> desc) {
  const cudaDevResourceDesc_t handle = handle_of(desc.release());
  hand_out(handle);
  return handle;
}

const greenctx_resource_desc &checked_descriptor(cudaDevResourceDesc_t handle, const char *api) {
  if (!handle)
    refuse(CUDA_ERROR_INVALID_VALUE, api, "desc is NULL");
  if (!was_handed_out(handle) || desc_of(handle)->magic != greenctx_resource_desc{}.magic)
    refuse(CUDA_ERROR_INVALID_VALUE, api,
           "desc was not made by greenctx's cudaDevResourceGenerateDesc");
  return *desc_of(handle);
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
  hand_out(ctx);
  {
    std::lock_guard lock(state_mutex());
    auto &green = state_of(ctx->ordinal, "greenctx").green;
    // Destroyed ones leave the list here, so that it stays as long as the live contexts are many
    // (recycling makes create/destroy cycles cheap enough to run by the thousand).
    std::erase_if(green, [](cudaExecutionContext_t c) { return c->destroyed.load(); });
    green.push_back(ctx);
  }
  remember(ctx);
}

void remember(cudaExecutionContext_t ctx) {
  std::lock_guard lock(registry_mutex);
  contexts()[ctx->ref.context()] = ctx; // a recycled driver context now means its new struct
}

namespace {

// The execution context last remembered for driver context `ctx`, destroyed or not, or null.
cudaExecutionContext_t remembered(CUcontext ctx) {
  std::lock_guard lock(registry_mutex);
  auto it = contexts().find(ctx);
  return it != contexts().end() ? it->second : nullptr;
}

} // namespace

cudaExecutionContext_t known_context(CUcontext ctx) {
  std::lock_guard lock(registry_mutex);
  auto it = contexts().find(ctx);
  return it != contexts().end() && !it->second->destroyed.load() ? it->second : nullptr;
}

cudaExecutionContext_t context_for(const execution_context_ref &ref, const char *api) {
  if (cudaExecutionContext_t known = known_context(ref.context()))
    return known;
  const int ordinal = ordinal_of(ref.device());
  cudaExecutionContext_t primary = primary_context(ordinal, api);
  if (!ref.is_green()) {
    if (primary->ref.context() != ref.context())
      refuse(CUDA_ERROR_NOT_SUPPORTED, api,
             "the stream belongs to a context made with cuCtxCreate, which is not an execution "
             "context (only primary and green contexts are)");
    remember(primary);
    return primary;
  }
  auto *wrapped = new cudaExecutionContext_st;
  wrapped->ordinal = ordinal;
  wrapped->ref = ref;
  wrapped->id = next_context_id();
  hand_out(wrapped);
  remember(wrapped);
  return wrapped;
}

void register_stream(stream_ref stream, cudaExecutionContext_t owner) {
  const std::uint64_t id = stream.id();
  std::lock_guard lock(registry_mutex);
  streams()[stream.native_handle()] = {id, owner};
}

namespace {

// The context a stream made by cudaExecutionCtxStreamCreate belongs to, while it is the same
// stream (the driver may give a destroyed stream's handle to a new one), or null.
cudaExecutionContext_t registered_owner(cudaStream_t stream, const char *api) {
  std::optional<stream_entry> known;
  {
    std::lock_guard lock(registry_mutex);
    auto it = streams().find(stream);
    if (it != streams().end())
      known = it->second;
  }
  if (!known)
    return nullptr;
  // The driver context of a destroyed execution context stays alive (parked), so its streams
  // still answer cuStreamGetId: a handle reused by another stream is told apart first.
  bool same_stream = false;
  bool stale = false;
  try {
    same_stream = stream_ref(stream).id() == known->id;
  } catch (const error &) { // a destroyed stream: the handle is stale
    stale = true;
  }
  if (same_stream || (stale && known->owner->destroyed.load())) {
    if (known->owner->destroyed.load())
      detached(api);
    return known->owner;
  }
  std::lock_guard lock(registry_mutex); // the handle was reused by another stream
  streams().erase(stream);
  return nullptr;
}

// The execution context of the NULL, legacy or per-thread stream: that of the current context.
// Reading the current context is the compat layer's business (the core never does).
execution_context_ref context_of_special_stream(cudaStream_t stream, const char *api) {
  CUcontext current = nullptr;
  GREENCTX_CALL(cuCtxGetCurrent, &current);
  if (!current)
    refuse(CUDA_ERROR_INVALID_CONTEXT, api,
           "the NULL and per-thread streams mean the current context, and none is current "
           "(call cudaSetDevice or cudaInitDevice first)");
  if (detail::driver().cuStreamGetCtx_v2) // which may be a green context's
    return stream_ref(stream).context();
  return execution_context_ref::primary(current, device_of(current));
}

} // namespace

cudaExecutionContext_t context_of_stream(cudaStream_t stream, const char *api) {
  if (!is_special_stream(stream))
    if (cudaExecutionContext_t owner = registered_owner(stream, api))
      return owner;
  const execution_context_ref ref = is_special_stream(stream)
                                        ? context_of_special_stream(stream, api)
                                        : stream_ref(stream).context();
  // A stream greenctx did not make, of a green context destroyed and parked (not yet reused).
  if (cudaExecutionContext_t last = remembered(ref.context()); last && last->destroyed.load())
    detached(api);
  return context_for(ref, api);
}

} // namespace greenctx::compat
