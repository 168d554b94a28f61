// SPDX-License-Identifier: Apache-2.0
// Explanations of CUDA errors that confinement causes: said once on stderr, beside CUDA's own
// error (which the program gets unchanged, as it would on a GPU of N SMs).
#pragma once

#include <cuda.h>

namespace greenctx::preload {

/// A kernel launch was refused with CUDA_ERROR_INVALID_CLUSTER_SIZE in a confined context:
/// says once why (the cluster asked, the partition's co-scheduled units, the largest cluster of
/// this kernel that fits the partition) and which --sms would fit it. `launch` is the launch's
/// (for cuLaunchKernel: its grid, block, shared memory and stream, no attributes).
void explain_cluster_refusal(CUfunction f, const CUlaunchConfig &launch);

} // namespace greenctx::preload
