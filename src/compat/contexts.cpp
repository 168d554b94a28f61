// SPDX-License-Identifier: Apache-2.0
// Execution contexts of the 13.1 runtime API: create, destroy, streams, events, synchronize.
#include "compat/errors.hpp"
#include "compat/recycle.hpp"
#include "compat/registry.hpp"
#include "compat/workqueues.hpp"

#include "greenctx/core/event.hpp"
#include "greenctx/core/descriptor.hpp"
#include "greenctx/core/stream.hpp"
#include "greenctx/core/cluster_proof.hpp"
#include "greenctx/plan/group_params.hpp"

#include <algorithm>
#include <memory>
#include <optional>

using namespace greenctx;
using namespace greenctx::compat;

namespace {

// A green context that cudaExecutionCtxDestroy took from its execution context, with the event
// recorded on it then.
struct parked_context {
  green_context owner;
  event idle;
};

// Parked green contexts of the process. Never destroyed: no driver call from a static destructor.
parking_lot<parked_context> &parked() {
  static auto *lot = new parking_lot<parked_context>;
  return *lot;
}

// A parked context is given out again only once the work submitted to it before it was parked has
// finished: 13.1's new context starts with no pending work of its own, and waiting for the old
// work here could block creation for as long as that work runs (or for ever, if it waits for work
// submitted later). A busy one stays parked and a fresh context is made instead.
bool has_no_pending_work(const parked_context &p) noexcept {
  try {
    return p.idle.ready();
  } catch (const error &) { // a failed query: do not reuse it
    return false;
  }
}

// Parks the green context of `ctx` (whose owner becomes empty): records its pending work in its
// event first. Where the event cannot be made or recorded, the context is kept without a key and
// never reused. Throws only std::bad_alloc.
void park(cudaExecutionContext_st &ctx) {
  if (!ctx.owner)
    return;
  std::optional<recycle_key> key = ctx.recycle;
  try {
    if (!ctx.idle.native_handle())
      ctx.idle = event(ctx.ref, event_flags::disable_timing);
    ctx.ref.record(ctx.idle);
  } catch (const error &) {
    key.reset();
  }
  parked().park(key, parked_context{std::move(ctx.owner), std::move(ctx.idle)});
}

// Pieces of an IgnoreSmCoscheduling split carry no co-scheduling promise from the driver: proves
// that the group runs what its coscheduledSmCount promised. The split proved each of its groups;
// this finds that cached measurement, and measures a descriptor combining several groups. Throws.
void check_clusters(const greenctx_resource_desc &desc, green_context_ref ref,
                    const greenctx::device &dev, const char *api) {
  const unsigned c = desc.coscheduled;
  if (!desc.needs_cluster_check || c < 2)
    return;
  const unsigned want = clusters_promised(desc.native.sm_count(), c, !desc.exact);
  const unsigned got = proven_clusters(desc.native, c, ref);
  if (got < want)
    refuse(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION, api,
           "the group's " + std::to_string(desc.native.sm_count()) +
               " SMs come from an "
               "IgnoreSmCoscheduling split (this driver has no cuDevSmResourceSplit) and can "
               "run " +
               std::to_string(got) + " clusters of " + std::to_string(c) +
               " SMs at once, not the " + std::to_string(want) + " that coscheduledSmCount " +
               std::to_string(c) + " promises: use a multiple of " +
               std::to_string(dev.sms().coscheduled_alignment()) +
               " SMs for the group (whole co-scheduled units), or a CUDA 13.1 driver");
}

} // namespace

