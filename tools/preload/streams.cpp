// SPDX-License-Identifier: Apache-2.0
#include "streams.hpp"

#include "report.hpp"

#include <algorithm>
#include <unordered_map>

namespace greenctx::preload {
namespace {

std::mutex map_mutex;
std::unordered_map<CUstream, blocking_stream *> &stream_map() {
  static auto *m = new std::unordered_map<CUstream, blocking_stream *>;
  return *m;
}
std::vector<blocking_stream *> &free_records() {
  static auto *v = new std::vector<blocking_stream *>;
  return *v;
}
// Changes whenever a blocking stream is added or removed: the per-thread caches start again.
std::atomic<unsigned long long> map_generation{1};

bool capturing(CUstream s) {
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  return real().stream_is_capturing && real().stream_is_capturing(s, &status) == CUDA_SUCCESS &&
         status != CU_STREAM_CAPTURE_STATUS_NONE;
}

// The legacy stream of `ctx` (current) waits for the work `b` has so far. ctx.mutex is held.
void legacy_waits_for(blocking_stream &b) {
  real().event_record(b.event, b.stream);
  real().stream_wait_event(nullptr, b.event, 0);
}

} // namespace

std::atomic<unsigned> blocking_streams_live{0};

namespace {

// Takes `b` out of its context's list and the map; the caller holds map_mutex.
void unlink_locked(blocking_stream &b) {
  confined_context &ctx = *b.ctx;
  {
    std::lock_guard lock(ctx.mutex);
    if (b.dirty.exchange(false) && !capturing(b.stream)) {
      scoped_current in(ctx.ctx.load());
      legacy_waits_for(b);
    }
    ctx.streams.erase(std::remove(ctx.streams.begin(), ctx.streams.end(), &b), ctx.streams.end());
  }
  stream_map().erase(b.stream);
  blocking_streams_live.fetch_sub(1, std::memory_order_acq_rel);
  map_generation.fetch_add(1, std::memory_order_acq_rel);
}

void recycle(blocking_stream &b) {
  if (b.event)
    real().event_destroy(b.event);
  b.stream = nullptr;
  b.event = nullptr;
  free_records().push_back(&b);
}

// The per-thread default streams of one thread, destroyed when it ends.
struct thread_streams {
  struct entry {
    confined_context *ctx;
    CUstream stream;
  };
  std::vector<entry> entries;
  ~thread_streams() {
    for (const entry &e : entries)
      if (find_blocking(e.stream)) {
        remove_blocking(e.stream);
        real().stream_destroy(e.stream);
      }
  }
};

} // namespace

void add_blocking(confined_context &ctx, CUstream stream, bool per_thread) {
  std::lock_guard lock(map_mutex);
  blocking_stream *b = nullptr;
  if (!free_records().empty()) {
    b = free_records().back();
    free_records().pop_back();
  } else {
    b = new blocking_stream;
  }
  b->stream = stream;
  b->ctx = &ctx;
  b->per_thread = per_thread;
  b->seen_epoch.store(~0ull);
  b->dirty.store(false);
  if (real().event_create(&b->event, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS) {
    b->event = nullptr;
    problem("could not create the event that makes a blocking stream wait for the legacy stream: "
            "that stream behaves as non-blocking");
    recycle(*b);
    return;
  }
  {
    std::lock_guard ctx_lock(ctx.mutex);
    ctx.streams.push_back(b);
  }
  blocking_streams_live.fetch_add(1, std::memory_order_acq_rel);
  auto [it, inserted] = stream_map().emplace(stream, b);
  if (!inserted) { // a handle the driver reused while an old record stayed: replace it
    blocking_stream *old = it->second;
    unlink_locked(*old);
    recycle(*old);
    stream_map().emplace(stream, b);
  }
  map_generation.fetch_add(1, std::memory_order_acq_rel);
  (per_thread ? stats().per_thread_streams : stats().blocking_streams)
      .fetch_add(1, std::memory_order_relaxed);
  debug("%s stream %p in context %p", per_thread ? "per-thread" : "blocking",
        static_cast<void *>(stream), static_cast<void *>(ctx.ctx.load()));
}

void remove_blocking(CUstream stream) {
  std::lock_guard lock(map_mutex);
  auto it = stream_map().find(stream);
  if (it == stream_map().end())
    return;
  blocking_stream *b = it->second;
  unlink_locked(*b);
  recycle(*b);
}

void forget_streams(confined_context &ctx) {
  std::lock_guard lock(map_mutex);
  std::vector<blocking_stream *> streams;
  {
    std::lock_guard ctx_lock(ctx.mutex);
    streams.swap(ctx.streams);
  }
  for (blocking_stream *b : streams) {
    stream_map().erase(b->stream);
    blocking_streams_live.fetch_sub(1, std::memory_order_acq_rel);
    recycle(*b);
  }
  map_generation.fetch_add(1, std::memory_order_acq_rel);
}

blocking_stream *find_blocking(CUstream stream) {
  // A few recent answers per thread, negative ones included (most streams a program launches on
  // are non-blocking ones, or the legacy stream), valid while the map does not change.
  constexpr int cache_size = 8;
  struct cache {
    CUstream stream[cache_size] = {};
    blocking_stream *found[cache_size] = {};
    int next = 0;
    unsigned long long generation = 0;
  };
  thread_local cache c;
  const unsigned long long g = map_generation.load(std::memory_order_acquire);
  if (c.generation != g) {
    c = cache{};
    c.generation = g;
  } else {
    for (int i = 0; i < cache_size; ++i)
      if (c.stream[i] == stream && stream)
        return c.found[i];
  }
  blocking_stream *found = nullptr;
  {
    std::lock_guard lock(map_mutex);
    auto it = stream_map().find(stream);
    if (it != stream_map().end())
      found = it->second;
  }
  c.stream[c.next] = stream;
  c.found[c.next] = found;
  c.next = (c.next + 1) % cache_size;
  return found;
}

void before_blocking(blocking_stream &b) {
  confined_context &ctx = *b.ctx;
  const unsigned long long epoch = ctx.legacy_epoch.load(std::memory_order_acquire);
  if (b.seen_epoch.load(std::memory_order_relaxed) == epoch || capturing(b.stream))
    return;
  scoped_current in(ctx.ctx.load());
  std::lock_guard lock(ctx.mutex); // the legacy event is shared by the context's streams
  real().event_record(ctx.legacy_event, nullptr);
  real().stream_wait_event(b.stream, ctx.legacy_event, 0);
  b.seen_epoch.store(epoch, std::memory_order_relaxed);
}

void after_blocking(blocking_stream &b) {
  // Sequentially consistent, with before_legacy: a legacy operation that comes after this one
  // either sees any_dirty or sees b.dirty while it scans.
  if (!b.dirty.load())
    b.dirty.store(true);
  if (!b.ctx->any_dirty.load())
    b.ctx->any_dirty.store(true);
}

void before_legacy(confined_context &ctx) {
  // A join in progress on another thread may have taken the dirty flags this operation must
  // wait for, without having made the legacy stream wait yet: then wait for that join to finish
  // (ctx.mutex). Measured on the H200 before this: a synchronous cudaMemcpy after a kernel on
  // the per-thread stream read the old value in 3 of 27 runs.
  if (!ctx.any_dirty.load() && ctx.joining.load() == 0)
    return;
  ctx.joining.fetch_add(1);
  {
    std::lock_guard lock(ctx.mutex);
    if (ctx.any_dirty.exchange(false))
      for (blocking_stream *b : ctx.streams) {
        if (!b->dirty.exchange(false))
          continue;
        if (capturing(b->stream)) { // not now; keep it for a later legacy operation
          b->dirty.store(true);
          ctx.any_dirty.store(true);
          continue;
        }
        legacy_waits_for(*b);
      }
  }
  ctx.joining.fetch_sub(1);
}

CUstream per_thread_stream(confined_context &ctx) {
  thread_local thread_streams mine;
  for (auto it = mine.entries.begin(); it != mine.entries.end(); ++it) {
    if (it->ctx != &ctx)
      continue;
    if (blocking_stream *b = find_blocking(it->stream); b && b->ctx == &ctx && b->per_thread)
      return it->stream;
    mine.entries.erase(it); // its context was destroyed since
    break;
  }
  CUstream s = nullptr;
  if (real().stream_create(&s, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS) {
    problem("could not create a per-thread default stream in the green context: "
            "cudaStreamPerThread fails on that thread");
    return nullptr;
  }
  add_blocking(ctx, s, true);
  mine.entries.push_back({&ctx, s});
  return s;
}

} // namespace greenctx::preload
