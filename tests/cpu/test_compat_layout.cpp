// SPDX-License-Identifier: Apache-2.0
// The 13.1 types that cuda_compat.h declares for older toolkits have the 13.1 layout, and the
// header compiles as C (compat_header.c) as well as C++.
#include <greenctx/cuda_compat.h>
#include <greenctx/plan/group_params.hpp>

#include <gtest/gtest.h>

#include <cstddef>

extern "C" int greenctx_compat_header_compiles_as_c(void);

namespace {

TEST(CompatLayout, resource_is_144_bytes_with_the_union_at_96) {
  EXPECT_EQ(sizeof(cudaDevResource), 144u);
  EXPECT_EQ(offsetof(cudaDevResource, sm), 96u);
  EXPECT_EQ(offsetof(cudaDevResource, wqConfig), 96u);
  EXPECT_EQ(offsetof(cudaDevResource, nextResource), 136u);
  // 16 bytes in 13.1's layout (greenctx's declaration); CUDA 13.5 adds localityDomainId (20).
  // Either fits the union before nextResource.
  EXPECT_GE(sizeof(cudaDevSmResource), 16u);
  EXPECT_LE(sizeof(cudaDevSmResource), 136u - 96u);
  EXPECT_EQ(sizeof(cudaDevWorkqueueConfigResource), 12u);
  EXPECT_EQ(sizeof(cudaDevSmResourceGroupParams), 64u);
}

TEST(CompatLayout, group_params_are_greenctx_sm_group_params_word_for_word) {
  EXPECT_EQ(sizeof(cudaDevSmResourceGroupParams), sizeof(greenctx::sm_group_params));
  EXPECT_EQ(offsetof(cudaDevSmResourceGroupParams, smCount),
            offsetof(greenctx::sm_group_params, sm_count));
  EXPECT_EQ(offsetof(cudaDevSmResourceGroupParams, coscheduledSmCount),
            offsetof(greenctx::sm_group_params, coscheduled_sm_count));
  EXPECT_EQ(offsetof(cudaDevSmResourceGroupParams, preferredCoscheduledSmCount),
            offsetof(greenctx::sm_group_params, preferred_coscheduled_sm_count));
  EXPECT_EQ(offsetof(cudaDevSmResourceGroupParams, flags),
            offsetof(greenctx::sm_group_params, flags));
  // Words 4 to 15: reserved in 13.1; CUDA 13.5 names word 4 localityDomainId and keeps 11
  // reserved words (measured on its PyPI headers). Either way the reserved words end the struct,
  // and both are copied through unchanged; greenctx refuses a group whose flags ask for a
  // locality domain (an unknown flag to it).
  EXPECT_GE(offsetof(cudaDevSmResourceGroupParams, reserved),
            offsetof(greenctx::sm_group_params, reserved));
  EXPECT_EQ(offsetof(cudaDevSmResourceGroupParams, reserved) +
                sizeof(cudaDevSmResourceGroupParams::reserved),
            offsetof(greenctx::sm_group_params, reserved) +
                sizeof(greenctx::sm_group_params::reserved));
}

TEST(CompatLayout, enums_and_error_codes_have_the_13_1_values) {
  EXPECT_EQ(cudaDevResourceTypeSm, 1);
  EXPECT_EQ(cudaDevResourceTypeWorkqueueConfig, 1000);
  EXPECT_EQ(cudaDevResourceTypeWorkqueue, 10000);
  EXPECT_EQ(cudaDevSmResourceGroupBackfill, 1);
  EXPECT_EQ(cudaDevSmResourceSplitIgnoreSmCoscheduling, 1);
  EXPECT_EQ(cudaDevSmResourceSplitMaxPotentialClusterSize, 2);
  EXPECT_EQ(cudaDevWorkqueueConfigScopeGreenCtxBalanced, 1);
  EXPECT_EQ(static_cast<int>(cudaErrorInvalidResourceType), 914);
  EXPECT_EQ(static_cast<int>(cudaErrorInvalidResourceConfiguration), 915);
  EXPECT_EQ(static_cast<int>(cudaErrorStreamDetached), 917);
}

TEST(CompatLayout, header_compiles_as_c) {
  EXPECT_EQ(greenctx_compat_header_compiles_as_c(), 144);
}

} // namespace
