// SPDX-License-Identifier: Apache-2.0
// A CUDA program that knows nothing of greenctx, for `greenctx run`'s GPU checks: its kernels
// record the SMs they run on (%smid), from several threads, on the legacy default stream, on
// streams it creates, and in a graph it captures; it also calls cudaSetDevice and the driver's
// context API. It prints what it saw and exits 1 when the SMs used break --expect-max-sms N.
//
//   run_target [--threads T] [--expect-max-sms N] [--expect-min-sms N] [--per-thread-stream]
#include <cuda.h>
#include <cuda_runtime.h>

#include "smid_kernels.cuh"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace {

using greenctx_test::record_smid;

constexpr unsigned blocks = 2048;
std::mutex seen_mutex;
std::set<unsigned> seen_all;
int failures = 0;

void check(cudaError_t rc, const char *what) {
  if (rc != cudaSuccess) {
    std::fprintf(stderr, "run_target: %s: %s\n", what, cudaGetErrorString(rc));
    std::lock_guard lock(seen_mutex);
    ++failures;
  }
}

// Runs the probe on `stream` and adds the SMs it used to `where`.
std::set<unsigned> probe(cudaStream_t stream, unsigned *d) {
  record_smid<<<blocks, 32, 0, stream>>>(d, 10000);
  check(cudaGetLastError(), "launch");
  check(cudaStreamSynchronize(stream), "synchronize");
  std::vector<unsigned> h(blocks);
  check(cudaMemcpy(h.data(), d, blocks * sizeof(unsigned), cudaMemcpyDeviceToHost), "copy");
  return {h.begin(), h.end()};
}

void report(const char *what, int thread, const std::set<unsigned> &sms) {
  std::lock_guard lock(seen_mutex);
  seen_all.insert(sms.begin(), sms.end());
  std::printf("thread %d %-18s %3zu SMs\n", thread, what, sms.size());
}

void work(int thread, bool per_thread_stream) {
  check(cudaSetDevice(0), "cudaSetDevice");
  unsigned *d = nullptr;
  check(cudaMalloc(&d, blocks * sizeof(unsigned)), "cudaMalloc");
  report("legacy stream", thread, probe(cudaStreamLegacy, d));
  report("NULL stream", thread, probe(nullptr, d));
  cudaStream_t s;
  check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
  report("created stream", thread, probe(s, d));
  // A graph captured on the created stream, launched on it.
  cudaGraph_t g;
  cudaGraphExec_t exec;
  check(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), "begin capture");
  record_smid<<<blocks, 32, 0, s>>>(d, 10000);
  check(cudaStreamEndCapture(s, &g), "end capture");
  check(cudaGraphInstantiate(&exec, g, 0), "instantiate");
  check(cudaGraphLaunch(exec, s), "graph launch");
  check(cudaStreamSynchronize(s), "graph synchronize");
  std::vector<unsigned> h(blocks);
  check(cudaMemcpy(h.data(), d, blocks * sizeof(unsigned), cudaMemcpyDeviceToHost), "copy");
  report("captured graph", thread, std::set<unsigned>(h.begin(), h.end()));
  if (per_thread_stream)
    report("per-thread stream", thread, probe(cudaStreamPerThread, d));
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(g);
  cudaStreamDestroy(s);
  cudaFree(d);
}

// The driver API: the primary context made current by hand, and a context created by hand.
void driver_api_work() {
  CUdevice dev;
  CUcontext primary = nullptr, own = nullptr;
  cuInit(0);
  cuDeviceGet(&dev, 0);
  cuDevicePrimaryCtxRetain(&primary, dev);
  cuCtxSetCurrent(primary);
  unsigned *d = nullptr;
  check(cudaMalloc(&d, blocks * sizeof(unsigned)), "cudaMalloc (driver thread)");
  report("driver: primary", 100, probe(nullptr, d));
  CUctxCreateParams params{};
  if (cuCtxCreate(&own, &params, 0, dev) == CUDA_SUCCESS) {
    unsigned *d2 = nullptr;
    check(cudaMalloc(&d2, blocks * sizeof(unsigned)), "cudaMalloc (own context)");
    report("driver: cuCtxCreate", 100, probe(nullptr, d2));
    cudaFree(d2);
    cuCtxDestroy(own);
  }
  cudaFree(d);
  cuCtxSetCurrent(nullptr);
  cuDevicePrimaryCtxRelease(dev);
}

} // namespace

int main(int argc, char **argv) {
  int threads = 4;
  unsigned expect_max = 0, expect_min = 0;
  bool per_thread_stream = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--threads" && i + 1 < argc)
      threads = std::atoi(argv[++i]);
    else if (a == "--expect-max-sms" && i + 1 < argc)
      expect_max = static_cast<unsigned>(std::atoi(argv[++i]));
    else if (a == "--expect-min-sms" && i + 1 < argc)
      expect_min = static_cast<unsigned>(std::atoi(argv[++i]));
    else if (a == "--per-thread-stream")
      per_thread_stream = true;
    else {
      std::fprintf(stderr, "run_target: unknown argument '%s'\n", a.c_str());
      return 2;
    }
  }
  work(0, per_thread_stream); // the main thread first, then several at once
  std::vector<std::thread> pool;
  for (int t = 1; t <= threads; ++t)
    pool.emplace_back(work, t, false);
  for (auto &t : pool)
    t.join();
  std::thread(driver_api_work).join();
  std::printf("all kernels together: %zu SMs\n", seen_all.size());
  if (failures) {
    std::printf("FAILED: %d CUDA calls failed\n", failures);
    return 3;
  }
  if (expect_max && seen_all.size() > expect_max) {
    std::printf("FAILED: kernels used %zu SMs, more than %u\n", seen_all.size(), expect_max);
    return 1;
  }
  if (expect_min && seen_all.size() < expect_min) {
    std::printf("FAILED: kernels used %zu SMs, fewer than %u\n", seen_all.size(), expect_min);
    return 1;
  }
  std::printf("OK\n");
  return 0;
}
