// SPDX-License-Identifier: Apache-2.0
// The hooks of libgreenctx_preload.so and the three ways a program reaches them: as symbols
// (programs linked with -lcuda; assembler trampolines with the driver's names), through
// cuGetProcAddress (how the CUDA runtime fetches every driver function), and through dlsym (how
// the runtime finds cuGetProcAddress in libcuda.so.1).
//
// Every hook is a function of one template, instantiated per entry of hooks.def with that ABI's
// signature: it translates the per-thread default stream, keeps the legacy/blocking stream rules
// (streams.hpp) around work on a confined context, and calls the driver's own function.
#include "contexts.hpp"
#include "explain.hpp"
#include "hooks.hpp"
#include "provided.hpp"
#include "report.hpp"
#include "streams.hpp"

#include <dlfcn.h>

#include <array>
#include <cstring>
#include <tuple>
#include <type_traits>

#define GREENCTX_EXPORT extern "C" __attribute__((visibility("default")))

namespace greenctx::preload {
namespace {

enum class kind {
  submit,
  launch,
  launch_graph,
  launch_ex,
  graph_instantiate,
  implicit,
  sync,
  host_sync,
  plain,
  begin_capture,
  stream_create,
  stream_create_priority,
  stream_get_flags,
  stream_get_ctx,
  stream_get_ctx_v2,
  stream_get_green,
  stream_destroy,
  ctx_set_current,
  ctx_push_current,
  ctx_out,
  ctx_create_v2,
  ctx_create_v3,
  ctx_create_v4,
  ctx_destroy,
  primary_retain,
  primary_set_flags,
  primary_reset,
  device_attribute,
  device_resource,
  ctx_resource,
  green_resource,
  generate_desc,
  green_create,
  split_by_count,
  pointer_attribute,
  pointer_attributes,
};

// Kinds that launch kernels (the first starts the GPU phase: copies and memsets before it are
// loading, not the program's GPU work) and kinds after which the host has synchronized with the
// GPU (the last ends the phase): tools/run_protocol.hpp.
constexpr bool launches(kind k) {
  return k == kind::launch || k == kind::launch_ex || k == kind::launch_graph;
}
constexpr bool synchronizes(kind k) {
  return k == kind::sync || k == kind::host_sync || k == kind::implicit;
}

// First ABIs that cudaTypedefs.h declares only for the driver's own build; the runtime still asks
// for them.
using PFN_cuStreamBeginCapture_v10000 = CUresult(CUDAAPI *)(CUstream);
using PFN_cuDevicePrimaryCtxReset_v7000 = CUresult(CUDAAPI *)(CUdevice);

enum hook_index : std::size_t {
#define HOOK2(k, name, version, exp, exp_pt) idx_##exp,
#define HOOK1(k, name, version, exp) idx_##exp,
#include "hooks.def"
#undef HOOK1
#undef HOOK2
  hook_count
};

struct hook_info {
  const char *name;
  int version;
  void *hook;            ///< for the legacy-stream variant
  void *hook_per_thread; ///< for the per-thread variant, or null
};

// The driver's functions behind each hook: the legacy-stream and the per-thread variant (the
// same function where there is only one), fetched once.
struct real_pair {
  std::atomic<void *> legacy{nullptr};
  std::atomic<void *> per_thread{nullptr};
};
std::array<real_pair, hook_count> reals;
const std::array<hook_info, hook_count> &infos();

void load_reals() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (std::size_t i = 0; i < hook_count; ++i) {
      const hook_info &h = infos()[i];
      void *legacy = real().lookup(h.name, h.version, CU_GET_PROC_ADDRESS_LEGACY_STREAM);
      // The per-thread variants came with CUDA 7.0: asked for at an older version, the driver
      // answers with the legacy one.
      void *per_thread = real().lookup(h.name, h.version < 7000 ? 7000 : h.version,
                                       CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
      reals[i].per_thread.store(per_thread ? per_thread : legacy, std::memory_order_release);
      reals[i].legacy.store(legacy, std::memory_order_release);
    }
  });
}

template <class Fn> Fn real_fn(std::size_t i, bool per_thread) {
  void *p = (per_thread ? reals[i].per_thread : reals[i].legacy).load(std::memory_order_acquire);
  if (!p) {
    load_reals();
    p = (per_thread ? reals[i].per_thread : reals[i].legacy).load(std::memory_order_acquire);
  }
  return reinterpret_cast<Fn>(p);
}

