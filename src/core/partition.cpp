// SPDX-License-Identifier: Apache-2.0
#include "greenctx/core/partition.hpp"

#include "greenctx/plan/error.hpp"
#include "greenctx/core/group_split.hpp"
#include "greenctx/core/descriptor.hpp"
#include "greenctx/core/split.hpp"

namespace greenctx {

std::string partition::label() const {
  return rest ? "rest" : std::to_string(requested);
}

described_partitions describe_partitions(const device &dev, const partition_request &request,
                                         split_flags flags, unsigned piece_size) {
  constexpr const char *api = "greenctx::describe_partitions";
  const sm_resource all = dev.sms();
  const granularity grain = all.grain(flags);
  described_partitions out;
  out.plan = plan_partitions(request, all.sm_count(), grain, flags, piece_size);

  if (out.plan.groups == 0) {
    // "rest" alone, or one partition of every SM: the whole device, no split.
    const auto &p = out.plan.parts.front();
    out.parts.push_back({p.requested, p.rest, p.rounding, true, descriptor::from(all)});
    return out;
  }

  // The heterogeneous-split planner makes the partitions as groups of one split into the plan's
  // pieces (natively on a 13.1 driver); "rest" is what it leaves.
  std::vector<sm_group_params> params = to_group_params(out.plan);
  group_split_result made;
  try {
    // A partition promises no clusters (coscheduledSmCount 2 is the planner's smallest unit), so
    // its groups are not proved.
    made = split_groups(all, params,
                        {.proof = cluster_proof::skip, .units = {split_unit_of(out.plan)}});
  } catch (const request_error &e) {
    throw request_error(
        e.code(), api,
        "'" + request.to_string() + "' cannot be made from one split into pieces of " +
            std::to_string(out.plan.piece_size) + " SMs: " + e.what() +
            ". The driver places groups within the GPU's SM clusters, so fewer fit than the SM "
            "count suggests; ask for fewer or larger partitions");
  }
  std::size_t next = 0;
  for (const auto &p : out.plan.parts) {
    std::vector<sm_resource> pieces;
    if (p.rest) {
      if (made.remainder.empty())
        throw request_error(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION, api,
                            "the split left no SMs for 'rest' (" + made.explanation() + ")");
      pieces = made.remainder.pieces;
    } else {
      pieces = made.groups.at(next++).pieces;
    }
    out.parts.push_back({p.requested, p.rest, p.rounding, false, descriptor::from(pieces)});
  }
  return out;
}

partition_set partition_set::create(const device &dev, const partition_request &request,
                                    split_flags flags) {
  described_partitions described = describe_partitions(dev, request, flags);
  partition_set set;
  set.plan_ = std::move(described.plan);
  for (auto &p : described.parts)
    set.parts_.push_back(
        {p.requested, p.rest, std::move(p.rounding), green_context::create(p.desc)});
  return set;
}

} // namespace greenctx
