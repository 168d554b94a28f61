// SPDX-License-Identifier: Apache-2.0
// Streams: `stream_ref` refers to a CUstream, `stream` owns one.
#pragma once

#include "greenctx/cxx_standard.hpp"

#include "greenctx/core/execution_context.hpp"
#include "greenctx/plan/resource.hpp"

#include <cuda.h>

#include <cstdint>

namespace greenctx {

class event_ref;

/// A non-owning, trivially copyable reference to a stream. Compares by handle.
/// Thread safety: as the driver's stream calls: any thread, concurrently.
class stream_ref {
public:
  stream_ref() = delete;
  explicit stream_ref(CUstream handle) noexcept : handle_(handle) {}
  stream_ref(int) = delete;            // 0 would mean the legacy NULL stream; say so explicitly
  stream_ref(std::nullptr_t) = delete; // likewise

  CUstream native_handle() const noexcept { return handle_; }

  /// Blocks until all work on the stream has finished.
  void synchronize() const;
  /// True when all work on the stream has finished.
  bool ready() const;
  /// Makes later work on this stream wait for `e`.
  void wait(event_ref e) const;
  int priority() const;
  unsigned flags() const;
  std::uint64_t id() const;

  /// The execution context the stream belongs to (cuStreamGetCtx_v2, or cuStreamGetGreenCtx on
  /// 12.4 drivers).
  execution_context_ref context() const;
  /// The SMs the stream's kernels may use: those of its context.
  sm_resource sms() const;

  friend bool operator==(stream_ref a, stream_ref b) noexcept { return a.handle_ == b.handle_; }

private:
  CUstream handle_;
};

/// Owns a stream; destroys it in the destructor (cuStreamDestroy, which does not wait: pending
/// work still completes). Move-only; moved-from streams are null (native_handle() == nullptr).
class stream : public stream_ref {
public:
  stream() noexcept : stream_ref(CUstream{}) {}
  stream(stream &&other) noexcept;
  stream &operator=(stream &&other) noexcept;
  stream(const stream &) = delete;
  stream &operator=(const stream &) = delete;
  ~stream();

  static stream from_native_handle(CUstream handle) noexcept { return stream(handle); }
  /// Gives up ownership without destroying; returns the handle.
  CUstream release() noexcept;

private:
  explicit stream(CUstream handle) noexcept : stream_ref(handle) {}
  friend class execution_context_ref;
};

} // namespace greenctx
