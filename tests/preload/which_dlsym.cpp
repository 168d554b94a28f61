// SPDX-License-Identifier: Apache-2.0
// Says which library this program's dlsym is bound to. Run with the preload library in
// LD_PRELOAD (the cpu.preload.binds_dlsym test): it must be the preload library, since the CUDA
// runtime finds cuGetProcAddress through dlsym (a program's reference is versioned, dlsym@GLIBC_*).
#include <dlfcn.h>

#include <cstdio>

int main() {
  Dl_info in{};
  if (!dladdr(reinterpret_cast<void *>(&dlsym), &in) || !in.dli_fname)
    return 1;
  std::printf("dlsym is bound in %s\n", in.dli_fname);
  return 0;
}
