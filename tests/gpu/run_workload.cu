// SPDX-License-Identifier: Apache-2.0
// A plain CUDA program for `greenctx run` and `greenctx scale` checks: a cuBLAS GEMM or a
// memory-bound kernel, timed with events, with a checksum of the result so that a confined run
// can be compared with an unconfined one. Knows nothing of greenctx.
//
//   run_workload gemm [N] [REPEAT]      SGEMM N x N (default 8192), REPEAT times (default 10)
//   run_workload memory [MIB] [REPEAT]  a grid-stride copy of MIB MiB (default 2048), REPEAT times
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

#define CHECK(call)                                                                                \
  do {                                                                                             \
    const auto rc_ = (call);                                                                       \
    if (rc_ != 0) {                                                                                \
      std::fprintf(stderr, "run_workload: %s failed (%d)\n", #call, static_cast<int>(rc_));        \
      std::exit(3);                                                                                \
    }                                                                                              \
  } while (0)

__global__ void fill(float *x, size_t n, unsigned seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x)
    x[i] = static_cast<float>(((i * 2654435761u + seed) >> 7) % 5) - 2.0f; // -2..2: exact sums
}

__global__ void copy(const float4 *in, float4 *out, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x)
    out[i] = in[i];
}

double checksum(const float *d, size_t n) {
  std::vector<float> h(n);
  CHECK(cudaMemcpy(h.data(), d, n * sizeof(float), cudaMemcpyDeviceToHost));
  double s = 0;
  for (size_t i = 0; i < n; ++i)
    s += h[i] * double(i % 7 + 1);
  return s;
}

} // namespace

int main(int argc, char **argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode != "gemm" && mode != "memory") {
    std::fprintf(stderr, "usage: run_workload gemm [N] [REPEAT] | memory [MIB] [REPEAT]\n");
    return 2;
  }
  const size_t size =
      argc > 2 ? std::strtoul(argv[2], nullptr, 10) : (mode == "gemm" ? 8192 : 2048);
  const int repeat = argc > 3 ? std::atoi(argv[3]) : 10;
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  float ms = 0;
  double sum = 0;
  if (mode == "gemm") {
    const size_t n = size;
    float *a, *b, *c;
    CHECK(cudaMalloc(&a, n * n * sizeof(float)));
    CHECK(cudaMalloc(&b, n * n * sizeof(float)));
    CHECK(cudaMalloc(&c, n * n * sizeof(float)));
    fill<<<1024, 256>>>(a, n * n, 1);
    fill<<<1024, 256>>>(b, n * n, 2);
    cublasHandle_t h;
    CHECK(cublasCreate(&h));
    const float one = 1, zero = 0;
    CHECK(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, n, b, n, &zero, c, n));
    CHECK(cudaEventRecord(start));
    for (int i = 0; i < repeat; ++i)
      CHECK(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, n, b, n, &zero, c, n));
    CHECK(cudaEventRecord(stop));
    CHECK(cudaEventSynchronize(stop));
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    sum = checksum(c, n * n);
    std::printf("gemm %zu x %zu: %.3f ms per GEMM, %.1f TFLOP/s, checksum %.17g (device has %d "
                "SMs)\n",
                n, n, ms / repeat, 2.0 * n * n * n * repeat / (ms * 1e-3) / 1e12, sum, sms);
    cublasDestroy(h);
  } else {
    const size_t n = size * 1024 * 1024 / sizeof(float4);
    float4 *in, *out;
    CHECK(cudaMalloc(&in, n * sizeof(float4)));
    CHECK(cudaMalloc(&out, n * sizeof(float4)));
    fill<<<1024, 256>>>(reinterpret_cast<float *>(in), n * 4, 3);
    copy<<<sms * 8, 256>>>(in, out, n);
    CHECK(cudaEventRecord(start));
    for (int i = 0; i < repeat; ++i)
      copy<<<sms * 8, 256>>>(in, out, n);
    CHECK(cudaEventRecord(stop));
    CHECK(cudaEventSynchronize(stop));
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    sum = checksum(reinterpret_cast<float *>(out), 1 << 20);
    std::printf("memory copy %zu MiB: %.3f ms per copy, %.0f GB/s, checksum %.17g (device has %d "
                "SMs)\n",
                size, ms / repeat, 2.0 * n * sizeof(float4) * repeat / (ms * 1e-3) / 1e9, sum, sms);
  }
  CHECK(cudaGetLastError());
  return 0;
}
