#include "greenctx/lab/cluster_proof.hpp"

#include "greenctx/core/group_split.hpp"
#include "greenctx/lab/occupancy.hpp"
#include "greenctx/plan/error.hpp"
#include "greenctx/plan/group_params.hpp"

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

bool prove_cluster_promises(group_split_result &r, const sm_resource &input, bool advise) {
  bool all = true;
  for (std::size_t i = 0; i < r.groups.size(); ++i) {
    const sm_group &g = r.groups[i];
    if (!g.needs_cluster_check || g.coscheduled < 2)
      continue;
    const bool backfill = r.params[i].flags & sm_group_backfill;
    const unsigned want = clusters_promised(g.sm_count(), g.coscheduled, backfill);
    const unsigned got = proven_clusters(descriptor::from(g.pieces), g.coscheduled);
    if (got >= want)
      continue;
    all = false;
    group_outcome &o = r.outcomes[i];
    o.note = "its " + std::to_string(g.sm_count()) + " SMs (pieces of " + std::to_string(o.unit) +
             (o.ignore_coscheduling_pieces ? ", IgnoreSmCoscheduling" : "") + ") run " +
             std::to_string(got) + " clusters of " + std::to_string(g.coscheduled) +
             " SMs at once, not the " + std::to_string(want) + " that coscheduledSmCount " +
             std::to_string(g.coscheduled) + " promises (measured with the occupancy calculator)";
    o.obtained = 0;
  }
  if (!all && advise)
    r.advice = split_advice(input, r.params, [&input](std::span<const sm_group_params> alt) {
      return prove_request(input, alt);
    });
  return all;
}

bool prove_request(const sm_resource &input, std::span<const sm_group_params> params) {
  std::vector<sm_group_params> p(params.begin(), params.end());
  try {
    group_split_result r = split_groups(input, p);
    return prove_cluster_promises(r, input, false);
  } catch (const request_error &) {
    return false;
  }
}

} // namespace greenctx
