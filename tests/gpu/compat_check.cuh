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

namespace greenctx_test {

/// The SMs a kernel of `blocks` blocks used on `stream` (enough blocks, each busy 20 us, to reach
/// every SM the stream's context allows). Static: each test file of a program gets its own.
static std::set<unsigned> sms_used(cudaStream_t stream, unsigned blocks = 4000) {
  unsigned *d = nullptr;
  std::vector<unsigned> h(blocks);
  EXPECT_EQ(cudaMalloc(&d, blocks * sizeof(unsigned)), cudaSuccess);
  record_smid<<<blocks, 32, 0, stream>>>(d, 20000);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(h.data(), d, blocks * sizeof(unsigned), cudaMemcpyDeviceToHost),
            cudaSuccess);
  cudaFree(d);
  return {h.begin(), h.end()};
}

} // namespace greenctx_test
