// SPDX-License-Identifier: Apache-2.0
#include "greenctx/core/cluster_proof.hpp"

#include "greenctx/core/occupancy.hpp"
#include "greenctx/plan/error.hpp"

#include <deque>
#include <map>
#include <mutex>
#include <utility>

namespace greenctx {
namespace {

// Measured counts by (content id, cluster size), and the contexts made to measure them.
struct proof_cache {
  std::mutex mutex;
  std::map<std::pair<std::uint64_t, unsigned>, unsigned> clusters;
  std::map<std::uint64_t, green_context> contexts;
  std::deque<green_context> unnamed; // made for descriptors without a content id
};

proof_cache &cache() {
  static auto *c = new proof_cache; // never destroyed: its contexts live for the process
  return *c;
}

} // namespace

unsigned proven_clusters(const descriptor &desc, unsigned cluster_size, green_context_ref made) {
  const std::uint64_t id = desc.content_id();
  proof_cache &c = cache();
  std::lock_guard lock(c.mutex);
  if (id != 0)
    if (auto it = c.clusters.find({id, cluster_size}); it != c.clusters.end())
      return it->second;
  if (!made) {
    // Kept, also without an id: destroying it would leak about as much memory as it holds.
    green_context &kept = id ? c.contexts[id] : c.unnamed.emplace_back();
    if (!kept)
      kept = green_context::create(desc);
    made = kept.ref();
  }
  const unsigned n = max_active_sm_clusters(made, cluster_size);
  if (id != 0)
    c.clusters.emplace(std::pair{id, cluster_size}, n);
  return n;
}

green_context take_proof_context(const descriptor &desc) {
  const std::uint64_t id = desc.content_id();
  if (id == 0)
    return {};
  proof_cache &c = cache();
  std::lock_guard lock(c.mutex);
  auto it = c.contexts.find(id);
  if (it == c.contexts.end())
    return {};
  green_context out = std::move(it->second);
  c.contexts.erase(it);
  return out;
}

} // namespace greenctx