// What one call found out about its streams.
struct call_state {
  confined_context *cur = nullptr;
  bool looked = false;
  bool have_target = false;
  CUstream target = nullptr; ///< the first stream argument, translated

  confined_context *current() {
    if (!looked) {
      cur = current_confined();
      looked = true;
    }
    return cur;
  }
};

// cudaStreamPerThread (and, in a per-thread variant, the NULL stream) in a confined context: the
// thread's own stream there. Anything else is left as it is.
template <bool PerThread> CUstream translate(CUstream s, call_state &st) {
  if (s == CU_STREAM_PER_THREAD || (PerThread && s == nullptr))
    if (confined_context *c = st.current())
      if (CUstream mine = per_thread_stream(*c))
        return mine;
  return s;
}

void not_confined(const char *what) {
  problem(std::string(what) + ": that context is not confined (it runs on all SMs)");
}

// Work or a synchronization on the call's stream (st.target), with the legacy and blocking stream
// rules kept around it.
// `driver_per_thread`: the driver's own per-thread variant is called (nothing to keep).
template <kind K, class Fn, class... A>
CUresult on_stream(Fn fn, call_state &st, bool driver_per_thread, A... a) {
  if (driver_per_thread || !st.have_target)
    return fn(a...);
  if (st.target == nullptr || st.target == CU_STREAM_LEGACY) {
    if (!legacy_has_work_to_keep())
      return fn(a...);
    confined_context *c = st.current();
    if (!c)
      return fn(a...);
    before_legacy(*c);
    const CUresult rc = fn(a...);
    if constexpr (K == kind::submit || K == kind::graph_instantiate || launches(K))
      after_legacy(*c);
    return rc;
  }
  blocking_stream *b = find_blocking(st.target);
  if (!b || K == kind::sync)
    return fn(a...);
  before_blocking(*b);
  const CUresult rc = fn(a...);
  if constexpr (K != kind::begin_capture)
    after_blocking(*b);
  return rc;
}

// CUDA's enums gain values in newer versions (CUdevResourceType 1000 and 10000 in 13.1), which
// programs built against newer headers pass: the hooks carry them as the driver does, as integers,
// so UBSan's check of enum values is off where arguments are passed on.
#define GREENCTX_ANY_ENUM_VALUE __attribute__((no_sanitize("enum")))

// The code that made this thread's current resource query (entry::call sets it).
thread_local const void *resource_caller = nullptr;

// What a hook does while the program is confined (GREENCTX_RUN_SMS or GREENCTX_RUN_SPLIT).
template <kind K, bool PerThread, class Fn, class... A>
GREENCTX_ANY_ENUM_VALUE CUresult handle_confined(std::size_t index, Fn legacy, A... a);

