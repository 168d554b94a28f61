// SPDX-License-Identifier: Apache-2.0
// A program built with `nvcc --default-stream per-thread`: its default stream (0) is each
// thread's own per-thread stream, and the runtime reaches the driver through the per-thread
// entry points (cuLaunchKernel_ptsz, cuMemcpy*_ptds, ...). 8 threads each launch kernels on the
// default stream, use cudaMemset / cudaMemcpy (synchronous, per-thread variants) and
// cudaMemsetAsync / cudaMemcpyAsync on stream 0 and on cudaStreamPerThread, and check every
// result; a kernel that spins then writes a marker makes an unordered copy likely to read the old
// value. Finally the main thread's kernel on cudaStreamLegacy must be waited for by each thread's
// per-thread stream (CUDA: "the per-thread default stream ... will synchronize with the legacy
// default stream"). Knows nothing of greenctx: plain and `greenctx run` stdouts must be equal.
//
//   ptds [--rounds R] [--spin-ms MS] [--smid-out FILE] [--timeout-s S]
#include <cuda_runtime.h>

#include "run_common.cuh"

#include <string>
#include <thread>
#include <vector>

#ifndef CUDA_API_PER_THREAD_DEFAULT_STREAM
#error "ptds.cu must be compiled with nvcc --default-stream per-thread"
#endif

