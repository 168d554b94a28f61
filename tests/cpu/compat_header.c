// SPDX-License-Identifier: Apache-2.0
/* cuda_compat.h included from C (C11): the forwarders and types must be valid C. */
#include <greenctx/cuda_compat.h>

int greenctx_compat_header_compiles_as_c(void) {
  cudaDevResource r;
  cudaDevSmResourceGroupParams p = {0};
  (void)p;
  return (int)sizeof r;
}
