// SPDX-License-Identifier: Apache-2.0
// Short-lived threads must not cost device memory: `greenctx run` once made a green context per
// thread, and 400 threads grew device memory by 2000 MiB. Here 1000 threads are created one after
// another, then 1000 more 16 at a time; each makes the device current (cudaSetDevice,
// cudaFree(0)), launches one kernel that writes its slot, synchronizes its stream and exits. The
// sequential threads use the legacy stream; the concurrent ones, in turn, the legacy stream,
// cudaStreamPerThread and a blocking stream of their own (created and destroyed). Device memory in
// use (cudaMemGetInfo) is measured after a warm-up thread of each kind and after each phase.
// Prints "churn: ok" on stdout when every slot is right; memory and time go to stderr and to
// --json FILE ({"threads":..,"memory_growth_mib":..,"ms_per_thread":.., ...}). Exits 1 if memory
// grew by more than --max-growth-mib (64) or a result is wrong. The time per thread is a
// benchmark number, never asserted. Knows nothing of greenctx.
//
//   churn [--threads N] [--concurrent K] [--json FILE] [--max-growth-mib M] [--timeout-s S]
#include <cuda_runtime.h>

#include "run_common.cuh"

#include <string>
#include <thread>
#include <vector>

namespace {

using run_test::format;
using run_test::recorder;

__global__ void set_slot(int *slot, int value) {
  *slot = value;
}

enum class stream_kind { legacy, per_thread, created };

/// One short-lived thread's whole life.
void one_thread(recorder &rec, int *slot, int value, stream_kind kind) {
  if (!rec.check(cudaSetDevice(0), "cudaSetDevice") || !rec.check(cudaFree(nullptr), "cudaFree(0)"))
    return;
  cudaStream_t s = nullptr;
  if (kind == stream_kind::per_thread)
    s = cudaStreamPerThread;
  else if (kind == stream_kind::created && !rec.check(cudaStreamCreate(&s), "cudaStreamCreate"))
    return;
  set_slot<<<1, 1, 0, s>>>(slot, value);
  rec.launched("set_slot");
  rec.check(cudaStreamSynchronize(s), "cudaStreamSynchronize");
  if (kind == stream_kind::created)
    rec.check(cudaStreamDestroy(s), "cudaStreamDestroy");
}

stream_kind kind_for(int i) {
  return static_cast<stream_kind>(i % 3);
}

/// Device memory in use, in MiB (the whole device: this program is expected to be alone on it).
double used_mib(recorder &rec) {
  size_t free_b = 0, total_b = 0;
  rec.check(cudaDeviceSynchronize(), "cudaDeviceSynchronize (before cudaMemGetInfo)");
  if (!rec.check(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo"))
    return 0;
  return double(total_b - free_b) / (1024.0 * 1024.0);
}

struct phase {
  double seconds = 0, growth_mib = 0;
};

} // namespace

int main(int argc, char **argv) {
  int threads = 1000, concurrent = 16;
  double max_growth = 64, timeout_s = 300;
  std::string json;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--threads" && i + 1 < argc)
      threads = std::atoi(argv[++i]);
    else if (a == "--concurrent" && i + 1 < argc)
      concurrent = std::atoi(argv[++i]);
    else if (a == "--json" && i + 1 < argc)
      json = argv[++i];
    else if (a == "--max-growth-mib" && i + 1 < argc)
      max_growth = std::atof(argv[++i]);
    else if (a == "--timeout-s" && i + 1 < argc)
      timeout_s = std::atof(argv[++i]);
    else {
      std::fprintf(stderr, "usage: churn [--threads N] [--concurrent K] [--json FILE] "
                           "[--max-growth-mib M] [--timeout-s S]\n");
      return 2;
    }
  }
  if (threads < 1 || concurrent < 1 || timeout_s <= 0) {
    std::fprintf(stderr, "churn: --threads and --concurrent must be >= 1\n");
    return 2;
  }
  int count = 0;
  const cudaError_t rc = cudaGetDeviceCount(&count);
  if (rc != cudaSuccess || count == 0) {
    std::fprintf(stderr, "churn: no CUDA device (%s): skipped\n",
                 rc == cudaSuccess ? "none found" : cudaGetErrorString(rc));
    return 77;
  }
  run_test::watchdog dog("churn", timeout_s);
  recorder rec("churn");
  int *slots = nullptr, *warm = nullptr;
  const size_t n = size_t(2) * threads;
  if (!rec.check(cudaSetDevice(0), "cudaSetDevice (main)") ||
      !rec.check(cudaMalloc(&slots, n * sizeof(int)), "cudaMalloc") ||
      !rec.check(cudaMalloc(&warm, 3 * sizeof(int)), "cudaMalloc") ||
      !rec.check(cudaMemset(slots, 0, n * sizeof(int)), "cudaMemset")) {
    std::printf("churn: FAILED (%s)\n", rec.summary().c_str());
    return 1;
  }
  // Warm-up: one thread of each kind, so that what CUDA sets up once is not counted.
  dog.at("warm-up");
  for (int k = 0; k < 3; ++k)
    std::thread(one_thread, std::ref(rec), warm + k, 1, static_cast<stream_kind>(k)).join();
  const double before = used_mib(rec);

  dog.at("sequential threads");
  phase seq, conc;
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < threads && rec.count() < 20; ++i)
    std::thread(one_thread, std::ref(rec), slots + i, i + 1, stream_kind::legacy).join();
  seq.seconds = run_test::seconds_since(start);
  const double middle = used_mib(rec);
  seq.growth_mib = middle - before;

