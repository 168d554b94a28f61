// SPDX-License-Identifier: Apache-2.0
// greenctx: partition a GPU's SMs with CUDA green contexts. Include this for everything.
//
// The headers are grouped by layer, each using only the ones above it in this list:
//   plan/    the rules of splitting and the error types: pure code, no driver, tested on the CPU
//   driver/  the loaded CUDA driver: what it is and which green-context features it has
//   core/    owning handles: device, split, green and primary contexts, streams, events, memory,
//            partitions and the heterogeneous split with its cluster proofs (occupancy)
//   measure/ measurements on the GPU: the %smid probe and verify, and measurements with workloads
//            you pass (callables on a stream): contention, choosing a split by measurement
//            (tune), the adaptive background, the all-reduce beside a GEMM loop (comm), scaling
//            over SM counts; the built-in workloads (kernels, and spin, memory, chunked copy,
//            cuBLAS GEMM as callables; NCCL and cuBLAS opened at run time)
// The CUDA 13.1 runtime API (C) is greenctx/cuda_compat.h, on core.
#pragma once

#include "greenctx/cxx_standard.hpp"

#include "greenctx/plan/error.hpp"
#include "greenctx/plan/granularity.hpp"
#include "greenctx/plan/group_params.hpp"
#include "greenctx/plan/group_plan.hpp"
#include "greenctx/plan/partition_plan.hpp"
#include "greenctx/plan/pool_plan.hpp"
#include "greenctx/plan/resource.hpp"
#include "greenctx/plan/split_advice.hpp"
#include "greenctx/plan/process_check.hpp"
#include "greenctx/plan/verify_check.hpp"

#include "greenctx/driver/driver.hpp"

#include "greenctx/core/cluster_proof.hpp"
#include "greenctx/core/current_context.hpp"
#include "greenctx/core/descriptor.hpp"
#include "greenctx/core/device.hpp"
#include "greenctx/core/event.hpp"
#include "greenctx/core/execution_context.hpp"
#include "greenctx/core/group_split.hpp"
#include "greenctx/core/memory.hpp"
#include "greenctx/core/occupancy.hpp"
#include "greenctx/core/partition.hpp"
#include "greenctx/core/pool.hpp"
#include "greenctx/core/split.hpp"
#include "greenctx/core/stream.hpp"
#include "greenctx/core/stream_flags.hpp"

#include "greenctx/measure/adaptive.hpp"
#include "greenctx/measure/bandwidth.hpp"
#include "greenctx/measure/comm.hpp"
#include "greenctx/measure/contention.hpp"
#include "greenctx/measure/gemm.hpp"
#include "greenctx/measure/nccl.hpp"
#include "greenctx/measure/scaling.hpp"
#include "greenctx/measure/stats.hpp"
#include "greenctx/measure/tune.hpp"
#include "greenctx/measure/verify.hpp"
#include "greenctx/measure/workloads.hpp"
