// SPDX-License-Identifier: Apache-2.0
// What the loaded CUDA driver is, and which green-context features it has.
#pragma once

#include "greenctx/cxx_standard.hpp"

#include <cuda.h>

#include <string>
#include <vector>

namespace greenctx {

/// A green-context capability, named for what the user gets.
enum class feature {
  green_contexts,        ///< cuGreenCtxCreate and split by count (driver 12.4)
  green_stream_create,   ///< streams created on a green context without making it current (12.5)
  split_flags,           ///< IgnoreSmCoscheduling / MaxPotentialClusterSize (12.5)
  context_events,        ///< record/wait events on the primary context (12.5)
  green_context_id,      ///< a process-unique id for green contexts (12.9)
  sm_partition_info,     ///< minSmPartitionSize / smCoscheduledAlignment reported (13.0)
  heterogeneous_split,   ///< cuDevSmResourceSplit: groups of different sizes (13.1)
  workqueue_resources,   ///< work-queue config resources in descriptors (13.1)
  stream_resource_query, ///< the SM resource behind a stream (13.1)
};

/// How a feature is available in this process.
enum class availability {
  native,   ///< the driver provides it
  greenctx, ///< the driver lacks it; greenctx provides it on top of older entry points
  missing,  ///< neither: calls that need it throw unsupported_error
};

struct feature_status {
  feature id;
  const char *name;        ///< short name, e.g. "heterogeneous_split"
  const char *description; ///< one line for people
  int introduced;          ///< driver version that introduced it natively, e.g. 13010
  availability status;
};

/// The short name of an availability, for machines: "native", "greenctx" or "missing".
const char *availability_name(availability a) noexcept;

/// The same for people: "native", "provided by greenctx" or "not available".
const char *availability_description(availability a) noexcept;

/// The loaded driver.
struct driver_info {
  int version = 0;     ///< cuDriverGetVersion, e.g. 13000
  std::string library; ///< the library that was opened (libcuda.so.1 unless GREENCTX_LIBCUDA)
  std::vector<feature_status> features;

  /// Status of one feature.
  const feature_status &operator[](feature f) const;
};

/// Loads the driver on first use (thread-safe) and describes it.
/// Throws greenctx::error when there is no driver or no GPU (code CUDA_ERROR_NO_DEVICE) or cuInit
/// fails; the message says which.
driver_info query_driver();

/// The driver's name for a CUresult ("CUDA_ERROR_INVALID_VALUE"), or "CUresult N" when the driver
/// is not loaded or does not know the code. Never throws.
std::string result_name(CUresult code) noexcept;

/// The CUDA toolkit version greenctx was compiled against (CUDA_VERSION, e.g. 13000).
int toolkit_version() noexcept;

} // namespace greenctx
