// Proving at split time that a group can run the thread-block clusters its coscheduledSmCount
// promises, when no driver promise backs it (pieces of IgnoreSmCoscheduling splits, pieces larger
// than the device's co-scheduled alignment, splits of intermediate contexts). CUDA 13.1's contract
// is that cudaDevSmResourceSplit succeeds only when every group meets its requirements, so the
// proof runs at the split, not when a context is made from the group.
#pragma once

#include "greenctx/cxx_standard.hpp"

#include "greenctx/core/execution_context.hpp"
#include "greenctx/core/split.hpp"
#include "greenctx/plan/group_plan.hpp"

namespace greenctx {

/// How many clusters of `cluster_size` SMs a green context made from `desc` runs at once
/// (max_active_sm_clusters), measured once per process for each descriptor content
/// (descriptor::content_id) and size. A measurement needs a green context: `made` when given (a
/// context made from `desc`), else one is made and kept for the rest of the process, as the
/// library keeps its intermediate contexts (destroying one leaks about 4 MiB on driver 580, and
/// the same group is usually made next). Descriptors without a content id are measured every time.
/// Thread-safe. Throws error for driver failures.
unsigned proven_clusters(const descriptor &desc, unsigned cluster_size,
                         green_context_ref made = {});

/// Hands over the green context made to prove `desc` (a descriptor with the same content id), so
/// that making the group's own context costs no second context: the caller owns it from then on.
/// Null when there is none (`desc` was never proved with a context of its own, has no content id,
/// or its context was taken already). The measured counts stay cached. Thread-safe.
green_context take_proof_context(const descriptor &desc);

/// Checks every group of a real split `r` that needs it (needs_cluster_check, coscheduled >= 2)
/// against clusters_promised with proven_clusters. A group that falls short is marked not made:
/// its outcome gets obtained = 0 and a note with the measured and promised counts, and, when
/// `advise`, `r.advice` is filled (split_advice on `input`, with prove_request as its prover).
/// Returns whether every group passed. Groups of a dry run (none returned) are not checked.
/// Throws error for driver failures.
bool prove_cluster_promises(group_split_result &r, const sm_resource &input, bool advise = true);

/// Whether a split of `input` by `params` is made and every group proved: split_groups and
/// prove_cluster_promises, as the C API's cudaDevSmResourceSplit does. False for a refusal.
/// The contexts a proof makes are kept and cached (proven_clusters), so asking again is cheap.
/// Throws error for driver failures other than refusals.
bool prove_request(const sm_resource &input, std::span<const sm_group_params> params);

} // namespace greenctx
