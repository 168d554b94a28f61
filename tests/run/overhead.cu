// What confinement costs, as a benchmark (never compared, never asserted): run it plain and under
// `greenctx run --sms <all SMs>` and compare the times (scripts/semantics-check.sh does, 5 times
// each, alternating).
//   launch: 100,000 empty kernels on the legacy stream, host wall time from the first launch to
//           the end of the synchronization after the last (each launch passes the library's hooks)
//   gemm:   cuBLAS SGEMM 8192^2, 50 iterations, timed with events (the kernels themselves)
// Prints one JSON line on stdout: {"mode":..,"seconds":..,...}. Knows nothing of greenctx.
//
//   overhead launch [COUNT] | gemm [N] [ITERATIONS]
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

#define CHECK(call)                                                                                \
  do {                                                                                             \
    const auto rc_ = (call);                                                                       \
    if (rc_ != 0) {                                                                                \
      std::fprintf(stderr, "overhead: %s failed (%d)\n", #call, static_cast<int>(rc_));            \
      std::exit(3);                                                                                \
    }                                                                                              \
  } while (0)

__global__ void empty() {
}

__global__ void fill(float *x, size_t n, unsigned seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x)
    x[i] = static_cast<float>(((i * 2654435761u + seed) >> 7) % 5) - 2.0f;
}

} // namespace

int main(int argc, char **argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode != "launch" && mode != "gemm") {
    std::fprintf(stderr, "usage: overhead launch [COUNT] | gemm [N] [ITERATIONS]\n");
    return 2;
  }
  int count = 0;
  const cudaError_t rc = cudaGetDeviceCount(&count);
  if (rc != cudaSuccess || count == 0) {
    std::fprintf(stderr, "overhead: no CUDA device (%s): skipped\n",
                 rc == cudaSuccess ? "none found" : cudaGetErrorString(rc));
    return 77;
  }
  CHECK(cudaSetDevice(0));
  CHECK(cudaFree(nullptr));
  if (mode == "launch") {
    const long launches = argc > 2 ? std::atol(argv[2]) : 100000;
    if (launches < 1) {
      std::fprintf(stderr, "overhead: COUNT must be >= 1\n");
      return 2;
    }
    for (int i = 0; i < 1000; ++i) // warm-up: module load, queues
      empty<<<1, 1>>>();
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    const auto start = std::chrono::steady_clock::now();
    for (long i = 0; i < launches; ++i)
      empty<<<1, 1>>>();
    CHECK(cudaGetLastError());
    CHECK(cudaStreamSynchronize(0));
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("{\"mode\":\"launch\",\"seconds\":%.6f,\"launches\":%ld,\"us_per_launch\":%.4f}\n",
                s, launches, s * 1e6 / launches);
    return 0;
  }
  const size_t n = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 8192;
  const int iterations = argc > 3 ? std::atoi(argv[3]) : 50;
  if (n < 16 || iterations < 1) {
    std::fprintf(stderr, "overhead: N must be >= 16 and ITERATIONS >= 1\n");
    return 2;
  }
  float *a, *b, *c;
  CHECK(cudaMalloc(&a, n * n * sizeof(float)));
  CHECK(cudaMalloc(&b, n * n * sizeof(float)));
  CHECK(cudaMalloc(&c, n * n * sizeof(float)));
  fill<<<1024, 256>>>(a, n * n, 1);
  fill<<<1024, 256>>>(b, n * n, 2);
  CHECK(cudaGetLastError());
  cublasHandle_t h;
  CHECK(cublasCreate(&h));
  const float one = 1, zero = 0;
  const int ni = static_cast<int>(n);
  for (int i = 0; i < 2; ++i) // warm-up
    CHECK(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, ni, ni, ni, &one, a, ni, b, ni, &zero, c, ni));
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  CHECK(cudaEventRecord(start));
  for (int i = 0; i < iterations; ++i)
    CHECK(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, ni, ni, ni, &one, a, ni, b, ni, &zero, c, ni));
  CHECK(cudaEventRecord(stop));
  CHECK(cudaEventSynchronize(stop));
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, start, stop));
  const double s = ms * 1e-3;
  std::printf("{\"mode\":\"gemm\",\"seconds\":%.6f,\"n\":%zu,\"iterations\":%d,\"tflops\":%.2f}\n",
              s, n, iterations, 2.0 * n * n * n * iterations / s / 1e12);
  CHECK(cublasDestroy(h));
  return 0;
}
