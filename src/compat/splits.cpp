// SPDX-License-Identifier: Apache-2.0
// Splits of the 13.1 API: cudaDevSmResourceSplitByCount and cudaDevSmResourceSplit.
#include "compat/errors.hpp"
#include "compat/registry.hpp"
#include "compat/resources.hpp"
#include "greenctx/core/group_split.hpp"
#include "greenctx/core/descriptor.hpp"
#include "greenctx/core/split.hpp"

#include <bit>
#include <cstring>

using namespace greenctx;
using namespace greenctx::compat;

// cudaDevSmResourceGroupParams and greenctx's sm_group_params are the same 16 words (13.1's
// layout, asserted in group_params.hpp): the compat layer converts between them as bytes, here
// only.
static_assert(same_words_as_sm_group_params<cudaDevSmResourceGroupParams>,
              "cudaDevSmResourceGroupParams is not the 13.1 layout");

extern "C" {

cudaError_t greenctx_cudaDevSmResourceSplitByCount(cudaDevResource *result, unsigned int *nbGroups,
                                                   const cudaDevResource *input,
                                                   cudaDevResource *remaining, unsigned int flags,
                                                   unsigned int minCount) {
  return guarded([&] {
    constexpr const char *api = "cudaDevSmResourceSplitByCount";
    require_pointer(nbGroups, api, "nbGroups");
    const sm_resource in = splittable_input(input, api);
    if (flags & ~3u)
      refuse(CUDA_ERROR_INVALID_VALUE, api,
             "unknown flags " + std::to_string(flags) +
                 ": IgnoreSmCoscheduling (1) and MaxPotentialClusterSize (2) are the only ones");
    const auto f = static_cast<split_flags>(flags);
    if (!result) {
      *nbGroups = count_groups(in, minCount, f);
      return;
    }
    const split_result r = split_by_count(in, *nbGroups, minCount, f);
    const int ordinal = ordinal_of(in.device());
    std::vector<sm_resource> pieces = r.groups;
    pieces.push_back(r.remainder);
    const std::uint64_t id = add_record(ordinal, pieces);
    for (std::size_t i = 0; i < r.groups.size(); ++i)
      export_sm(result[i], id, piece_mask().set(i),
                {.kind = tag_kind::group,
                 .coscheduled = r.groups[i].coscheduled_alignment(),
                 .exact = true});
    *nbGroups = static_cast<unsigned>(r.groups.size());
    if (remaining)
      export_sm(*remaining, id,
                r.remainder.empty() ? piece_mask() : piece_mask().set(pieces.size() - 1),
                {.kind = tag_kind::remainder});
  });
}

cudaError_t greenctx_cudaDevSmResourceSplit(cudaDevResource *result, unsigned int nbGroups,
                                            const cudaDevResource *input,
                                            cudaDevResource *remainder, unsigned int flags,
                                            cudaDevSmResourceGroupParams *groupParams) {
  return guarded([&] {
    constexpr const char *api = "cudaDevSmResourceSplit";
    require_pointer(groupParams, api, "groupParams");
    if (nbGroups == 0)
      refuse(CUDA_ERROR_INVALID_VALUE, api, "nbGroups is 0: ask for at least one group");
    if (flags != 0)
      refuse(CUDA_ERROR_INVALID_VALUE, api,
             "flags is " + std::to_string(flags) +
                 ": it must be 0 (per-group flags go in "
                 "groupParams[i].flags)");
    for (unsigned i = 0; i < nbGroups; ++i)
      for (unsigned word : groupParams[i].reserved)
        if (word != 0)
          refuse(CUDA_ERROR_INVALID_VALUE, api,
                 "groupParams[" + std::to_string(i) +
                     "].reserved is not zero: zero-initialise the structure");
    const sm_resource in = splittable_input(input, api);
    std::vector<sm_group_params> params(nbGroups);
    for (unsigned i = 0; i < nbGroups; ++i)
      params[i] = std::bit_cast<sm_group_params>(groupParams[i]);
    const auto write_back = [&] { // the defaults filled in and the counts discovered
      for (unsigned i = 0; i < nbGroups; ++i)
        groupParams[i] = std::bit_cast<cudaDevSmResourceGroupParams>(params[i]);
    };
    // 13.1's contract: the split succeeds only when every group meets its requirements, so a
    // group whose clusters no driver promise backs is proved by the split, not when a context is
    // made (split_groups' default).
    group_split_result r;
    try {
      r = split_groups(in, params, result == nullptr);
    } catch (...) {
      write_back();
      throw;
    }
    write_back();
    if (!result)
      return;
    // One record per split call: groups of one call (and the remainder, from the last call)
    // share it, so that they can be combined into one descriptor.
    const int ordinal = ordinal_of(in.device());
    const std::uint64_t request = next_request();
    for (unsigned run = 0; run < r.runs; ++run) {
      std::vector<sm_resource> pieces;
      std::vector<piece_mask> masks(r.groups.size() + 1);
      const auto add = [&](const sm_group &g, piece_mask &m) {
        if (g.run != run)
          return;
        for (const auto &p : g.pieces) {
          m.set(pieces.size());
          pieces.push_back(p);
        }
      };
      for (std::size_t i = 0; i < r.groups.size(); ++i)
        add(r.groups[i], masks[i]);
      add(r.remainder, masks.back());
      if (pieces.empty())
        continue;
      const std::uint64_t id = add_record(ordinal, pieces);
      for (std::size_t i = 0; i < r.groups.size(); ++i)
        if (r.groups[i].run == run)
          export_sm(result[i], id, masks[i],
                    {.kind = tag_kind::group,
                     .coscheduled = r.groups[i].coscheduled,
                     .needs_cluster_check = r.groups[i].needs_cluster_check,
                     .request = request,
                     .exact = !(params[i].flags & sm_group_backfill)});
      if (remainder && r.remainder.run == run)
        export_sm(*remainder, id, masks.back(), {.kind = tag_kind::remainder, .request = request});
    }
    if (remainder && r.remainder.empty()) {
      std::memset(remainder, 0, sizeof(*remainder));
      remainder->type = cudaDevResourceTypeSm;
    }
  });
}

} // extern "C"
