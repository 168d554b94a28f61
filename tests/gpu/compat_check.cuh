// What the tests of greenctx/cuda_compat.h share: a check that names the call, CUDA's error and
// greenctx's explanation of it.
#pragma once

#include <greenctx/cuda_compat.h>

#include <gtest/gtest.h>

#define CHECK_CUDA(call)                                                                           \
  do {                                                                                             \
    const cudaError_t rc_ = (call);                                                                \
    ASSERT_EQ(rc_, cudaSuccess) << #call << ": " << cudaGetErrorName(rc_) << ": "                  \
                                << greenctxGetLastErrorMessage();                                  \
  } while (0)
