// SPDX-License-Identifier: Apache-2.0
// What the tests of greenctx/cuda_compat.h share: a check that names the call, CUDA's error and
// greenctx's explanation of it, and the SMs a stream's kernels reach (%smid).
#pragma once

#include <greenctx/cuda_compat.h>

#include "smid_kernels.cuh"
#include <gtest/gtest.h>

#include <set>
#include <vector>

#define CHECK_CUDA(call)                                                                           \
  do {                                                                                             \
    const cudaError_t rc_ = (call);                                                                \
    ASSERT_EQ(rc_, cudaSuccess) << #call << ": " << cudaGetErrorName(rc_) << ": "                  \
                                << greenctxGetLastErrorMessage();                                  \
  } while (0)

// Built with GREENCTX_KEEP_CUDART_API and CUDA 13.1+ headers (scripts/binary-compat-build.sh),
// the guide's calls go to cudart's own functions: on a 13.1 driver, or on a 13.0 driver through
// greenctx run --cuda-13.1. greenctx's explanations and its additions (which take greenctx's
// handles) and the compat layer's own semantics (recycling, 917 on detached streams, a kept
// work-queue configuration) are then not there: those checks are left out, said as skipped.
#if defined(GREENCTX_KEEP_CUDART_API) && !defined(GREENCTX_DECLARES_CUDA_13_1_TYPES)
#define GREENCTX_TEST_CUDART_API 1
#else
#define GREENCTX_TEST_CUDART_API 0
#endif
#define GREENCTX_SKIP_ON_CUDART_API()                                                              \
  if (GREENCTX_TEST_CUDART_API)                                                                    \
  GTEST_SKIP() << "the compat layer's own behaviour; this build calls cudart's 13.1 functions"

namespace greenctx_test {

/// Whether greenctx explains failures here (greenctxGetLastErrorMessage): not in a build that
/// calls cudart's own 13.1 functions.
inline bool explained() {
  return !GREENCTX_TEST_CUDART_API;
}

/// The SMs a kernel of `blocks` blocks used on `stream` (enough blocks, each busy 20 us, to reach
/// every SM the stream's context allows). Static: each test file of a program gets its own.
static std::set<unsigned> sms_used(cudaStream_t stream, unsigned blocks = 4000) {
  unsigned *d = nullptr;
  std::vector<unsigned> h(blocks);
  EXPECT_EQ(cudaMalloc(&d, blocks * sizeof(unsigned)), cudaSuccess);
  // cudart's own API (GREENCTX_TEST_CUDART_API) keeps the code of an earlier expected refusal for
  // cudaGetLastError: cleared, so that the check below is of this launch.
  (void)cudaGetLastError();
  record_smid<<<blocks, 32, 0, stream>>>(d, 20000);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(h.data(), d, blocks * sizeof(unsigned), cudaMemcpyDeviceToHost),
            cudaSuccess);
  cudaFree(d);
  return {h.begin(), h.end()};
}

} // namespace greenctx_test
