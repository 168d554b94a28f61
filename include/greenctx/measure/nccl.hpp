// SPDX-License-Identifier: Apache-2.0
// NCCL, opened at run time (nothing is linked or vendored), for the communication measurement
// (comm.hpp, `greenctx bench comm`): the library found, and one communicator per GPU of one
// process with the few operations the measurement launches.
#pragma once

#include "greenctx/cxx_standard.hpp"

#include "greenctx/core/stream.hpp"

#include <cuda.h>

#include <cstddef>
#include <string>
#include <vector>

namespace greenctx::measure {

/// Where NCCL was found, or why not: GREENCTX_NCCL_LIBRARY (a path), then libnccl.so.2 on the
/// loader's path. The library looks nowhere else; the Python package's greenctx command sets
/// GREENCTX_NCCL_LIBRARY to the NCCL of an installed NVIDIA wheel (torch's).
/// Loaded once per process; thread-safe.
struct nccl_library {
  bool loaded = false;
  std::string path;    ///< the file loaded
  std::string failure; ///< why nothing was loaded: every path tried
  int version = 0;     ///< ncclGetVersion, e.g. 22703
  /// "2.27.3".
  std::string version_text() const;
};
const nccl_library &load_nccl();

/// One communicator per device of one process (ncclCommInitAll), destroyed with it. NCCL reads
/// its environment (NCCL_MAX_CTAS, NCCL_NVLS_ENABLE) when it first needs it and may keep it for
/// the process. Not thread-safe: use it from one thread.
class nccl_clique {
public:
  /// Throws unsupported_error when NCCL cannot be loaded, error when ncclCommInitAll fails.
  explicit nccl_clique(const std::vector<int> &ordinals);
  ~nccl_clique();
  nccl_clique(const nccl_clique &) = delete;
  nccl_clique &operator=(const nccl_clique &) = delete;

  /// What one call runs on every device i, in one NCCL group, on streams[i]:
  /// - sum: the in-place float all-reduce the bench measures;
  /// - average: the same with the mean (over one rank NCCL runs a local kernel for the mean, where
  ///   an in-place sum over one rank does nothing);
  /// - self_copy: a send of the first `count` floats of buffers[i] to its own rank, received into
  ///   the next `count` (buffers of 2 * count floats), which over one rank goes through NCCL's
  ///   own kernel launch like a collective over several.
  enum class operation { sum, average, self_copy };
  /// Enqueues `op` over `count` float elements. Throws error on a failed call.
  void launch(operation op, const std::vector<CUdeviceptr> &buffers, std::size_t count,
              const std::vector<stream_ref> &streams);

private:
  std::vector<void *> comms_;
};

} // namespace greenctx::measure
