// SPDX-License-Identifier: Apache-2.0
// split_groups on a real driver: the 13.1 entry point when there is one, else the planner over
// split-by-count and intermediate green contexts, with the cluster proofs of what it returns.
#include "greenctx/core/group_split.hpp"

#include "core/resources.hpp"
#include "driver/driver_api.hpp"
#include "greenctx/core/cluster_proof.hpp"
#include "greenctx/core/execution_context.hpp"
#include "greenctx/core/descriptor.hpp"
#include "greenctx/core/split.hpp"
#include "greenctx/plan/error.hpp"
#include "greenctx/plan/split_advice.hpp"

#include <cstring>
#include <map>
#include <mutex>

namespace greenctx {
namespace {

constexpr const char *api = "greenctx::split_groups";

// sm_group_params is CU_DEV_SM_RESOURCE_GROUP_PARAMS word for word (the 13.0 headers lack it):
// the driver reads the groups and writes the defaults back in place.
#if CUDA_VERSION >= 13010
static_assert(same_words_as_sm_group_params<CU_DEV_SM_RESOURCE_GROUP_PARAMS>,
              "the driver's group parameters are not the 13.1 layout");
#endif
using native_split_fn = CUresult (*)(CUdevResource *, unsigned, const CUdevResource *,
                                     CUdevResource *, unsigned, sm_group_params *);

group_split_result split_natively(const sm_resource &input, std::span<sm_group_params> params,
                                  bool dry_run) {
  const auto split = reinterpret_cast<native_split_fn>(detail::driver().cuDevSmResourceSplit);
  std::vector<CUdevResource> out(params.size());
  CUdevResource rest{};
  detail::check(split(dry_run ? nullptr : out.data(), static_cast<unsigned>(params.size()),
                      &input.native(), dry_run ? nullptr : &rest, 0, params.data()),
                "cuDevSmResourceSplit");
  group_split_result result;
  result.params.assign(params.begin(), params.end());
  result.native = true;
  result.dry_run = dry_run;
  result.runs = 1;
  const std::uint64_t origin = detail::next_split_origin();
  for (std::size_t i = 0; i < params.size(); ++i) {
    group_outcome o;
    o.requested = params[i].sm_count;
    o.unit = params[i].coscheduled_sm_count;
    if (dry_run) {
      o.obtained = params[i].sm_count;
    } else {
      sm_group g;
      g.pieces.push_back(detail::make_sm_resource(out[i], input.device(), origin));
      g.coscheduled = params[i].coscheduled_sm_count;
      o.obtained = g.sm_count();
      result.groups.push_back(std::move(g));
    }
    result.outcomes.push_back(o);
  }
  if (!dry_run && rest.type == CU_DEV_RESOURCE_TYPE_SM && rest.sm.smCount > 0)
    result.remainder.pieces.push_back(detail::make_sm_resource(rest, input.device(), origin));
  result.remainder_sms = result.remainder.sm_count();
  return result;
}

// Intermediate green contexts, by the bytes of the pieces they hold, for the life of the process:
// identical requests reuse them, and they are never destroyed (each create/destroy cycle leaks
// device memory on driver 580, and resources split from them must stay valid).
sm_resource splittable_from(std::span<const sm_resource> pieces) {
  static std::mutex mutex;
  static auto *cache = new std::map<std::string, green_context_ref>;
  std::string key;
  for (const auto &p : pieces)
    key.append(reinterpret_cast<const char *>(&p.native()), sizeof(CUdevResource));
  std::lock_guard lock(mutex);
  auto it = cache->find(key);
  if (it == cache->end()) {
    green_context gc = green_context::create(descriptor::from(pieces));
    const CUdevice dev = gc.device();
    it = cache->emplace(key, green_context_ref(gc.release(), dev)).first;
  }
  return it->second.sms();
}

split_backend driver_backend() {
  split_backend b;
  b.split = [](const sm_resource &input, unsigned unit, bool ignore) {
    const split_flags flags = ignore ? split_flags::ignore_sm_coscheduling : split_flags::none;
    const unsigned n = count_groups(input, unit, flags);
    if (n == 0)
      return std::pair{std::vector<sm_resource>{}, input};
    split_result r = split_by_count(input, n, unit, flags);
    return std::pair{std::move(r.groups), r.remainder};
  };
  b.make_splittable = splittable_from;
  return b;
}

// Proves the groups of a real split `r` that need it against clusters_promised (proven_clusters).
// A group that falls short is marked not made: obtained 0 and a note with the measured and
// promised counts. Returns whether every group passed.
bool prove_groups(group_split_result &r) {
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
  return all;
}

// Whether split_groups makes `params` on `input` and every group passes its proof: the prover of
// the advice given for a failed proof (its own failures are not advised on again).
bool splits_and_proves(const sm_resource &input, std::span<const sm_group_params> params) {
  std::vector<sm_group_params> p(params.begin(), params.end());
  try {
    group_split_result r = split_groups(input, p, {.proof = cluster_proof::skip});
    return prove_groups(r);
  } catch (const request_error &) {
    return false;
  }
}

group_split_result plan_on_driver(const sm_resource &input, std::span<sm_group_params> params,
                                  const group_split_options &options, const group_limits &limits) {
  const auto &use = options.units.empty() ? available_units(limits) : options.units;
  try {
    group_split_result r =
        plan_group_split(input, params, use, limits, driver_backend(), options.dry_run);
    if (!r.all_made()) // a dry run
      r.advice = split_advice(input, params);
    return r;
  } catch (const request_error &e) { // a group cannot be made: say what can
    if (e.code() != CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION || options.dry_run)
      throw;
    throw request_error(e.code(), e.api(),
                        std::string(e.what()) + ". Advice: " + split_advice(input, params));
  }
}

} // namespace

group_split_result split_groups(const sm_resource &input, std::span<sm_group_params> params,
                                bool dry_run) {
  return split_groups(input, params, {.dry_run = dry_run});
}

group_split_result split_groups(const sm_resource &input, std::span<sm_group_params> params,
                                const group_split_options &options) {
  if (input.native().type != CU_DEV_RESOURCE_TYPE_SM)
    throw request_error(CUDA_ERROR_INVALID_RESOURCE_TYPE, api, "the input is not an SM resource");
  const group_limits limits =
      make_group_limits(input.sm_count(), input.grain(), input.compute_capability_major());
  apply_group_defaults(params, limits);
  if (detail::driver().cuDevSmResourceSplit) // the driver keeps every promise itself
    return split_natively(input, params, options.dry_run);
  group_split_result r = plan_on_driver(input, params, options, limits);
  if (options.dry_run || options.proof == cluster_proof::skip || prove_groups(r))
    return r;
  r.advice = split_advice(input, r.params, true);
  if (options.proof == cluster_proof::refuse)
    throw request_error(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION, api, r.refusal());
  return r;
}

std::string split_advice(const sm_resource &input, std::span<const sm_group_params> params,
                         bool prove) {
  std::vector<sm_group_params> p(params.begin(), params.end());
  const group_limits limits =
      make_group_limits(input.sm_count(), input.grain(), input.compute_capability_major());
  apply_group_defaults(p, limits);
  return plan_split_advice(input, p, limits, driver_backend(),
                           prove ? request_prover([&input](std::span<const sm_group_params> alt) {
                             return splits_and_proves(input, alt);
                           })
                                 : request_prover());
}

} // namespace greenctx
