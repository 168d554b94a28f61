// SPDX-License-Identifier: Apache-2.0
// What the compat layer has handed out, for the life of the process: the devices it opened (each
// with its primary execution context), the execution contexts it made or met, and the streams it
// made.
#pragma once

#include "compat/handles.hpp"
#include "greenctx/core/device.hpp"
#include "greenctx/core/stream.hpp"

#include <cstdint>
#include <memory>
#include <vector>

namespace greenctx::compat {

/// The device of runtime ordinal `ordinal`, opened once and kept for the process (its primary
/// context stays retained). Throws CUDA_ERROR_INVALID_DEVICE for a bad ordinal.
const device &device_at(int ordinal, const char *api);

/// The ordinal of a driver device handle.
int ordinal_of(CUdevice dev);

/// The primary execution context of `ordinal`.
cudaExecutionContext_t primary_context(int ordinal, const char *api);

/// Checks a context handle: not null, handed out by greenctx (checked by value before it is read),
/// not destroyed. Throws.
cudaExecutionContext_t checked_context(cudaExecutionContext_t ctx, const char *api);

/// Keeps a descriptor made by cudaDevResourceGenerateDesc for the life of the process (13.1 has
/// no call that destroys one) and returns its handle.
cudaDevResourceDesc_t keep_descriptor(std::unique_ptr<greenctx_resource_desc> desc);

/// The descriptor behind a handle cudaDevResourceGenerateDesc returned. Throws
/// CUDA_ERROR_INVALID_VALUE for null and for any other value (forged, stray, another library's),
/// without reading through it.
const greenctx_resource_desc &checked_descriptor(cudaDevResourceDesc_t handle, const char *api);

/// A fresh execution-context id.
std::uint64_t next_context_id();

/// The green contexts of `ordinal` that are alive (for the primary context's record, wait and
/// synchronize on drivers that do not cover them).
std::vector<cudaExecutionContext_t> live_green_contexts(int ordinal);

/// Adds a green context made by cudaGreenCtxCreate to its device's list and to the contexts
/// known by driver context.
void register_green_context(cudaExecutionContext_t ctx);

/// Remembers `ctx` by its driver context, so that streams and graph nodes of it map back to it.
void remember(cudaExecutionContext_t ctx);

/// The execution context greenctx made or met for driver context `ctx`, or null.
cudaExecutionContext_t known_context(CUcontext ctx);

/// The execution context of `ref`: greenctx's, a device's primary context, or a green context
/// made elsewhere (met for the first time: wrapped without ownership). Throws
/// CUDA_ERROR_NOT_SUPPORTED for a context made with cuCtxCreate.
cudaExecutionContext_t context_for(const execution_context_ref &ref, const char *api);

/// Remembers a stream made by cudaExecutionCtxStreamCreate as belonging to `owner`.
void register_stream(stream_ref stream, cudaExecutionContext_t owner);

/// The execution context of a stream (greenctx's, or the one the driver reports); throws
/// cudaErrorStreamDetached (917) for streams of a destroyed context.
cudaExecutionContext_t context_of_stream(cudaStream_t stream, const char *api);

} // namespace greenctx::compat
