// SPDX-License-Identifier: Apache-2.0
// A pool of SM layouts on one device, made once, switched at run time without a driver call.
//
// Re-creating green contexts to repartition a GPU is not viable on driver 580: cuGreenCtxCreate
// costs 1.1-1.6 ms and every create/destroy cycle leaks about 4 MiB of device memory (measured).
// A pool makes every layout it may need up front ("16,rest", "64,rest", "all"), each with its
// green contexts and streams, and switching the layout in use is one atomic store.
//
// Sharing: partitions of different layouts with the same SMs (descriptors with equal non-zero
// content_id(), i.e. byte-identical split pieces) share one green context and one set of
// streams, and every whole-device partition ("all", "rest" alone) shares one green context over
// all SMs. So that equal partitions at the same place in two layouts are the same pieces, every
// layout is split into pieces of one size (pool_piece_size: "16,rest" beside "16,8,rest" is two
// pieces of 8); a layout the driver cannot make of them keeps its own. stats().contexts says how
// many the pool made.
//
// "all" is a green context over every SM, not the primary context: its streams behave as the
// other layouts' (non-blocking, never ordered behind the legacy NULL stream), context-wide
// record/wait work the same way, and each partition's context() is a green context.
//
// Work already submitted when the layout changes finishes where it runs: a kernel stays on the
// SMs of the stream it was launched on, and streams of the previous layout keep their queues. It
// may therefore still occupy SMs that the new layout gives to another partition until it ends.
// drain() orders the new layout's work after it (on the device, without blocking the host);
// synchronize() waits for it on the host.
//
// Thread safety: after create() a pool is immutable except for the layout in use, an atomic.
// use(), current(), current_index(), drain(), synchronize(), the lookups and stats() may be
// called from any number of threads at once. Streams are the driver's: any thread may launch on
// any of them concurrently. A thread that reads current() keeps a reference that stays valid
// (layouts are never destroyed while the pool lives) even if another thread switches meanwhile:
// its launches go to the layout it read, never to a mix. The pool must not be moved or destroyed
// while another thread uses it.
#pragma once

#include "greenctx/cxx_standard.hpp"

#include "greenctx/core/device.hpp"
#include "greenctx/core/execution_context.hpp"
#include "greenctx/core/stream.hpp"
#include "greenctx/plan/pool_plan.hpp"
#include "greenctx/plan/resource.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace greenctx {

/// How a pool is made.
struct pool_options {
  /// Streams made up front on each distinct green context (at least 1, at most 64).
  unsigned streams_per_partition = 2;
  /// Priority of those streams, clamped to the device's range (lower numbers run first).
  int priority = 0;
  /// Split flags of every layout's split.
  split_flags flags = split_flags::none;
};

/// One partition of a pool layout. It refers to a green context and streams that the pool owns
/// (shared with every partition of another layout that holds the same SMs).
struct pool_partition {
  unsigned requested = 0;    ///< SMs asked; 0 for "rest" and "all"
  bool rest = false;         ///< the SMs the layout's other partitions leave
  bool whole_device = false; ///< the partition of layout "all"
  std::string rounding;      ///< why sm_count differs from requested, empty if it does not
  unsigned sm_count = 0;     ///< SMs the green context holds, read back from the driver
  green_context_ref context;
  /// The streams to launch on: kernels there run only on this partition's SMs.
  std::vector<stream_ref> streams;
  /// Index of the green context among those the pool made: partitions with equal slots share a
  /// context, streams and SMs.
  std::size_t slot = 0;

  /// "16", "rest" or "all".
  std::string label() const;
};

/// One layout of a pool: its canonical name ("16,rest", "all") and its partitions, which are
/// disjoint (made from one split).
struct pool_layout {
  std::string name;
  std::vector<pool_partition> parts;
};

