// SPDX-License-Identifier: Apache-2.0
// Explanations of CUDA errors that confinement causes: said once on stderr, beside CUDA's own
// error (which the program gets unchanged, as it would on a GPU of N SMs).
#pragma once

#include <cuda.h>

#include <optional>
#include <vector>

namespace greenctx::preload {

/// A kernel launch was refused with CUDA_ERROR_INVALID_CLUSTER_SIZE in a confined context:
/// says once why (the cluster asked, the partition's co-scheduled units, the largest cluster of
/// this kernel that fits the partition) and which --sms would fit it. `launch` is the launch's
/// (for cuLaunchKernel: its grid, block, shared memory and stream, no attributes).
void explain_cluster_refusal(CUfunction f, const CUlaunchConfig &launch);

/// How many clusters of `cluster` blocks run at once on the SMs of `pieces` (one block per SM), by
/// the occupancy calculator in a green context of them, made once per set of pieces and kept until
/// the program takes it (take_proof_context). Null when the driver could not be asked.
std::optional<unsigned> proven_clusters(CUdevice device, const std::vector<CUdevResource> &pieces,
                                        unsigned cluster);

/// The green context a proof made of exactly `pieces` on `device`, handed over (it is no longer
/// kept: the program may destroy it); null when there is none.
std::optional<CUgreenCtx> take_proof_context(CUdevice device,
                                             const std::vector<CUdevResource> &pieces);

} // namespace greenctx::preload