template <kind K, bool PerThread, class Fn, class... A>
GREENCTX_ANY_ENUM_VALUE CUresult handle(std::size_t index, A... a) {
  const Fn legacy = real_fn<Fn>(index, false);
  if (!legacy)
    return CUDA_ERROR_NOT_FOUND;
  auto args = std::tie(a...);

  // ---- the 13.1 API on older drivers (--cuda-13.1; provided.hpp), confined or not ----
  if constexpr (K == kind::device_resource || K == kind::ctx_resource ||
                K == kind::green_resource) {
    if (config().cuda_13_1) {
      std::optional<CUdevice> device;
      if constexpr (K == kind::device_resource) {
        device = std::get<0>(args);
      } else if constexpr (K == kind::ctx_resource) {
        device = device_of_context(std::get<0>(args));
      } else {
        CUcontext c = nullptr;
        if (real().from_green && real().from_green(&c, std::get<0>(args)) == CUDA_SUCCESS)
          device = device_of_context(c);
      }
      if (device)
        if (const std::optional<CUresult> wq = workqueue_resource(
                *device, std::get<1>(args), static_cast<int>(std::get<2>(args)), resource_caller))
          return *wq;
      const CUresult rc = K == kind::device_resource && config().active
                              ? handle_confined<K, PerThread, Fn, A...>(index, legacy, a...)
                              : legacy(a...);
      if (rc == CUDA_SUCCESS && device && std::get<1>(args))
        note_resource(*std::get<1>(args), *device);
      return rc;
    }
  } else if constexpr (K == kind::generate_desc) {
    CUresult refusal = CUDA_SUCCESS;
    std::optional<std::vector<CUdevResource>> expanded =
        resources_for_desc(std::get<1>(args), std::get<2>(args), &refusal);
    if (refusal != CUDA_SUCCESS)
      return refusal;
    if (expanded) { // the driver gets greenctx's groups as their pieces
      std::get<1>(args) = expanded->data();
      std::get<2>(args) = static_cast<unsigned>(expanded->size());
    }
    const CUresult rc = legacy(a...);
    if (rc == CUDA_SUCCESS && std::get<0>(args))
      note_desc(*std::get<0>(args), std::get<1>(args), std::get<2>(args));
    return rc;
  } else if constexpr (K == kind::green_create) {
    if (config().cuda_13_1) {
      // CUDA 13.1 accepts CU_GREEN_CTX_NONE (0); 13.0 drivers require the default-stream flag.
      if (std::get<3>(args) == 0)
        std::get<3>(args) = CU_GREEN_CTX_DEFAULT_STREAM;
      // The context a cluster proof made of these SMs, rather than a second one.
      if (std::get<0>(args))
        if (const std::optional<CUgreenCtx> g =
                proof_context_for(std::get<1>(args), std::get<2>(args))) {
          *std::get<0>(args) = *g;
          return CUDA_SUCCESS;
        }
    }
    return legacy(a...);
  } else if constexpr (K == kind::split_by_count) {
    if (config().cuda_13_1) {
      if (const std::optional<CUresult> refused = check_split_by_count_flags(std::get<4>(args)))
        return *refused;
      const CUresult rc = legacy(a...);
      if (rc == CUDA_SUCCESS && std::get<1>(args))
        note_split_by_count(std::get<0>(args), *std::get<1>(args), std::get<3>(args));
      return rc;
    }
    return legacy(a...);
  }
  if (!config().active) // GREENCTX_RUN_MEASURE alone: nothing changes (the call times it)
    return (PerThread ? real_fn<Fn>(index, true) : legacy)(a...);
  if constexpr (K == kind::generate_desc || K == kind::green_create || K == kind::split_by_count)
    return legacy(a...); // handled above
  else
    return handle_confined<K, PerThread, Fn, A...>(index, legacy, a...);
}

