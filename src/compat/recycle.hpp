// SPDX-License-Identifier: Apache-2.0
// Green contexts parked by cudaExecutionCtxDestroy, for cudaGreenCtxCreate to take again: on
// driver 580 a create/destroy cycle costs about 1.5 ms and leaks about 4 MiB of device memory, so
// the compat layer never destroys a green context it made. Pure standard C++ (no driver), so that
// its keying is tested on the CPU.
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

namespace greenctx::compat {

/// What makes two green contexts interchangeable: the device, the descriptor's content id (equal
/// ids mean byte-identical split pieces, hence the same SMs, and the same work-queue configuration
/// when the driver took one), and the work-queue configuration the driver provisioned (already
/// part of the content id; kept here too so that the key says so on its own).
struct recycle_key {
  int ordinal = 0;
  std::uint64_t content_id = 0;
  bool workqueue_provisioned = false;
  int workqueue_device = 0;
  unsigned workqueue_limit = 0;
  unsigned workqueue_scope = 0;

  friend auto operator<=>(const recycle_key &, const recycle_key &) = default;
};

/// The key of a green context made from a descriptor with `content_id` on device `ordinal`, or
/// nullopt when the id is 0 (the descriptor has no identity: a whole device or a context's
/// read-back resource), so that the context is never given out again. The work-queue fields count
/// only when the driver provisioned them (below 13.1 the driver context does not depend on them).
/// Never throws.
inline std::optional<recycle_key> make_recycle_key(int ordinal, std::uint64_t content_id,
                                                   bool workqueue_provisioned, int workqueue_device,
                                                   unsigned workqueue_limit,
                                                   unsigned workqueue_scope) noexcept {
  if (content_id == 0)
    return std::nullopt;
  recycle_key key{.ordinal = ordinal, .content_id = content_id};
  if (workqueue_provisioned) {
    key.workqueue_provisioned = true;
    key.workqueue_device = workqueue_device;
    key.workqueue_limit = workqueue_limit;
    key.workqueue_scope = workqueue_scope;
  }
  return key;
}

/// Parked entries (green-context owners and what goes with them), by key. Entries without a key
/// are kept until the process ends and never given out: their driver contexts stay alive so that
/// streams of them can still be destroyed. Thread-safe: every member may be called from any
/// thread at any time. `Entry` must be movable.
template <class Entry> class parking_lot {
public:
  /// Parks `entry` under `key`, or keeps it for good when `key` is nullopt. Throws only
  /// std::bad_alloc.
  void park(const std::optional<recycle_key> &key, Entry entry) {
    std::lock_guard lock(mutex_);
    if (key)
      keyed_.emplace(*key, std::move(entry));
    else
      kept_.push_back(std::move(entry));
  }

  /// Takes the entry parked last under `key` for which `usable(entry)` is true (called under the
  /// lot's lock, so it must be quick and must not call back into the lot), or nullopt. Entries
  /// that are not usable stay parked. Last in, first out: a destroy followed by a create over the
  /// same SMs gets back the very context it parked. Throws what `usable` throws.
  template <class Usable> std::optional<Entry> take(const recycle_key &key, Usable &&usable) {
    std::lock_guard lock(mutex_);
    auto [first, last] = keyed_.equal_range(key);
    while (last != first) {
      --last;
      if (usable(last->second)) {
        std::optional<Entry> out(std::move(last->second));
        keyed_.erase(last);
        return out;
      }
    }
    return std::nullopt;
  }

  /// How many entries wait under a key.
  std::size_t parked() const {
    std::lock_guard lock(mutex_);
    return keyed_.size();
  }

  /// How many entries are kept without a key.
  std::size_t kept() const {
    std::lock_guard lock(mutex_);
    return kept_.size();
  }

private:
  mutable std::mutex mutex_;
  std::multimap<recycle_key, Entry> keyed_; // equal keys in parking order
  std::vector<Entry> kept_;
};

} // namespace greenctx::compat
