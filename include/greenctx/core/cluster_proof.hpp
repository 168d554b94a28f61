// SPDX-License-Identifier: Apache-2.0
// The measurements behind split_groups' cluster proofs (core/group_split.hpp): how many clusters a
// group's SMs run at once, when no driver promise backs its coscheduledSmCount (pieces of
// IgnoreSmCoscheduling splits, pieces larger than the device's co-scheduled alignment, splits of
// intermediate contexts), cached per descriptor content. CUDA 13.1's contract is that
// cudaDevSmResourceSplit succeeds only when every group meets its requirements, so the proof runs
// at the split; making a context from a proved group finds the measurement here.
#pragma once

#include "greenctx/cxx_standard.hpp"

#include "greenctx/core/execution_context.hpp"
#include "greenctx/core/descriptor.hpp"

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

} // namespace greenctx
