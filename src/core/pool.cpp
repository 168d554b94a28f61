// SPDX-License-Identifier: Apache-2.0
#include "greenctx/core/pool.hpp"

#include "greenctx/core/event.hpp"
#include "greenctx/core/partition.hpp"
#include "greenctx/plan/error.hpp"

#include <algorithm>
#include <atomic>
#include <map>
#include <utility>

namespace greenctx {

std::string pool_partition::label() const {
  if (whole_device)
    return "all";
  return rest ? "rest" : std::to_string(requested);
}

struct pool::state {
  // One green context per distinct SM set and its streams. Declared before the layouts, which
  // refer to them; the streams are destroyed before their context (reverse order of members).
  struct shared {
    green_context context;
    std::vector<stream> streams;
  };
  std::vector<shared> slots;
  std::vector<pool_layout> layouts;
  std::atomic<std::size_t> current{0};
  pool_stats stats;

  void check_index(std::size_t index, const char *api) const {
    if (index >= layouts.size())
      throw request_error(CUDA_ERROR_INVALID_VALUE, api,
                          "layout index " + std::to_string(index) +
                              " is out of range: the pool has " + std::to_string(layouts.size()) +
                              " layouts (0.." + std::to_string(layouts.size() - 1) + ")");
  }
};

pool::pool() noexcept = default;
pool::pool(pool &&other) noexcept : s_(std::exchange(other.s_, nullptr)) {
}
pool &pool::operator=(pool &&other) noexcept {
  pool tmp(std::move(other));
  std::swap(s_, tmp.s_);
  return *this;
}
pool::~pool() = default;

pool pool::create(const device &dev, std::span<const std::string> layouts,
                  const pool_options &options) {
  constexpr const char *api = "greenctx::pool::create";
  if (options.streams_per_partition < 1 || options.streams_per_partition > 64)
    throw request_error(CUDA_ERROR_INVALID_VALUE, api,
                        "streams_per_partition is " +
                            std::to_string(options.streams_per_partition) +
                            ": give 1 to 64 (2 lets two independent queues share a partition)");
  const std::vector<layout_request> requests = parse_layouts(layouts);

  const auto start = std::chrono::steady_clock::now();
  const std::size_t free_before = dev.memory_info().first;

  // Plan and split every layout before making any context, so that a layout that cannot be made
  // costs no green context (each would leak when destroyed). Every layout is split into pieces of
  // one size where the arithmetic allows, so that equal partitions at the same place share; a
  // layout the driver cannot make of those pieces falls back to its own.
  const sm_resource all = dev.sms();
  const unsigned piece =
      pool_piece_size(requests, all.sm_count(), all.grain(options.flags), options.flags);
  const auto describe = [&](const partition_request &request) {
    if (piece != 0) {
      try {
        return describe_partitions(dev, request, options.flags, piece);
      } catch (const request_error &) {
        // its own piece below; if that fails too, its error is the one reported
      }
    }
    return describe_partitions(dev, request, options.flags);
  };
  std::vector<described_partitions> described;
  for (const auto &r : requests) {
    try {
      described.push_back(describe(r.request));
    } catch (const request_error &e) {
      throw request_error(e.code(), api, "layout '" + r.name + "' cannot be made: " + e.what());
    }
  }

  auto s = std::make_unique<state>();
  // Slots by what they hold: content ids of split pieces, and one key for the whole device.
  std::map<std::uint64_t, std::size_t> by_content;
  std::size_t whole_device_slot = SIZE_MAX;
  for (std::size_t l = 0; l < requests.size(); ++l) {
    pool_layout layout;
    layout.name = requests[l].name;
    for (const auto &p : described[l].parts) {
      std::size_t slot = SIZE_MAX;
      if (p.whole_device && whole_device_slot != SIZE_MAX)
        slot = whole_device_slot;
      else if (!p.whole_device && p.desc.content_id() != 0) {
        const auto it = by_content.find(p.desc.content_id());
        if (it != by_content.end())
          slot = it->second;
      }
      if (slot == SIZE_MAX) {
        slot = s->slots.size();
        state::shared made{green_context::create(p.desc), {}};
        for (unsigned i = 0; i < options.streams_per_partition; ++i)
          made.streams.push_back(
              made.context.create_stream(stream_flags::non_blocking, options.priority));
        s->slots.push_back(std::move(made));
        if (p.whole_device)
          whole_device_slot = slot;
        else if (p.desc.content_id() != 0)
          by_content.emplace(p.desc.content_id(), slot);
      }
      const state::shared &sh = s->slots[slot];
      pool_partition part;
      part.requested = p.requested;
      part.rest = p.rest;
      part.whole_device = requests[l].whole_device;
      part.rounding = p.rounding;
      part.sm_count = sh.context.sms().sm_count();
      part.context = sh.context.ref();
      for (const stream &st : sh.streams)
        part.streams.push_back(st);
      part.slot = slot;
      layout.parts.push_back(std::move(part));
    }
    s->layouts.push_back(std::move(layout));
  }

  const std::size_t free_after = dev.memory_info().first;
  s->stats.layouts = s->layouts.size();
  for (const auto &l : s->layouts)
    s->stats.partitions += l.parts.size();
  s->stats.contexts = s->slots.size();
  s->stats.streams = s->slots.size() * options.streams_per_partition;
  s->stats.creation_time = std::chrono::duration_cast<std::chrono::nanoseconds>(
      std::chrono::steady_clock::now() - start);
  s->stats.device_memory_bytes =
      static_cast<std::int64_t>(free_before) - static_cast<std::int64_t>(free_after);
  pool out;
  out.s_ = std::move(s);
  return out;
}

std::span<const pool_layout> pool::layouts() const noexcept {
  if (!s_)
    return {};
  return s_->layouts;
}

std::size_t pool::index_of(std::string_view name) const {
  constexpr const char *api = "greenctx::pool::index_of";
  const std::span<const pool_layout> all = layouts();
  for (std::size_t i = 0; i < all.size(); ++i)
    if (all[i].name == name)
      return i;
  // Not found as written: try the canonical form ("16, rest" -> "16,rest").
  std::string canonical;
  try {
    canonical = parse_layout(name).name;
  } catch (const request_error &) {
  }
  for (std::size_t i = 0; i < all.size(); ++i)
    if (!canonical.empty() && all[i].name == canonical)
      return i;
  std::string known;
  for (const auto &l : all)
    known += (known.empty() ? "'" : ", '") + l.name + "'";
  throw request_error(CUDA_ERROR_INVALID_VALUE, api,
                      "the pool has no layout '" + std::string(name) + "'; its layouts are " +
                          (known.empty() ? std::string("none (a moved-from pool)") : known) +
                          ". Layouts are made when the pool is created: add it there");
}

std::size_t pool::use(std::size_t index) {
  if (!s_)
    throw request_error(CUDA_ERROR_INVALID_VALUE, "greenctx::pool::use",
                        "the pool is empty (moved from)");
  s_->check_index(index, "greenctx::pool::use");
  return s_->current.exchange(index, std::memory_order_acq_rel);
}

std::size_t pool::current_index() const noexcept {
  return s_ ? s_->current.load(std::memory_order_acquire) : 0;
}

void pool::drain(std::size_t from, std::size_t into) const {
  constexpr const char *api = "greenctx::pool::drain";
  if (!s_)
    throw request_error(CUDA_ERROR_INVALID_VALUE, api, "the pool is empty (moved from)");
  s_->check_index(from, api);
  s_->check_index(into, api);
  const pool_layout &a = s_->layouts[from];
  const pool_layout &b = s_->layouts[into];
  // Fresh events per call, so that concurrent drains never share one. Destroying an event whose
  // record is pending is allowed; waits already enqueued keep what it captured.
  std::vector<event> recorded;
  std::vector<stream_ref> seen;
  for (const auto &p : a.parts)
    for (stream_ref st : p.streams) {
      if (std::find(seen.begin(), seen.end(), st) != seen.end())
        continue;
      seen.push_back(st);
      event e(p.context, event_flags::disable_timing);
      e.record(st);
      recorded.push_back(std::move(e));
    }
  for (const auto &p : b.parts)
    for (stream_ref st : p.streams)
      for (const event &e : recorded)
        st.wait(e);
}

void pool::synchronize(std::size_t index) const {
  constexpr const char *api = "greenctx::pool::synchronize";
  if (!s_)
    throw request_error(CUDA_ERROR_INVALID_VALUE, api, "the pool is empty (moved from)");
  s_->check_index(index, api);
  for (const auto &p : s_->layouts[index].parts)
    for (stream_ref st : p.streams)
      st.synchronize();
}

const pool_stats &pool::stats() const noexcept {
  static const pool_stats none;
  return s_ ? s_->stats : none;
}

} // namespace greenctx
