// SPDX-License-Identifier: Apache-2.0
// A piece of a split ("16,rest" piece 1) for `greenctx run --split S --piece I`: the SMs a process
// confined to that piece runs on, made as greenctx's library makes the partitions of `greenctx
// verify S` (plan_partitions and the heterogeneous-split planner of src/plan/), over raw driver
// calls: the library's own driver layer cannot run inside the preload library, whose dlsym and
// cuGetProcAddress it would reach.
#pragma once

#include <cuda.h>

#include <string>
#include <vector>

namespace greenctx::preload {

/// The SM resources of piece `index` of split `spec` on `device` (split flags `flags`, CUDA's
/// bits), in the order a descriptor takes them; empty, with *why said, when it cannot be made.
/// Intermediate green contexts it needs stay for the life of the process.
std::vector<CUdevResource> split_piece(int device, const std::string &spec, unsigned index,
                                       unsigned flags, std::string *why);

/// The bytes of `pieces` in hexadecimal (the debug trace shows them, so that the pieces two
/// processes got can be compared).
std::string hex_of(const std::vector<CUdevResource> &pieces);

} // namespace greenctx::preload