  dog.at("concurrent threads");
  start = std::chrono::steady_clock::now();
  for (int first = 0; first < threads && rec.count() < 20; first += concurrent) {
    std::vector<std::thread> batch;
    for (int i = first; i < threads && i < first + concurrent; ++i)
      batch.emplace_back(one_thread, std::ref(rec), slots + threads + i, threads + i + 1,
                         kind_for(i));
    for (auto &t : batch)
      t.join();
  }
  conc.seconds = run_test::seconds_since(start);
  const double after = used_mib(rec);
  conc.growth_mib = after - middle;
  const double growth = after - before;

  dog.at("checking");
  std::vector<int> h(n, -1);
  if (rec.check(cudaMemcpy(h.data(), slots, n * sizeof(int), cudaMemcpyDeviceToHost),
                "cudaMemcpy (results)")) {
    size_t wrong = 0;
    std::string first;
    for (size_t i = 0; i < n; ++i)
      if (h[i] != int(i + 1) && wrong++ == 0)
        first = format("slot %zu holds %d, expected %zu", i, h[i], i + 1);
    rec.expect(wrong == 0, format("%zu of %zu threads' kernels did not write their slot (first: "
                                  "%s)",
                                  wrong, n, first.c_str()));
  }
  cudaFree(slots);
  cudaFree(warm);

  const double ms_seq = seq.seconds * 1e3 / threads, ms_conc = conc.seconds * 1e3 / threads;
  std::fprintf(stderr,
               "churn: device memory in use %.1f MiB before, %.1f after %d sequential threads, "
               "%.1f after %d more %d at a time: growth %.1f MiB (limit %.0f)\n"
               "churn: %.4f ms per sequential thread, %.4f ms per concurrent thread\n",
               before, middle, threads, after, threads, concurrent, growth, max_growth, ms_seq,
               ms_conc);
  if (!json.empty()) {
    FILE *f = std::fopen(json.c_str(), "w");
    if (!f) {
      std::fprintf(stderr, "churn: cannot write %s\n", json.c_str());
      rec.fail("cannot write the --json file");
    } else {
      std::fprintf(f,
                   "{\"threads\":%d,\"memory_growth_mib\":%.3f,\"ms_per_thread\":%.5f,"
                   "\"memory_before_mib\":%.3f,\"max_growth_mib\":%.1f,"
                   "\"sequential\":{\"threads\":%d,\"memory_growth_mib\":%.3f,"
                   "\"ms_per_thread\":%.5f},"
                   "\"concurrent\":{\"threads\":%d,\"at_a_time\":%d,\"memory_growth_mib\":%.3f,"
                   "\"ms_per_thread\":%.5f},\"results_ok\":%s}\n",
                   2 * threads, growth, ms_seq, before, max_growth, threads, seq.growth_mib, ms_seq,
                   threads, concurrent, conc.growth_mib, ms_conc, rec.ok() ? "true" : "false");
      std::fclose(f);
    }
  }
  if (!rec.ok()) {
    std::printf("churn: FAILED (%s)\n", rec.summary().c_str());
    return 1;
  }
  std::printf("churn: ok\n");
  if (growth > max_growth || seq.growth_mib > max_growth) {
    std::fprintf(stderr,
                 "churn: FAILED: device memory grew by %.1f MiB (%.1f in the sequential "
                 "phase), more than %.0f MiB\n",
                 growth, seq.growth_mib, max_growth);
    return 1;
  }
  return 0;
}