namespace {

using run_test::format;
using run_test::host_flag;
using run_test::recorder;

constexpr int threads = 8, adds = 5;
constexpr size_t n = 1 << 18;
int rounds = 10;
unsigned long long spin_ns = 5'000'000ull;
run_test::smid_log smids;

int marker_for(int t, int r) {
  return 1000 * (t + 1) + r + 1;
}

/// Counts elements of `v` not equal to `want`.
size_t wrong(const std::vector<int> &v, int want) {
  size_t k = 0;
  for (int x : v)
    k += x != want;
  return k;
}

void work(int t, recorder &rec) {
  int *buf = nullptr, *marker = nullptr, *pinned = nullptr;
  if (!rec.check(cudaSetDevice(0), "cudaSetDevice") ||
      !rec.check(cudaMalloc(&buf, n * sizeof(int)), "cudaMalloc") ||
      !rec.check(cudaMalloc(&marker, sizeof(int)), "cudaMalloc (marker)") ||
      !rec.check(cudaMallocHost(&pinned, n * sizeof(int)), "cudaMallocHost"))
    return;
  std::vector<int> back(n);
  for (int r = 0; r < rounds && rec.ok(); ++r) {
    const int want = adds * (t + 1), m = marker_for(t, r);
    // The default stream (0), synchronous calls: cudaMemset, kernels, a long kernel, cudaMemcpy.
    rec.check(cudaMemset(buf, 0, n * sizeof(int)), "cudaMemset");
    rec.check(cudaMemset(marker, 0, sizeof(int)), "cudaMemset (marker)");
    for (int k = 0; k < adds; ++k) {
      run_test::add_to_all<<<64, 256>>>(buf, n, t + 1);
      rec.launched("add_to_all on the default stream");
    }
    run_test::spin_then_write<<<1, 1>>>(marker, m, spin_ns);
    rec.launched("spin_then_write on the default stream");
    int got = -3;
    rec.check(cudaMemcpy(&got, marker, sizeof(int), cudaMemcpyDeviceToHost), "cudaMemcpy (marker)");
    rec.expect(got == m, format("round %d: cudaMemcpy after a long kernel on the default stream "
                                "read marker %d, expected %d",
                                r, got, m));
    rec.check(cudaMemcpy(back.data(), buf, n * sizeof(int), cudaMemcpyDeviceToHost), "cudaMemcpy");
    if (size_t k = wrong(back, want))
      rec.fail(format("round %d: %zu of %zu elements wrong after cudaMemset and %d kernels on the "
                      "default stream (first %d, expected %d)",
                      r, k, n, adds, back[0], want));

    // Explicit cudaStreamPerThread, then stream 0: the same stream in this program.
    run_test::spin_then_write<<<1, 1, 0, cudaStreamPerThread>>>(marker, -m, spin_ns);
    rec.launched("spin_then_write on cudaStreamPerThread");
    run_test::add_to_all<<<64, 256, 0, cudaStreamPerThread>>>(buf, n, 1);
    rec.launched("add_to_all on cudaStreamPerThread");
    rec.check(cudaMemcpyAsync(pinned, buf, n * sizeof(int), cudaMemcpyDeviceToHost, 0),
              "cudaMemcpyAsync(stream 0)");
    rec.check(cudaMemcpyAsync(&got, marker, sizeof(int), cudaMemcpyDeviceToHost, 0),
              "cudaMemcpyAsync(stream 0, marker)");
    rec.check(cudaStreamSynchronize(0), "cudaStreamSynchronize(0)");
    rec.expect(got == -m, format("round %d: stream 0 after a long kernel on cudaStreamPerThread "
                                 "read marker %d, expected %d",
                                 r, got, -m));
    back.assign(pinned, pinned + n);
    if (size_t k = wrong(back, want + 1))
      rec.fail(format("round %d: %zu of %zu elements wrong after a kernel on cudaStreamPerThread "
                      "(first %d, expected %d)",
                      r, k, n, back[0], want + 1));

    // Asynchronous memset on stream 0, a kernel on cudaStreamPerThread, a copy on stream 0.
    rec.check(cudaMemsetAsync(buf, 0, n * sizeof(int), 0), "cudaMemsetAsync(stream 0)");
    run_test::add_to_all<<<64, 256, 0, cudaStreamPerThread>>>(buf, n, t + 2);
    rec.launched("add_to_all on cudaStreamPerThread");
    rec.check(
        cudaMemcpyAsync(pinned, buf, n * sizeof(int), cudaMemcpyDeviceToHost, cudaStreamPerThread),
        "cudaMemcpyAsync(cudaStreamPerThread)");
    rec.check(cudaStreamSynchronize(cudaStreamPerThread), "cudaStreamSynchronize(PerThread)");
    back.assign(pinned, pinned + n);
    if (size_t k = wrong(back, t + 2))
      rec.fail(format("round %d: %zu of %zu elements wrong after cudaMemsetAsync(0) and a kernel "
                      "on cudaStreamPerThread (first %d, expected %d)",
                      r, k, n, back[0], t + 2));
  }
  smids.probe("ptds_default_stream", 0, rec);
  smids.probe("ptds_cudaStreamPerThread", cudaStreamPerThread, rec);
  cudaFree(buf);
  cudaFree(marker);
  cudaFreeHost(pinned);
}

/// The main thread's long kernel on cudaStreamLegacy; then each thread's default (per-thread)
/// stream copies the value, after a host-side handoff and no CUDA synchronization.
void legacy_then_per_thread(recorder &rec) {
  int *d = nullptr;
  if (!rec.check(cudaMalloc(&d, sizeof(int)), "cudaMalloc") ||
      !rec.check(cudaMemset(d, 0, sizeof(int)), "cudaMemset") ||
      !rec.check(cudaDeviceSynchronize(), "cudaDeviceSynchronize"))
    return;
  constexpr int v = 4242;
  std::atomic<bool> abort{false};
  host_flag ready, go, done;
  std::vector<int> seen(threads, -3);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      int *out = nullptr;
      const bool ok = rec.check(cudaSetDevice(0), "cudaSetDevice (worker)") &&
                      rec.check(cudaMalloc(&out, sizeof(int)), "cudaMalloc (worker)") &&
                      rec.check(cudaMemset(out, 0xff, sizeof(int)), "cudaMemset (worker)") &&
                      rec.check(cudaStreamSynchronize(0), "cudaStreamSynchronize(0) (worker)");
      ready.add();
      if (go.wait_at_least(1, std::chrono::seconds(20), &abort) && ok) {
        run_test::copy_value<<<1, 1>>>(d, out);
        if (rec.launched("copy_value on the default stream (worker)"))
          rec.check(cudaMemcpy(&seen[t], out, sizeof(int), cudaMemcpyDeviceToHost),
                    "cudaMemcpy (worker)");
      }
      done.add();
      if (out)
        cudaFree(out);
    });
  if (!ready.wait_at_least(threads)) {
    rec.fail("the workers never said they were ready");
    abort.store(true);
  } else {
    run_test::spin_then_write<<<1, 1, 0, cudaStreamLegacy>>>(d, v, 6 * spin_ns);
    rec.launched("spin_then_write on cudaStreamLegacy");
    go.set();
    if (!done.wait_at_least(threads))
      rec.fail("the workers never said they were done");
  }
  for (auto &t : pool)
    t.join();
  for (int t = 0; t < threads; ++t)
    rec.expect(seen[t] == v, format("thread %d's default-stream kernel after the main thread's "
                                    "kernel on cudaStreamLegacy read %d, expected %d",
                                    t, seen[t], v));
  smids.probe("ptds_cudaStreamLegacy", cudaStreamLegacy, rec);
  rec.check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  cudaFree(d);
}

} // namespace

