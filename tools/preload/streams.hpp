// SPDX-License-Identifier: Apache-2.0
// The stream semantics a green context lacks, emulated on the confined contexts:
//
// - Blocking streams. Inside a green context every stream is non-blocking (streams created with
//   flags 0 read back flags 1 and never wait for the legacy stream; measured on driver 580). The
//   library remembers which streams the program created with flags 0 and keeps CUDA's rule with
//   events: an operation on the legacy stream first waits for every blocking stream that got work
//   since the last such wait, and an operation on a blocking stream first waits for the legacy
//   stream's latest work. Their flags read 0 again.
// - The per-thread default stream (cudaStreamPerThread, nvcc --default-stream per-thread), which
//   the driver refuses inside a green context: each thread gets a stream of its own in the
//   confined context, made on first use, destroyed when the thread ends, and treated as blocking
//   (CUDA documents that it synchronizes with the legacy stream).
//
// Every wait is taken on a state the call sees at that moment, so the waits follow the order of
// the calls and cannot form a cycle. Streams being captured into a graph are left out of the
// joins (a capture must not gain nodes the program did not ask for).
#pragma once

#include "contexts.hpp"

namespace greenctx::preload {

/// A stream the program created with flags 0 in a confined context, or a per-thread stream.
struct blocking_stream {
  CUstream stream = nullptr;
  confined_context *ctx = nullptr;
  CUevent event = nullptr; ///< recorded on this stream for the legacy stream to wait on
  std::atomic<unsigned long long> seen_epoch{~0ull}; ///< legacy epoch last waited for
  std::atomic<bool> dirty{false}; ///< work since the legacy stream last waited for this stream
  bool per_thread = false;
};

/// How many blocking streams (per-thread ones included) are registered, in every context.
extern std::atomic<unsigned> blocking_streams_live;

/// Whether any operation on a legacy stream has something to keep: with no blocking stream
/// registered none has work for it to wait for, and a stream registered later waits for the legacy
/// stream before its first operation anyway (its epoch starts unseen). A legacy launch then skips
/// even asking which context is current (a driver call), which is most of what the hooks cost on
/// the legacy stream (measured on the H200, 2026-12-01; benchmarks/RESULTS.md, "greenctx run").
inline bool legacy_has_work_to_keep() {
  return blocking_streams_live.load(std::memory_order_acquire) != 0;
}

/// Registers `stream` (just created in `ctx`, current) as blocking.
void add_blocking(confined_context &ctx, CUstream stream, bool per_thread);

/// Forgets `stream` before the program destroys it (the legacy stream first waits for its work).
void remove_blocking(CUstream stream);

/// The blocking-stream record of `stream`, or null (lock-free; cached per thread).
blocking_stream *find_blocking(CUstream stream);

/// Forgets every blocking stream of `ctx` (before the context is destroyed).
void forget_streams(confined_context &ctx);

/// Around an operation on a blocking stream.
void before_blocking(blocking_stream &b);
void after_blocking(blocking_stream &b);

/// Around an operation on the legacy stream of `ctx` (current on the calling thread).
void before_legacy(confined_context &ctx);
inline void after_legacy(confined_context &ctx) {
  ctx.legacy_epoch.fetch_add(1, std::memory_order_acq_rel);
}

/// The calling thread's per-thread default stream in `ctx` (current), made on first use; null if
/// it cannot be made (reported).
CUstream per_thread_stream(confined_context &ctx);

} // namespace greenctx::preload
