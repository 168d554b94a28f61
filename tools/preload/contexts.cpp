// SPDX-License-Identifier: Apache-2.0
#include "contexts.hpp"

#include "piece.hpp"

#include "report.hpp"
#include "streams.hpp"

#include <array>
#include <string>

namespace greenctx::preload {
namespace {

constexpr int max_devices = 64;
constexpr int max_contexts = 256;

// The registry: slots are never freed, only reused, so a lock-free reader never sees freed
// memory. `generation` changes whenever a slot does, which invalidates the per-thread caches.
std::array<confined_context, max_contexts> slots;
std::atomic<int> slots_used{0};
std::atomic<unsigned long long> generation{1};
std::mutex registry_mutex;

confined_context *add_context(CUcontext ctx, CUgreenCtx green, int device, bool shared) {
  std::lock_guard lock(registry_mutex);
  for (int i = 0; i < max_contexts; ++i) {
    confined_context &c = slots[i];
    if (c.ctx.load() != nullptr)
      continue;
    c.green = green;
    c.device = device;
    c.shared = shared;
    c.legacy_epoch.store(0);
    c.any_dirty.store(false);
    c.legacy_event = nullptr;
    {
      scoped_current in(ctx);
      real().event_create(&c.legacy_event, CU_EVENT_DISABLE_TIMING);
    }
    c.ctx.store(ctx);
    if (i >= slots_used.load())
      slots_used.store(i + 1);
    generation.fetch_add(1);
    return &c;
  }
  return nullptr;
}

struct device_state {
  std::once_flag descriptor_once, shared_once;
  std::atomic<bool> described{false}, ready{false};
  CUdevResourceDesc desc = nullptr;
  unsigned group_sms = 0; ///< the SMs of the split's group (set with `described`)
  confined_context *shared = nullptr;
  std::atomic<CUcontext> primary{nullptr};
  std::atomic<bool> warned_unconfined{false};
  std::atomic<bool> retained{false}; ///< the library holds a reference to the primary context
};
std::array<device_state, max_devices> devices;
std::atomic<int> devices_noted{0}; ///< 1 + the highest ordinal whose primary context is noted

std::string device_name(int d) {
  return "device " + std::to_string(d);
}

// The descriptor of N SMs of `device` (one split), made once.
bool make_descriptor(int device, device_state &st) {
  const real_driver &d = real();
  const settings &c = config();
  if (!d.device_resource || !d.split || !d.generate_desc || !d.green_create || !d.from_green) {
    problem("this driver lacks the green-context API (CUDA 12.4+): " + device_name(device) +
            " runs on all its SMs");
    return false;
  }
  if (!c.split.empty()) { // a piece of a split
    std::string why;
    const std::vector<CUdevResource> pieces =
        split_piece(device, c.split, c.piece, c.split_flags, &why);
    if (pieces.empty() || d.generate_desc(&st.desc, const_cast<CUdevResource *>(pieces.data()),
                                          static_cast<unsigned>(pieces.size())) != CUDA_SUCCESS) {
      problem("could not make piece " + std::to_string(c.piece) + " of '" + c.split + "' on " +
              device_name(device) + (why.empty() ? "" : " (" + why + ")") +
              ": it runs on all its SMs");
      return false;
    }
    unsigned sms = 0;
    for (const CUdevResource &p : pieces)
      sms += p.sm.smCount;
    st.group_sms = sms;
    debug("piece %u of '%s' on device %d: %u SMs in %zu resource(s): %s", c.piece, c.split.c_str(),
          device, sms, pieces.size(), hex_of(pieces).c_str());
    return true;
  }
  CUdevResource all{}, group{};
  unsigned n = 1;
  if (d.device_resource(device, &all, CU_DEV_RESOURCE_TYPE_SM) != CUDA_SUCCESS ||
      d.split(&group, &n, &all, nullptr, c.split_flags, c.sms) != CUDA_SUCCESS || n != 1 ||
      group.sm.smCount != c.sms || d.generate_desc(&st.desc, &group, 1) != CUDA_SUCCESS) {
    problem("could not make a group of " + std::to_string(c.sms) + " SMs on " +
            device_name(device) + ": it runs on all its SMs");
    return false;
  }
  st.group_sms = group.sm.smCount;
  return true;
}

// A new green context over the device's N SMs, registered; null on failure (reported).
confined_context *new_green_context(int device, bool shared) {
  device_state &st = devices[device];
  CUgreenCtx g = nullptr;
  CUcontext ctx = nullptr;
  if (real().green_create(&g, st.desc, device, CU_GREEN_CTX_DEFAULT_STREAM) != CUDA_SUCCESS ||
      real().from_green(&ctx, g) != CUDA_SUCCESS) {
    problem("could not create a green context on " + device_name(device) +
            (shared ? ": the device runs on all its SMs" : ": cuCtxCreate made an unconfined one"));
    if (g)
      real().green_destroy(g);
    return nullptr;
  }
  confined_context *c = add_context(ctx, g, device, shared);
  if (!c) {
    problem("more than " + std::to_string(max_contexts) +
            " contexts at once: the next ones are not confined");
    real().green_destroy(g);
    return nullptr;
  }
  stats().green_contexts.fetch_add(1, std::memory_order_relaxed);
  stats().confined_devices.fetch_or(1ull << device, std::memory_order_relaxed);
  debug("green context %p on device %d (%s)", static_cast<void *>(ctx), device,
        shared ? "shared by all threads" : "cuCtxCreate");
  return c;
}

// Context flags a green context can take with cuCtxSetFlags.
constexpr unsigned settable_flags =
    CU_CTX_SCHED_MASK | CU_CTX_LMEM_RESIZE_TO_MAX | CU_CTX_SYNC_MEMOPS;

void apply_flags(confined_context &c, unsigned flags) {
  flags &= settable_flags;
  if (!flags)
    return;
  scoped_current in(c.ctx.load());
  if (!real().ctx_set_flags || real().ctx_set_flags(flags) != CUDA_SUCCESS)
    problem("could not give the green context of device " + std::to_string(c.device) +
            " the context flags " + std::to_string(flags) + " (cuCtxSetFlags)");
}

// Whether `device` is confined and its descriptor made (once); says so when it is not confined.
bool confinable(int device) {
  if (device < 0 || device >= max_devices)
    return false;
  device_state &st = devices[device];
  if (!config().confines(device)) {
    if (!st.warned_unconfined.exchange(true))
      problem(device_name(device) +
              " is used but not confined (not named in --device): its kernels run on all its SMs");
    return false;
  }
  std::call_once(st.descriptor_once, [&] { st.described = make_descriptor(device, st); });
  return st.described;
}

// The device's shared green context, made on first use; null when the device is not confined.
confined_context *shared_context(int device) {
  if (!confinable(device))
    return nullptr;
  device_state &st = devices[device];
  std::call_once(st.shared_once, [&] {
    st.shared = new_green_context(device, true);
    if (!st.shared)
      return;
    unsigned flags = 0;
    int active = 0;
    if (real().primary_state && real().primary_state(device, &flags, &active) == CUDA_SUCCESS)
      apply_flags(*st.shared, flags);
    st.ready = true;
  });
  return st.ready ? st.shared : nullptr;
}

} // namespace

confined_context *find_context(CUcontext ctx) {
  struct cache {
    CUcontext ctx = nullptr;
    confined_context *found = nullptr;
    unsigned long long generation = 0;
  };
  thread_local cache last;
  if (!ctx)
    return nullptr;
  const unsigned long long g = generation.load(std::memory_order_acquire);
  if (last.generation == g && last.ctx == ctx)
    return last.found;
  confined_context *found = nullptr;
  const int n = slots_used.load(std::memory_order_acquire);
  for (int i = 0; i < n; ++i)
    if (slots[i].ctx.load(std::memory_order_acquire) == ctx) {
      found = &slots[i];
      break;
    }
  last = {ctx, found, g};
  return found;
}

void note_primary(CUcontext primary, CUdevice device) {
  if (!primary || device < 0 || device >= max_devices)
    return;
  devices[device].primary.store(primary, std::memory_order_release);
  int seen = devices_noted.load(std::memory_order_acquire);
  while (seen < device + 1 && !devices_noted.compare_exchange_weak(seen, device + 1))
    ;
}

CUcontext as_seen(CUcontext ctx) {
  if (!ctx)
    return ctx;
  const int n = devices_noted.load(std::memory_order_acquire);
  for (int d = 0; d < n; ++d)
    if (devices[d].primary.load(std::memory_order_acquire) == ctx)
      return devices[d].ready.load(std::memory_order_acquire) ? devices[d].shared->ctx.load() : ctx;
  return ctx;
}

confined_context *find_green(CUgreenCtx green) {
  if (!green)
    return nullptr;
  const int n = slots_used.load(std::memory_order_acquire);
  for (int i = 0; i < n; ++i)
    if (slots[i].ctx.load(std::memory_order_acquire) && slots[i].green == green)
      return &slots[i];
  return nullptr;
}

namespace {

// Asking about a device does not use it: one left out of --device is not reported here.
bool reports_partition(int device) {
  return config().active && !config().real_sm_count && config().confines(device);
}

} // namespace

unsigned confined_sm_count(int device) {
  if (!reports_partition(device) || !confinable(device))
    return 0;
  return devices[device].group_sms;
}

bool confined_resource(int device, CUdevResource *out) {
  if (!reports_partition(device) || !real().green_resource)
    return false;
  confined_context *c = shared_context(device);
  return c && real().green_resource(c->green, out, CU_DEV_RESOURCE_TYPE_SM) == CUDA_SUCCESS;
}

namespace {

// The device whose primary context `ctx` is, or -1. The CUDA runtime makes its primary context
// current before the context is active and without a hooked cuDevicePrimaryCtxRetain (measured on
// driver 580: cuDevicePrimaryCtxGetState says inactive at that point), so an unknown context is
// asked for its device and compared with that device's primary context, which the library then
// keeps retained (one reference, never released: the program uses that device anyway).
int primary_device(CUcontext ctx) {
  for (int d = 0; d < max_devices; ++d)
    if (devices[d].primary.load(std::memory_order_acquire) == ctx)
      return d;
  CUdevice d = -1;
  {
    CUcontext popped = nullptr;
    if (real().push_current(ctx) != CUDA_SUCCESS)
      return -1;
    if (real().ctx_get_device(&d) != CUDA_SUCCESS)
      d = -1;
    real().pop_current(&popped);
  }
  if (d < 0 || d >= max_devices)
    return -1;
  device_state &st = devices[d];
  CUcontext primary = nullptr;
  if (real().primary_retain(&primary, d) != CUDA_SUCCESS)
    return -1;
  if (st.retained.exchange(true)) // one reference is enough
    real().primary_release(d);
  note_primary(primary, d);
  debug("context %p is on device %d, whose primary context is %p", static_cast<void *>(ctx), d,
        static_cast<void *>(primary));
  return primary == ctx ? d : -1;
}

} // namespace

CUcontext substitute(CUcontext ctx) {
  if (!ctx || !config().active || find_context(ctx))
    return ctx;
  const int d = primary_device(ctx);
  if (d < 0)
    return ctx;
  confined_context *c = shared_context(d);
  return c ? c->ctx.load() : ctx;
}

bool create_context(CUcontext *pctx, unsigned flags, CUdevice device, CUresult *rc) {
  if (!pctx || !config().active || !confinable(device))
    return false;
  confined_context *c = new_green_context(device, false);
  if (!c)
    return false;
  *pctx = c->ctx.load();
  *rc = real().push_current(*pctx);
  apply_flags(*c, flags);
  return true;
}

bool destroy_context(CUcontext ctx, CUresult *rc) {
  confined_context *c = find_context(ctx);
  if (!c)
    return false;
  if (c->shared) {
    // The program destroys what it took for the primary context: the driver's answer for the
    // primary context itself.
    *rc = real().ctx_destroy(devices[c->device].primary.load());
    return true;
  }
  CUcontext current = current_context();
  if (current == ctx)
    real().pop_current(&current);
  forget_streams(*c);
  {
    scoped_current in(ctx);
    real().event_destroy(c->legacy_event);
  }
  CUgreenCtx green = c->green;
  {
    std::lock_guard lock(registry_mutex);
    c->ctx.store(nullptr);
    generation.fetch_add(1);
  }
  *rc = real().green_destroy(green);
  return true;
}

void primary_flags_changed(CUdevice device, unsigned flags) {
  if (device < 0 || device >= max_devices || !devices[device].ready)
    return;
  apply_flags(*devices[device].shared, flags);
}

} // namespace greenctx::preload
