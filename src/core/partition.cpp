#include "greenctx/core/partition.hpp"

#include "greenctx/plan/error.hpp"
#include "greenctx/core/split.hpp"

namespace greenctx {

std::string partition::label() const {
  return rest ? "rest" : std::to_string(requested);
}

partition_set partition_set::create(const device &dev, const partition_request &request,
                                    split_flags flags) {
  constexpr const char *api = "greenctx::partition_set::create";
  const sm_resource all = dev.sms();
  const granularity grain =
      effective_granularity(all.grain(), all.compute_capability_major(), flags);
  partition_set set;
  set.plan_ = plan_partitions(request, all.sm_count(), grain, flags);

  if (set.plan_.groups == 0) {
    // "rest" alone: one partition over the whole device.
    set.parts_.push_back({0, true, {}, green_context::create(descriptor::from(all))});
    return set;
  }

  const split_result split = split_by_count(all, set.plan_.groups, set.plan_.piece_size, flags);
  if (split.groups.size() < set.plan_.groups)
    throw request_error(
        CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION, api,
        "'" + request.to_string() + "' needs " + std::to_string(set.plan_.groups) + " pieces of " +
            std::to_string(set.plan_.piece_size) +
            " SMs from one split, but the driver made only " + std::to_string(split.groups.size()) +
            " (" + split.explanation() +
            "). The driver places groups within the GPU's SM clusters, so fewer fit than the SM "
            "count suggests; ask for fewer or larger partitions");

  for (const auto &p : set.plan_.parts) {
    std::vector<sm_resource> pieces;
    if (p.rest) {
      if (split.remainder.empty())
        throw request_error(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION, api,
                            "the split left no SMs for 'rest' (" + split.explanation() + ")");
      pieces.push_back(split.remainder);
    } else {
      pieces.assign(split.groups.begin() + p.first_piece,
                    split.groups.begin() + p.first_piece + p.pieces);
    }
    std::string rounding = p.rounding;
    if (!split.size.reason.empty() && split.size.size != set.plan_.piece_size)
      rounding += (rounding.empty() ? "" : "; ") + split.size.reason;
    set.parts_.push_back(
        {p.requested, p.rest, rounding, green_context::create(descriptor::from(pieces))});
  }
  return set;
}

} // namespace greenctx
