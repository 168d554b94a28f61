// SPDX-License-Identifier: Apache-2.0
// A program of the CUDA runtime that prints the driver version it is told and what its first
// call to the driver returns: built with a CUDA 13.1+ toolkit (shared and static cudart) and with
// a 13.0 one, and run over the tests' fake driver by check_cudart_13_1.sh.
#include <cuda_runtime_api.h>

#include <cstdio>

int main() {
  int driver = -1, runtime = -1, devices = -1;
  const cudaError_t d = cudaDriverGetVersion(&driver);
  const cudaError_t r = cudaRuntimeGetVersion(&runtime);
  const cudaError_t n = cudaGetDeviceCount(&devices);
  std::printf("driver %d (%d) runtime %d (%d) devices %d (%d)\n", driver, static_cast<int>(d),
              runtime, static_cast<int>(r), devices, static_cast<int>(n));
  return 0;
}