int main(int argc, char **argv) {
  std::string smid_out;
  double timeout_s = 120;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--rounds" && i + 1 < argc)
      rounds = std::atoi(argv[++i]);
    else if (a == "--spin-ms" && i + 1 < argc)
      spin_ns = static_cast<unsigned long long>(std::atof(argv[++i]) * 1e6);
    else if (a == "--smid-out" && i + 1 < argc)
      smid_out = argv[++i];
    else if (a == "--timeout-s" && i + 1 < argc)
      timeout_s = std::atof(argv[++i]);
    else {
      std::fprintf(stderr, "usage: ptds [--rounds R] [--spin-ms MS] [--smid-out FILE] "
                           "[--timeout-s S]\n");
      return 2;
    }
  }
  if (rounds < 1 || spin_ns < 100000 || timeout_s <= 0) {
    std::fprintf(stderr, "ptds: --rounds must be >= 1, --spin-ms >= 0.1\n");
    return 2;
  }
  if (!run_test::have_gpu("ptds"))
    return 77;
  smids.enabled = !smid_out.empty();
  run_test::watchdog dog("ptds", timeout_s);
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::unique_ptr<recorder>> recs;
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    recs.push_back(std::make_unique<recorder>(format("ptds thread %d", t)));
  for (int t = 0; t < threads; ++t)
    pool.emplace_back(work, t, std::ref(*recs[t]));
  for (auto &t : pool)
    t.join();
  int failed = 0;
  for (int t = 0; t < threads; ++t) {
    if (recs[t]->ok()) {
      std::printf("thread %d: %d rounds ok\n", t, rounds);
    } else {
      std::printf("thread %d: FAILED (%s)\n", t, recs[t]->summary().c_str());
      ++failed;
    }
  }
  dog.at("legacy_then_per_thread");
  recorder legacy("legacy_then_per_thread");
  if (legacy.check(cudaSetDevice(0), "cudaSetDevice"))
    legacy_then_per_thread(legacy);
  if (legacy.ok()) {
    std::printf("legacy_then_per_thread: ok\n");
  } else {
    std::printf("legacy_then_per_thread: FAILED (%s)\n", legacy.summary().c_str());
    ++failed;
  }
  std::fprintf(stderr, "ptds: %.3f s\n", run_test::seconds_since(start));
  if (smids.enabled && !smids.write(smid_out))
    ++failed;
  std::printf("ptds: %s\n", failed ? "FAILED" : "ok");
  return failed ? 1 : 0;
}
