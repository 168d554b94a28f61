// SPDX-License-Identifier: Apache-2.0
// The CUDA 13.1 green-context entry points, provided on older drivers (greenctx run --cuda-13.1):
// a table of their own, apart from the hooks, which only ever replace a function the driver has.
//
// - cuDevSmResourceSplit (ABI 13010): greenctx's planner over split-by-count and intermediate
//   green contexts, with the compat layer's checks, cluster proofs and advice. A group of one
//   driver piece is that piece, as the driver gave it; a group of several is a resource greenctx
//   tags, which the hook of cuDevResourceGenerateDesc expands into its pieces.
// - cuStreamGetDevResource (13010, and its per-thread variant): the resource of the stream's
//   context or green context, as CUDA 13.1 runtimes compute it on drivers without it.
// - cuLaunchHostFunc at ABI 13010 (its syncMode): the older ABI, which a runtime told 13010
//   no longer asks for.
// - The work-queue resource types (WorkqueueConfig 1000, Workqueue 10000) of devices, contexts,
//   green contexts and streams: answered as the compat layer answers them (not provisioned).
// - cuDriverGetVersion: 13010 for callers that know the 13.1 API (caller.hpp), the driver's own
//   version for everyone else.
// Where the driver has an entry point itself, it is used and nothing is provided.
#pragma once

#include <cuda.h>

#include <optional>
#include <vector>

namespace greenctx::preload {

/// The provided entry points' types (13.0 headers have none: the group parameters are bytes, the
/// resource type an integer).
using split_fn = CUresult(CUDAAPI *)(CUdevResource *, unsigned, const CUdevResource *,
                                     CUdevResource *, unsigned, void *);
using stream_resource_fn = CUresult(CUDAAPI *)(CUstream, CUdevResource *, int);
using host_func_fn = CUresult(CUDAAPI *)(CUstream, CUhostFn, void *, unsigned);

/// The ABI version the 13.1 entry points came with, and the version reported to callers that
/// know them.
inline constexpr int cuda_13_1 = 13010;

/// Whether greenctx provides the 13.1 entry points in this process: --cuda-13.1, on a driver from
/// 12.4 up that lacks them. Loads the driver.
bool provides_cuda_13_1();

/// cuLaunchHostFunc_v2's syncMode on a driver without it: a refusal (said on stderr) for a mode
/// 13.1 does not have, else nothing (CU_HOST_TASK_SPINWAIT runs as blocking, said once).
std::optional<CUresult> check_host_sync_mode(unsigned sync_mode);

/// With --cuda-13.1 on a driver without 13.1: the refusal of cuDevSmResourceSplitByCount flags
/// 13.1 does not have (said on stderr); else nothing.
std::optional<CUresult> check_split_by_count_flags(unsigned flags);

/// Remembers the results of one cuDevSmResourceSplitByCount call as one split (a descriptor
/// combines resources of one split call only).
void note_split_by_count(const CUdevResource *result, unsigned count,
                         const CUdevResource *remaining);

/// Remembers the resources (as given to the driver) of a descriptor the driver made.
void note_desc(CUdevResourceDesc desc, const CUdevResource *resources, unsigned count);

/// The green context a cluster proof made of exactly the SMs of `desc` on `device`, handed over
/// to cuGreenCtxCreate instead of a second context of the same SMs; null when there is none.
std::optional<CUgreenCtx> proof_context_for(CUdevResourceDesc desc, CUdevice device);

/// The entry point greenctx provides for `symbol` at ABI `version` (`flags`: cuGetProcAddress's),
/// or null: with --cuda-13.1 only, and only where the driver lacks it.
void *provided_entry(const char *symbol, int version, unsigned long long flags);

/// This library's exported function of a provided entry point's symbol name (cuDevSmResourceSplit,
/// cuStreamGetDevResource[_ptsz], cuLaunchHostFunc_v2[_ptsz]), or null: for dlsym on a driver that
/// lacks the name. It uses the driver's own function where there is one. Loads nothing.
void *provided_symbol(const char *name);

/// cuDriverGetVersion as the caller should see it (the dlsym and cuGetProcAddress routes hand out
/// this function; the caller is read from its return address).
CUresult CUDAAPI driver_version_for_caller(int *version);

/// The driver version told to code at `caller`.
CUresult driver_version_for(const void *caller, int *version);

/// With --cuda-13.1, on a driver without work-queue resources: the answer to a request for the
/// work-queue resource `type` of `device` (1000 or 10000) made by code at `caller`; null for any
/// other type, and for a CUDA runtime linked into its program statically (out of reach: its
/// cudaStreamGetDevResource asks the stream's context below 13.1, where 13.1 refuses the type, so
/// it keeps the driver's own answer, as without greenctx).
std::optional<CUresult> workqueue_resource(CUdevice device, CUdevResource *out, int type,
                                           const void *caller);

/// Remembers that `r`, an SM resource the driver gave, is of `device` (a split names no device).
void note_resource(const CUdevResource &r, CUdevice device);

/// The device of the context `ctx` (null when the driver cannot tell).
std::optional<CUdevice> device_of_context(CUcontext ctx);

/// cuDevResourceGenerateDesc's resources with greenctx's groups expanded into their pieces and
/// work-queue resources left out (they are not provisioned below 13.1). Null when nothing needs
/// changing; a refusal's code in *refusal (then said on stderr): resources of different split
/// calls or co-scheduled counts, or more than one work-queue resource, as CUDA 13.1 refuses them.
std::optional<std::vector<CUdevResource>> resources_for_desc(const CUdevResource *resources,
                                                             unsigned count, CUresult *refusal);

} // namespace greenctx::preload
