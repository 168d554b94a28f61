// SPDX-License-Identifier: Apache-2.0
// The consumer's CUDA file: greenctx's C++ headers included from a .cu file compiled by nvcc, with
// whatever standard the package gives it (nvcc's own default is C++17, which the headers refuse).
// It uses the API from host code and defines a kernel that is launched on a greenctx stream.
#include <greenctx/greenctx.hpp>

#include <string>

namespace {

__global__ void mark(int *out) {
  if (threadIdx.x == 0 && blockIdx.x == 0)
    *out = 1;
}

} // namespace

// What main.cpp checks: the request parsed here, in nvcc's translation unit.
std::string parsed_in_cuda_file(const char *request) {
  return greenctx::parse_partition_request(request).to_string();
}

// The standard nvcc compiled this file with (__cplusplus).
long cuda_file_standard() {
  return __cplusplus;
}

// Launches `mark` on a stream of a 16-SM green context and returns what it wrote: needs a GPU
// (main.cpp calls it only when query_driver() found one with green contexts).
int launch_on_green_context() {
  greenctx::device gpu(0);
  auto parts = greenctx::partition_set::create(gpu, greenctx::parse_partition_request("16,rest"));
  const greenctx::green_context &critical = parts.parts()[0].context;
  greenctx::stream fast = critical.create_stream();
  int *flag = nullptr;
  if (cudaMalloc(&flag, sizeof(int)) != cudaSuccess)
    return -1;
  cudaMemset(flag, 0, sizeof(int));
  mark<<<1, 32, 0, fast.native_handle()>>>(flag);
  fast.synchronize();
  int host = 0;
  cudaMemcpy(&host, flag, sizeof(int), cudaMemcpyDeviceToHost);
  cudaFree(flag);
  return host;
}