template <kind K, bool PerThread, class Fn, class... A>
GREENCTX_ANY_ENUM_VALUE CUresult handle_confined(std::size_t index, Fn legacy, A... a) {
  auto args = std::tie(a...);

  // ---- contexts ----
  if constexpr (K == kind::ctx_set_current || K == kind::ctx_push_current) {
    mark_cuda_used();
    std::get<0>(args) = substitute(std::get<0>(args));
    debug("make current %p", static_cast<void *>(std::get<0>(args)));
    return legacy(a...);
  } else if constexpr (K == kind::ctx_create_v2 || K == kind::ctx_create_v3 ||
                       K == kind::ctx_create_v4) {
    mark_cuda_used();
    constexpr std::size_t n = sizeof...(A);
    CUcontext *pctx = std::get<0>(args);
    const unsigned flags = std::get<n - 2>(args);
    const CUdevice device = std::get<n - 1>(args);
    bool special = false;
    if constexpr (K == kind::ctx_create_v3)
      special = std::get<2>(args) > 0;
    if constexpr (K == kind::ctx_create_v4)
      special = std::get<1>(args) &&
                (std::get<1>(args)->numExecAffinityParams > 0 || std::get<1>(args)->cigParams);
    if (special) {
      not_confined("cuCtxCreate with execution-affinity or CIG parameters");
      return legacy(a...);
    }
    CUresult rc = CUDA_SUCCESS;
    return create_context(pctx, flags, device, &rc) ? rc : legacy(a...);
  } else if constexpr (K == kind::ctx_destroy) {
    CUresult rc = CUDA_SUCCESS;
    return destroy_context(std::get<0>(args), &rc) ? rc : legacy(a...);
  } else if constexpr (K == kind::ctx_out) {
    // cuCtxGetCurrent, cuCtxPopCurrent: the real primary context of a confined device is never
    // handed out (docs/run-design.md, "One primary context per device").
    const CUresult rc = legacy(a...);
    if (rc == CUDA_SUCCESS && std::get<0>(args))
      *std::get<0>(args) = as_seen(*std::get<0>(args));
    return rc;
  } else if constexpr (K == kind::primary_retain) {
    // The program's primary context is the green context: the handle cuCtxGetCurrent,
    // cuStreamGetCtx and the pointer attributes give, and every call that takes it acts on it. The
    // real primary context is retained too, so that the program's releases balance.
    mark_cuda_used();
    const CUresult rc = legacy(a...);
    if (rc == CUDA_SUCCESS && std::get<0>(args)) {
      note_primary(*std::get<0>(args), std::get<1>(args));
      *std::get<0>(args) = substitute(*std::get<0>(args));
    }
    return rc;
  } else if constexpr (K == kind::device_attribute) {
    const CUresult rc = legacy(a...);
    if (rc == CUDA_SUCCESS && std::get<1>(args) == CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT &&
        std::get<0>(args))
      if (const unsigned n = confined_sm_count(std::get<2>(args)))
        *std::get<0>(args) = static_cast<int>(n);
    return rc;
  } else if constexpr (K == kind::device_resource) {
    if (std::get<2>(args) == CU_DEV_RESOURCE_TYPE_SM && std::get<1>(args) &&
        confined_resource(std::get<0>(args), std::get<1>(args)))
      return CUDA_SUCCESS;
    return legacy(a...);
  } else if constexpr (K == kind::pointer_attribute) {
    const CUresult rc = legacy(a...);
    if (rc == CUDA_SUCCESS && std::get<1>(args) == CU_POINTER_ATTRIBUTE_CONTEXT &&
        std::get<0>(args)) {
      auto *ctx = static_cast<CUcontext *>(std::get<0>(args));
      *ctx = as_seen(*ctx);
    }
    return rc;
  } else if constexpr (K == kind::pointer_attributes) {
    const CUresult rc = legacy(a...);
    if (rc == CUDA_SUCCESS && std::get<1>(args) && std::get<2>(args))
      for (unsigned i = 0; i < std::get<0>(args); ++i)
        if (std::get<1>(args)[i] == CU_POINTER_ATTRIBUTE_CONTEXT && std::get<2>(args)[i]) {
          auto *ctx = static_cast<CUcontext *>(std::get<2>(args)[i]);
          *ctx = as_seen(*ctx);
        }
    return rc;
  } else if constexpr (K == kind::host_sync) {
    return legacy(a...);
  } else if constexpr (K == kind::primary_reset) {
    if (config().confines(std::get<0>(args)))
      warning("device " + std::to_string(std::get<0>(args)) +
              "'s primary context was reset (cudaDeviceReset): the green context that stands for "
              "it is kept, with the memory the program allocated in it");
    return legacy(a...);
  } else if constexpr (K == kind::primary_set_flags) {
    const CUresult rc = legacy(a...);
    if (rc == CUDA_SUCCESS)
      primary_flags_changed(std::get<0>(args), std::get<1>(args));
    return rc;

    // ---- stream objects ----
  } else if constexpr (K == kind::stream_create || K == kind::stream_create_priority) {
    const unsigned flags = std::get<1>(args);
    confined_context *c = (flags & CU_STREAM_NON_BLOCKING) ? nullptr : current_confined();
    const CUresult rc = legacy(a...);
    if (rc == CUDA_SUCCESS && c && std::get<0>(args))
      add_blocking(*c, *std::get<0>(args), false);
    return rc;
  } else if constexpr (K == kind::stream_destroy) {
    remove_blocking(std::get<0>(args));
    return legacy(a...);

    // ---- work and queries on streams ----
  } else {
    call_state st;
    CUlaunchConfig config_copy{};
    CUDA_GRAPH_INSTANTIATE_PARAMS params_copy{};
    CUDA_GRAPH_INSTANTIATE_PARAMS *params_caller = nullptr;
    if constexpr (K == kind::launch_ex) {
      const CUlaunchConfig *&config = std::get<0>(args);
      if (config) {
        config_copy = *config;
        config_copy.hStream = translate<PerThread>(config_copy.hStream, st);
        st.target = config_copy.hStream;
        st.have_target = true;
        config = &config_copy;
      }
    } else if constexpr (K == kind::graph_instantiate) {
      // The upload stream is in the parameters, and so are two outputs (copied back below).
      CUDA_GRAPH_INSTANTIATE_PARAMS *&params = std::get<2>(args);
      if (params && (params->flags & CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD)) {
        params_caller = params;
        params_copy = *params;
        params_copy.hUploadStream = translate<PerThread>(params_copy.hUploadStream, st);
        st.target = params_copy.hUploadStream;
        st.have_target = true;
        params = &params_copy;
      }
    } else {
      auto fix = [&st](auto &x) {
        if constexpr (std::is_same_v<std::remove_reference_t<decltype(x)>, CUstream>) {
          x = translate<PerThread>(x, st);
          if (!st.have_target) {
            st.have_target = true;
            st.target = x;
          }
        }
      };
      (fix(a), ...);
    }

    if constexpr (K == kind::implicit) {
      // A synchronous copy or memset on the legacy stream (or, in the per-thread variant, on the
      // thread's stream: done on the legacy stream, which orders it after that stream's work
      // too, at the cost of also waiting for other threads' blocking streams).
      confined_context *c = st.current();
      if (!c)
        return (PerThread ? real_fn<Fn>(index, true) : legacy)(a...);
      before_legacy(*c);
      const CUresult rc = legacy(a...);
      after_legacy(*c);
      return rc;
    } else {
      // A per-thread variant whose NULL stream stayed (no confined context): the driver's own.
      const bool driver_per_thread = PerThread && st.have_target && st.target == nullptr;
      const Fn fn = driver_per_thread ? real_fn<Fn>(index, true) : legacy;
      if constexpr (K == kind::plain) {
        return fn(a...);
      } else if constexpr (K == kind::stream_get_flags) {
        const CUresult rc = fn(a...);
        if (rc == CUDA_SUCCESS && std::get<1>(args) && find_blocking(std::get<0>(args)))
          *std::get<1>(args) &= ~static_cast<unsigned>(CU_STREAM_NON_BLOCKING);
        return rc;
      } else if constexpr (K == kind::stream_get_ctx) {
        const CUresult rc = fn(a...);
        if (rc == CUDA_SUCCESS && std::get<1>(args))
          *std::get<1>(args) = as_seen(*std::get<1>(args));
        return rc;
      } else if constexpr (K == kind::stream_get_ctx_v2 || K == kind::stream_get_green) {
        // A stream of a context greenctx made is, to the program, a stream of an ordinary
        // context (its primary context, or the one cuCtxCreate gave): no green context.
        constexpr std::size_t green_at = K == kind::stream_get_green ? 1 : 2;
        const CUresult rc = fn(a...);
        CUgreenCtx *green = std::get<green_at>(args);
        if (rc != CUDA_SUCCESS || !green)
          return rc;
        if (confined_context *c = find_green(*green)) {
          *green = nullptr;
          if constexpr (K == kind::stream_get_ctx_v2)
            if (std::get<1>(args))
              *std::get<1>(args) = c->ctx.load();
        } else if constexpr (K == kind::stream_get_ctx_v2) {
          if (std::get<1>(args))
            *std::get<1>(args) = as_seen(*std::get<1>(args));
        }
        return rc;
      } else {
        const CUresult rc = on_stream<K>(fn, st, driver_per_thread, a...);
        if constexpr (K == kind::graph_instantiate) {
          if (params_caller) {
            params_caller->hErrNode_out = params_copy.hErrNode_out;
            params_caller->result_out = params_copy.result_out;
          }
        } else if constexpr (K == kind::launch_ex) {
          if (rc == CUDA_ERROR_INVALID_CLUSTER_SIZE && std::get<0>(args))
            explain_cluster_refusal(std::get<1>(args), *std::get<0>(args));
        } else if constexpr (K == kind::launch) {
          if (rc == CUDA_ERROR_INVALID_CLUSTER_SIZE) {
            CUlaunchConfig launch{};
            launch.gridDimX = std::get<1>(args);
            launch.gridDimY = std::get<2>(args);
            launch.gridDimZ = std::get<3>(args);
            launch.blockDimX = std::get<4>(args);
            launch.blockDimY = std::get<5>(args);
            launch.blockDimZ = std::get<6>(args);
            launch.sharedMemBytes = std::get<7>(args);
            launch.hStream = std::get<8>(args);
            explain_cluster_refusal(std::get<0>(args), launch);
          }
        }
        return rc;
      }
    }
  }
}