extern "C" {

cudaError_t greenctx_cudaDeviceGetExecutionCtx(cudaExecutionContext_t *ctx, int device) {
  return guarded([&] {
    constexpr const char *api = "cudaDeviceGetExecutionCtx";
    require_pointer(ctx, api, "ctx");
    *ctx = primary_context(device, api);
    remember(*ctx);
  });
}

cudaError_t greenctx_cudaGreenCtxCreate(cudaExecutionContext_t *ctx, cudaDevResourceDesc_t handle,
                                        int device, unsigned int flags) {
  return guarded([&] {
    constexpr const char *api = "cudaGreenCtxCreate";
    require_pointer(ctx, api, "phCtx");
    const greenctx_resource_desc *desc = &checked_descriptor(handle, api);
    if (flags != 0)
      refuse(CUDA_ERROR_INVALID_VALUE, api, "flags must be 0, not " + std::to_string(flags));
    if (desc->ordinal != device)
      refuse(CUDA_ERROR_INVALID_VALUE, api,
             "desc holds resources of device " + std::to_string(desc->ordinal) +
                 ", not of device " + std::to_string(device));
    const greenctx::device &dev = device_at(device, api);
    // A descriptor of work-queue resources only holds no SMs: the context gets all of them.
    const descriptor native =
        desc->native.native_handle() ? desc->native : descriptor::from(dev.sms());
    auto made = std::make_unique<cudaExecutionContext_st>();
    made->recycle = make_recycle_key(device, native.content_id(), desc->workqueue_provisioned,
                                     desc->workqueue.device, desc->workqueue.wqConcurrencyLimit,
                                     raw_enum(desc->workqueue.sharingScope));
    std::optional<parked_context> reused;
    if (made->recycle)
      reused = parked().take(*made->recycle, has_no_pending_work);
    if (reused) {
      made->owner = std::move(reused->owner);
      made->idle = std::move(reused->idle);
    } else if (green_context proved = take_proof_context(native)) {
      made->owner = std::move(proved); // the split made it to prove the group's clusters
    } else {
      made->owner = green_context::create(native);
    }
    made->ref = made->owner.ref();
    made->ordinal = device;
    made->has_workqueue_config = desc->has_workqueue_config;
    made->workqueue = desc->workqueue;
    made->workqueue_provisioned = desc->workqueue_provisioned;
    try {
      check_clusters(*desc, made->owner.ref(), dev, api);
    } catch (...) {
      park(*made); // the same key would be refused again; the driver context may serve no other
      throw;
    }
    made->id = next_context_id(); // a new id, also for a recycled driver context
    cudaExecutionContext_t out = made.release();
    register_green_context(out);
    *ctx = out;
  });
}

cudaError_t greenctx_cudaExecutionCtxDestroy(cudaExecutionContext_t ctx) {
  return guarded([&] {
    constexpr const char *api = "cudaExecutionCtxDestroy";
    checked_context(ctx, api);
    if (!ctx->ref.is_green())
      refuse(CUDA_ERROR_INVALID_VALUE, api,
             "this is a device's primary execution context, which cannot be destroyed");
    if (!ctx->owner)
      refuse(CUDA_ERROR_INVALID_VALUE, api,
             "this green context was not made by cudaGreenCtxCreate (greenctx does not own it)");
    if (ctx->destroyed.exchange(true)) // another thread destroyed it just now
      refuse(CUDA_ERROR_INVALID_HANDLE, api,
             "the execution context was destroyed by cudaExecutionCtxDestroy");
    park(*ctx); // its streams now answer "detached"; the driver context stays alive
  });
}

cudaError_t greenctx_cudaExecutionCtxStreamCreate(cudaStream_t *stream, cudaExecutionContext_t ctx,
                                                  unsigned int flags, int priority) {
  return guarded([&] {
    constexpr const char *api = "cudaExecutionCtxStreamCreate";
    require_pointer(stream, api, "phStream");
    checked_context(ctx, api);
    if (flags & ~unsigned{cudaStreamNonBlocking})
      refuse(CUDA_ERROR_INVALID_VALUE, api,
             "flags " + std::to_string(flags) +
                 ": cudaStreamDefault (0) or cudaStreamNonBlocking (1)");
    const auto [least, greatest] = device_at(ctx->ordinal, api).stream_priority_range();
    const int clamped = std::clamp(priority, std::min(least, greatest), std::max(least, greatest));
    greenctx::stream s =
        ctx->ref.create_stream(flags ? stream_flags::non_blocking : stream_flags::none, clamped);
    register_stream(s, ctx);
    *stream = s.release();
  });
}

cudaError_t greenctxStreamGetExecutionCtx(cudaStream_t stream, cudaExecutionContext_t *ctx) {
  return guarded([&] {
    constexpr const char *api = "greenctxStreamGetExecutionCtx";
    require_pointer(ctx, api, "ctx");
    *ctx = context_of_stream(stream, api);
  });
}

cudaError_t greenctx_cudaExecutionCtxRecordEvent(cudaExecutionContext_t ctx, cudaEvent_t event) {
  return guarded([&] {
    constexpr const char *api = "cudaExecutionCtxRecordEvent";
    checked_context(ctx, api);
    require_pointer(event, api, "event");
    // On 12.5+ drivers an event recorded on the primary context covers its green contexts too
    // (measured on 580).
    ctx->ref.record(event_ref(event));
  });
}

cudaError_t greenctx_cudaExecutionCtxWaitEvent(cudaExecutionContext_t ctx, cudaEvent_t event) {
  return guarded([&] {
    constexpr const char *api = "cudaExecutionCtxWaitEvent";
    checked_context(ctx, api);
    require_pointer(event, api, "event");
    ctx->ref.wait(event_ref(event));
    if (!ctx->ref.is_green()) // the primary context's future work includes its green contexts'
      for (cudaExecutionContext_t g : live_green_contexts(ctx->ordinal))
        g->ref.wait(event_ref(event));
  });
}

cudaError_t greenctx_cudaExecutionCtxSynchronize(cudaExecutionContext_t ctx) {
  return guarded([&] {
    checked_context(ctx, "cudaExecutionCtxSynchronize");
    ctx->ref.synchronize();
    if (!ctx->ref.is_green())
      for (cudaExecutionContext_t g : live_green_contexts(ctx->ordinal))
        g->ref.synchronize();
  });
}

cudaError_t greenctx_cudaExecutionCtxGetDevice(int *device, cudaExecutionContext_t ctx) {
  return guarded([&] {
    require_pointer(device, "cudaExecutionCtxGetDevice", "device");
    *device = checked_context(ctx, "cudaExecutionCtxGetDevice")->ordinal;
  });
}

cudaError_t greenctx_cudaExecutionCtxGetId(cudaExecutionContext_t ctx, unsigned long long *ctxId) {
  return guarded([&] {
    require_pointer(ctxId, "cudaExecutionCtxGetId", "ctxId");
    *ctxId = checked_context(ctx, "cudaExecutionCtxGetId")->id;
  });
}

cudaError_t greenctxExecutionCtxGetWorkqueueStatus(cudaExecutionContext_t ctx,
                                                   cudaDevWorkqueueConfigResource *config,
                                                   int *provisioned) {
  return guarded([&] {
    constexpr const char *api = "greenctxExecutionCtxGetWorkqueueStatus";
    require_pointer(provisioned, api, "provisioned");
    checked_context(ctx, api);
    if (config)
      *config = workqueue_config_of(ctx);
    // A 13.1 driver gets the configuration with the SMs; below, every context shares the
    // device's CUDA_DEVICE_MAX_CONNECTIONS queues.
    *provisioned = ctx->workqueue_provisioned ? 1 : 0;
  });
}

} // extern "C"
