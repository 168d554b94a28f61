// How much greenctx's C API bookkeeping grows per call (issue 26, found while fuzzing the C API
// over the fake driver: fuzz_capi_fake's RSS rose steadily). Built and run on the developer
// machine (no GPU) against the tests' fake driver:
//   g++ -std=c++20 -O2 -Iinclude bench/results/2026-12-03-cpu/capi_growth.cpp \
//       build/src/libgreenctx.a -ldl -lpthread -o /tmp/grow
//   GREENCTX_LIBCUDA=$PWD/build/tests/fake_cuda/libcuda.so.1 /tmp/grow
// Its output is in capi-growth.txt.
#include <greenctx/cuda_compat.h>
#include <cstdio>
#include <fstream>
#include <string>
static long rss_kib() {
  std::ifstream f("/proc/self/status");
  std::string k;
  long v = 0;
  while (f >> k) {
    if (k == "VmRSS:") {
      f >> v;
      return v;
    }
  }
  return v;
}
int main() {
  cudaDevResource r;
  cudaDeviceGetDevResource(0, &r, cudaDevResourceTypeSm);
  long a = rss_kib();
  for (int i = 0; i < 1000000; ++i)
    cudaDeviceGetDevResource(0, &r, cudaDevResourceTypeSm);
  long b = rss_kib();
  std::printf("1e6 cudaDeviceGetDevResource: RSS %ld -> %ld KiB (+%.1f bytes per call)\n", a, b,
              (b - a) * 1024.0 / 1e6);
  cudaDevResource g[1];
  unsigned n = 1;
  for (int i = 0; i < 100000; ++i) {
    n = 1;
    cudaDevSmResourceSplitByCount(g, &n, &r, nullptr, 0, 16);
  }
  long c = rss_kib();
  std::printf("1e5 splits: RSS -> %ld KiB (+%.1f bytes per call)\n", c, (c - b) * 1024.0 / 1e5);
  for (int i = 0; i < 100000; ++i) {
    cudaDevResourceDesc_t d;
    cudaDevResourceGenerateDesc(&d, g, 1);
  }
  long e = rss_kib();
  std::printf("1e5 descriptors: RSS -> %ld KiB (+%.1f bytes per call)\n", e,
              (e - c) * 1024.0 / 1e5);
  cudaDevResourceDesc_t d;
  cudaDevResourceGenerateDesc(&d, g, 1);
  for (int i = 0; i < 100000; ++i) {
    cudaExecutionContext_t x;
    cudaGreenCtxCreate(&x, d, 0, 0);
    cudaExecutionCtxDestroy(x);
  }
  long f2 = rss_kib();
  std::printf("1e5 create+destroy (recycled): RSS -> %ld KiB (+%.1f bytes per cycle)\n", f2,
              (f2 - e) * 1024.0 / 1e5);
}