template <std::size_t I, kind K, class Fn> struct entry;
template <std::size_t I, kind K, class... A> struct entry<I, K, CUresult(CUDAAPI *)(A...)> {
  using fn = CUresult(CUDAAPI *)(A...);
  template <bool PerThread> GREENCTX_ANY_ENUM_VALUE static CUresult CUDAAPI call(A... a) {
    // Reached by a jump (the trampolines) or called directly (cuGetProcAddress): the return
    // address is the caller's, which the resource queries of --cuda-13.1 look at.
    if constexpr (K == kind::device_resource || K == kind::ctx_resource ||
                  K == kind::green_resource)
      resource_caller = __builtin_return_address(0);
    // The GPU phase of the process (tools/run_protocol.hpp), confined or only timed.
    if constexpr (launches(K))
      note_work();
    const CUresult rc = handle<K, PerThread, fn, A...>(I, a...);
    if constexpr (synchronizes(K))
      note_sync();
    // With GREENCTX_PRELOAD_DEBUG, every failing call (but a query's "not ready") is traced;
    // with GREENCTX_PRELOAD_DEBUG=calls, every call.
    if (config().trace_calls ||
        (rc != CUDA_SUCCESS && rc != CUDA_ERROR_NOT_READY && config().debug)) {
      const void *stream = nullptr; // the program's first stream argument, as it passed it
      bool has_stream = false;
      [[maybe_unused]] auto look = [&](auto x) {
        if constexpr (std::is_same_v<decltype(x), CUstream>)
          if (!has_stream) {
            has_stream = true;
            stream = static_cast<const void *>(x);
          }
      };
      (look(a), ...);
      char on[40] = "";
      if (has_stream)
        std::snprintf(on, sizeof on, " on stream %p", stream);
      debug("%s (ABI %d%s)%s returned %d", infos()[I].name, infos()[I].version,
            PerThread ? ", per-thread" : "", on, static_cast<int>(rc));
    }
    return rc;
  }
};