/// What a pool holds and what making it cost.
struct pool_stats {
  std::size_t layouts = 0;
  std::size_t partitions = 0; ///< over all layouts, shared ones counted in each
  std::size_t contexts = 0;   ///< green contexts the pool made (one per distinct SM set)
  std::size_t streams = 0;    ///< streams the pool made (streams_per_partition per context)
  std::chrono::nanoseconds creation_time{0}; ///< wall time of create()
  /// Device memory that create() took: free memory before minus after (cuMemGetInfo), so other
  /// users of the GPU at the same time show up in it too.
  std::int64_t device_memory_bytes = 0;
};

/// A set of layouts of one device's SMs, each with its green contexts and streams, made once;
/// one layout is "in use" and switching it is a host-side atomic store. See the file comment for
/// what happens to submitted work and for thread safety. Move-only; a moved-from pool has no
/// layouts and may only be destroyed or assigned to.
class pool {
public:
  /// Makes every layout of `layouts` ("16,rest", "32,rest", "all"; see parse_layouts) on `dev`:
  /// splits, green contexts (one per distinct SM set) and streams. The first layout is in use.
  /// Keep `dev` open while the pool is used: drain() makes its events in the primary context.
  /// Throws request_error for an empty list, a duplicate or malformed layout, a layout that cannot
  /// be made (with the planner's reason), or streams_per_partition outside 1..64; error for driver
  /// failures. Every layout is planned and split before any context is made, so a layout that
  /// cannot be made costs no green context; after a driver failure while making contexts, those
  /// made so far are destroyed (each destruction leaks ~4 MiB on driver 580).
  /// Thread safety: any thread; the pool it returns is independent of other pools.
  static pool create(const device &dev, std::span<const std::string> layouts,
                     const pool_options &options = {});
  static pool create(const device &dev, const std::vector<std::string> &layouts,
                     const pool_options &options = {}) {
    return create(dev, std::span<const std::string>(layouts), options);
  }

  /// An empty pool (no layouts), as a moved-from one: assign a created pool to it.
  pool() noexcept;
  pool(pool &&other) noexcept;
  pool &operator=(pool &&other) noexcept;
  pool(const pool &) = delete;
  pool &operator=(const pool &) = delete;
  /// Destroys the streams (pending work still completes) and the green contexts; on driver 580
  /// each destroyed context leaks ~4 MiB, so keep one pool for the life of the process.
  ~pool();

  /// The layouts in the order given to create(). Never changes while the pool lives.
  std::span<const pool_layout> layouts() const noexcept;
  /// The index of the layout named `name` (canonical or not: "16, rest" finds "16,rest").
  /// Throws request_error naming the pool's layouts when there is none.
  std::size_t index_of(std::string_view name) const;
  /// The layout named `name`. Throws like index_of.
  const pool_layout &layout(std::string_view name) const { return layouts()[index_of(name)]; }

  /// Makes layout `index` the one in use and returns the index of the one it replaces. One atomic
  /// exchange, no driver call; work already submitted is unaffected (see drain). Throws
  /// request_error when `index` is out of range (the layout in use is then unchanged).
  std::size_t use(std::size_t index);
  /// The same by name (a lookup among the layouts, then the exchange). Throws like index_of.
  std::size_t use(std::string_view name) { return use(index_of(name)); }

  /// The index of the layout in use (an atomic load).
  std::size_t current_index() const noexcept;
  /// The layout in use. The reference stays valid for the pool's life, also after a switch.
  /// The pool must have layouts (not moved from).
  const pool_layout &current() const noexcept { return layouts()[current_index()]; }

  /// Orders work on the device, without blocking the host: every stream of layout `into` waits
  /// for all work submitted so far to the streams of layout `from` (one event recorded per
  /// stream of `from`; the events are released when the call returns, the waits hold). Work
  /// submitted to `from` after the call is not covered, nor work on streams the pool did not
  /// make. Throws request_error for an index out of range, error for driver failures.
  void drain(std::size_t from, std::size_t into) const;
  /// Blocks until all work submitted so far to the streams of layout `index` has finished.
  /// Throws like drain.
  void synchronize(std::size_t index) const;

  /// What the pool holds and what making it cost. Never changes while the pool lives.
  const pool_stats &stats() const noexcept;

private:
  struct state;
  std::unique_ptr<state> s_;
};

} // namespace greenctx