// Macro arguments that are not pasted or stringified are expanded first, and cuda.h defines many
// driver names as macros (cuCtxCreate is cuCtxCreate_v4): every use of a name below is pasted or
// stringified in the HOOK macros themselves.
#define GREENCTX_ENTRY(k, pfn, index) entry<index, kind::k, pfn>

const std::array<hook_info, hook_count> &infos() {
  static const std::array<hook_info, hook_count> table = {{
#define HOOK2(k, name, version, exp, exp_pt)                                                       \
  {#name, version,                                                                                 \
   reinterpret_cast<void *>(                                                                       \
       &GREENCTX_ENTRY(k, PFN_##name##_v##version, idx_##exp)::template call<false>),              \
   reinterpret_cast<void *>(                                                                       \
       &GREENCTX_ENTRY(k, PFN_##name##_v##version, idx_##exp)::template call<true>)},
#define HOOK1(k, name, version, exp)                                                               \
  {#name, version,                                                                                 \
   reinterpret_cast<void *>(                                                                       \
       &GREENCTX_ENTRY(k, PFN_##name##_v##version, idx_##exp)::template call<false>),              \
   nullptr},
#include "hooks.def"
#undef HOOK1
#undef HOOK2
  }};
  return table;
}

} // namespace
} // namespace greenctx::preload

// ---- the symbols: a jump through a constant pointer to the hook, under the driver's name
// ---------

// The pointers the trampolines jump through (constant-initialised: valid before any constructor).
// (C linkage: the names are unmangled, wherever they are declared.)
#define GREENCTX_JUMP(jump, target)                                                                \
  extern "C" __attribute__((visibility("hidden"), used)) decltype(target) const jump = target;
#define HOOK2(k, name, version, exp, exp_pt)                                                       \
  GREENCTX_JUMP(greenctx_jump_##exp,                                                               \
                &GREENCTX_ENTRY(k, PFN_##name##_v##version, idx_##exp)::call<false>)               \
  GREENCTX_JUMP(greenctx_jump_##exp_pt,                                                            \
                &GREENCTX_ENTRY(k, PFN_##name##_v##version, idx_##exp)::call<true>)
#define HOOK1(k, name, version, exp)                                                               \
  GREENCTX_JUMP(greenctx_jump_##exp,                                                               \
                &GREENCTX_ENTRY(k, PFN_##name##_v##version, idx_##exp)::call<false>)
namespace greenctx::preload {
#include "hooks.def"
} // namespace greenctx::preload
#undef HOOK1
#undef HOOK2

// The trampolines: the exported name and a hidden alias of it (greenctx_tramp_NAME) that C++ can
// take the address of without clashing with cuda.h's declaration of NAME.
#if defined(__x86_64__)
#define GREENCTX_TRAMPOLINE(sym)                                                                   \
  __asm__(".text\n.globl " sym "\n.type " sym ",@function\n.globl greenctx_tramp_" sym             \
          "\n.hidden greenctx_tramp_" sym "\n.p2align 4\n" sym ":\ngreenctx_tramp_" sym            \
          ":\n\tjmp *greenctx_jump_" sym "(%rip)\n.size " sym ",.-" sym "\n");
#elif defined(__aarch64__)
#define GREENCTX_TRAMPOLINE(sym)                                                                   \
  __asm__(".text\n.globl " sym "\n.type " sym ",%function\n.globl greenctx_tramp_" sym             \
          "\n.hidden greenctx_tramp_" sym "\n.p2align 4\n" sym ":\ngreenctx_tramp_" sym            \
          ":\n\tadrp x16, greenctx_jump_" sym "\n\tldr x16, [x16, :lo12:greenctx_jump_" sym        \
          "]\n\tbr x16\n.size " sym ",.-" sym "\n");
#else
#error "libgreenctx_preload: trampolines are written for x86-64 and AArch64 only"
#endif
#define HOOK2(k, name, version, exp, exp_pt) GREENCTX_TRAMPOLINE(#exp) GREENCTX_TRAMPOLINE(#exp_pt)
#define HOOK1(k, name, version, exp) GREENCTX_TRAMPOLINE(#exp)
#include "hooks.def"
#undef HOOK1
#undef HOOK2

#define HOOK2(k, name, version, exp, exp_pt)                                                       \
  extern "C" void greenctx_tramp_##exp();                                                          \
  extern "C" void greenctx_tramp_##exp_pt();
#define HOOK1(k, name, version, exp) extern "C" void greenctx_tramp_##exp();
#include "hooks.def"
#undef HOOK1
#undef HOOK2

namespace greenctx::preload {
namespace {

// The exported name of every trampoline, for dlsym.
struct export_entry {
  const char *name;
  void *address;
};
const export_entry exports[] = {
#define HOOK2(k, name, version, exp, exp_pt)                                                       \
  {#exp, reinterpret_cast<void *>(&greenctx_tramp_##exp)},                                         \
      {#exp_pt, reinterpret_cast<void *>(&greenctx_tramp_##exp_pt)},
#define HOOK1(k, name, version, exp) {#exp, reinterpret_cast<void *>(&greenctx_tramp_##exp)},
#include "hooks.def"
#undef HOOK1
#undef HOOK2
};

CUresult hooked_get_proc_v2(const char *, void **, int, cuuint64_t,
                            CUdriverProcAddressQueryResult *);
CUresult hooked_get_proc(const char *, void **, int, cuuint64_t);

// Replaces what cuGetProcAddress found by its hook, where the driver's function is the very one
// a hook was made for (so the ABI matches).
void hook_result(const char *symbol, void **pfn, int version, cuuint64_t flags, CUresult rc) {
  mark_cuda_used();
  if (rc != CUDA_SUCCESS || !pfn || !*pfn || !symbol)
    return;
  if (std::strcmp(symbol, "cuGetProcAddress") == 0) {
    *pfn = version >= 12000 ? reinterpret_cast<void *>(&hooked_get_proc_v2)
                            : reinterpret_cast<void *>(&hooked_get_proc);
    return;
  }
  if (config().cuda_13_1 && std::strcmp(symbol, "cuDriverGetVersion") == 0) {
    *pfn = reinterpret_cast<void *>(&driver_version_for_caller);
    return;
  }
  if (!config().hooks() || symbol[0] != 'c' || symbol[1] != 'u')
    return;
  load_reals();
  bool known = false;
  for (std::size_t i = 0; i < hook_count; ++i) {
    const hook_info &h = infos()[i];
    if (std::strcmp(h.name, symbol) != 0)
      continue;
    known = true;
    if (*pfn == reals[i].legacy.load()) {
      *pfn = h.hook;
    } else if (h.hook_per_thread && *pfn == reals[i].per_thread.load()) {
      *pfn = h.hook_per_thread;
    } else {
      continue;
    }
    debug("cuGetProcAddress(%s, %d): hooked", symbol, version);
    return;
  }
  if (!known) { // the debug trace lists what reaches the driver unhooked
    debug("cuGetProcAddress(%s, %d): not hooked", symbol, version);
    return;
  }
  debug("cuGetProcAddress(%s, %d, flags %llu) = %p: no hook of that ABI", symbol, version,
        static_cast<unsigned long long>(flags), *pfn);
  // looked up, perhaps never called: said, but not an error under --strict
  warning(std::string(symbol) + " at CUDA version " + std::to_string(version) +
          " is an ABI greenctx does not know: calls through it bypass the per-thread and "
          "blocking stream emulation");
}

// An entry point the driver lacks and greenctx provides (--cuda-13.1): found.
// What the driver found, hooked; or, where it found nothing, an entry point greenctx provides
// (--cuda-13.1, provided.hpp).
CUresult finish_lookup(const char *symbol, void **pfn, int version, cuuint64_t flags, CUresult rc,
                       CUdriverProcAddressQueryResult *found) {
  if (rc == CUDA_SUCCESS || !pfn) {
    hook_result(symbol, pfn, version, flags, rc);
    return rc;
  }
  void *mine = provided_entry(symbol, version, flags);
  if (!mine)
    return rc;
  mark_cuda_used();
  *pfn = mine;
  if (found)
    *found = CU_GET_PROC_ADDRESS_SUCCESS;
  debug("cuGetProcAddress(%s, %d): provided by greenctx", symbol, version);
  return CUDA_SUCCESS;
}

CUresult hooked_get_proc_v2(const char *symbol, void **pfn, int version, cuuint64_t flags,
                            CUdriverProcAddressQueryResult *found) {
  if (!real().get_proc_v2)
    return CUDA_ERROR_NOT_INITIALIZED;
  return finish_lookup(symbol, pfn, version, flags,
                       real().get_proc_v2(symbol, pfn, version, flags, found), found);
}

CUresult hooked_get_proc(const char *symbol, void **pfn, int version, cuuint64_t flags) {
  if (!real().get_proc)
    return CUDA_ERROR_NOT_INITIALIZED;
  return finish_lookup(symbol, pfn, version, flags, real().get_proc(symbol, pfn, version, flags),
                       nullptr);
}

} // namespace

void *program_lookup(const char *name, int version, unsigned long long flags) {
  void *p = nullptr;
  return hooked_get_proc_v2(name, &p, version, flags, nullptr) == CUDA_SUCCESS ? p : nullptr;
}

} // namespace greenctx::preload

GREENCTX_EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version,
                                             cuuint64_t flags,
                                             CUdriverProcAddressQueryResult *found) {
  return greenctx::preload::hooked_get_proc_v2(symbol, pfn, version, flags, found);
}

GREENCTX_EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int version,
                                          cuuint64_t flags) {
  return greenctx::preload::hooked_get_proc(symbol, pfn, version, flags);
}

// dlsym: the CUDA runtime looks cuGetProcAddress up in libcuda.so.1 by handle, which LD_PRELOAD
// alone does not reach. Only names the real library has are answered with a hook. Nothing here
// may load the driver: dlsym runs while libraries are being opened.
GREENCTX_EXPORT void *dlsym(void *handle, const char *name) {
  using namespace greenctx::preload;
  void *found = real_dlsym() ? real_dlsym()(handle, name) : nullptr;
  if (!name || name[0] != 'c' || name[1] != 'u')
    return found;
  if (config().cuda_13_1) { // the version, and the 13.1 names the driver lacks (provided.hpp)
    if (found && std::strcmp(name, "cuDriverGetVersion") == 0)
      return reinterpret_cast<void *>(&driver_version_for_caller);
    if (!found)
      if (void *mine = provided_symbol(name)) // decides when called: nothing is loaded here
        return mine;
  }
  if (!found)
    return found;
  if (std::strcmp(name, "cuGetProcAddress_v2") == 0)
    return reinterpret_cast<void *>(&cuGetProcAddress_v2);
  if (std::strcmp(name, "cuGetProcAddress") == 0)
    return reinterpret_cast<void *>(&cuGetProcAddress);
  for (const export_entry &e : exports)
    if (std::strcmp(name, e.name) == 0)
      return e.address;
  return found;
}
