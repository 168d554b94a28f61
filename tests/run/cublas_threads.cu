// SPDX-License-Identifier: Apache-2.0
// cuBLAS from 8 threads at once, each with its own handle and stream: thread 0 on the legacy
// stream, threads 1-3 on blocking streams (cudaStreamCreate), 4-6 on non-blocking streams, 7 on
// cudaStreamPerThread. Each computes C = A*B (SGEMM 1024^3) and then C += A*B three times. The
// inputs are integers in -2..2, so every product and sum is an integer below 2^24 and exact in
// fp32 whatever kernel, split or order cuBLAS picks (on fewer SMs it may pick others): the
// checksums must be the same bits plain and under `greenctx run`. Four columns are checked
// against the CPU, so a wrong result fails even when both runs agree. Knows nothing of greenctx.
// --own-workspace gives each handle a workspace of the program's (cublasSetWorkspace) instead of
// cuBLAS's default one, which cuBLAS reaches on cudaStreamPerThread through a path `greenctx run`
// cannot translate (docs/run-design.md, "cuBLAS on cudaStreamPerThread").
//
//   cublas_threads [--timeout-s S] [--own-workspace]
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "run_common.cuh"

#include <cstdint>
#include <string>
#include <thread>
#include <vector>

namespace {

using run_test::format;
using run_test::recorder;

constexpr int threads = 8, n = 1024, repeats = 4;
constexpr size_t workspace_bytes = 32u << 20;
bool own_workspace = false; // --own-workspace
constexpr int checked_columns[] = {0, 1, 517, n - 1};

bool check_blas(recorder &rec, cublasStatus_t rc, const std::string &what) {
  if (rc == CUBLAS_STATUS_SUCCESS)
    return true;
  rec.fail(what + ": " + cublasGetStatusString(rc) + format(" (%d)", int(rc)));
  return false;
}

/// A's and B's elements for thread t: integers in -2..2, different per thread and matrix.
float element(size_t i, int t, int matrix) {
  const uint32_t h =
      static_cast<uint32_t>(i) * 2654435761u + uint32_t(t) * 97u + uint32_t(matrix) * 131u;
  return static_cast<float>((h >> 7) % 5) - 2.0f;
}

const char *stream_kind(int t) {
  return t == 0   ? "legacy stream"
         : t <= 3 ? "blocking stream"
         : t <= 6 ? "non-blocking stream"
                  : "cudaStreamPerThread";
}

struct result {
  long long checksum = 0;
  bool done = false;
};

void work(int t, recorder &rec, run_test::host_flag &ready, result &out) {
  const size_t count = size_t(n) * n;
  std::vector<float> a(count), b(count), c(count, -1.0f);
  for (size_t i = 0; i < count; ++i) {
    a[i] = element(i, t, 0);
    b[i] = element(i, t, 1);
  }
  cudaStream_t s = nullptr;
  cublasHandle_t h = nullptr;
  float *da = nullptr, *db = nullptr, *dc = nullptr;
  bool ok = rec.check(cudaSetDevice(0), "cudaSetDevice");
  if (ok) {
    if (t == 0)
      s = 0; // the legacy stream: this program is built with the legacy default stream
    else if (t <= 3)
      ok = rec.check(cudaStreamCreate(&s), "cudaStreamCreate");
    else if (t <= 6)
      ok = rec.check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking),
                     "cudaStreamCreateWithFlags(NonBlocking)");
    else
      s = cudaStreamPerThread;
  }
  void *workspace = nullptr;
  ok = ok && check_blas(rec, cublasCreate(&h), "cublasCreate") &&
       check_blas(rec, cublasSetStream(h, s), "cublasSetStream") &&
       (!own_workspace ||
        (rec.check(cudaMalloc(&workspace, workspace_bytes), "cudaMalloc workspace") &&
         check_blas(rec, cublasSetWorkspace(h, workspace, workspace_bytes),
                    "cublasSetWorkspace"))) &&
       rec.check(cudaMalloc(&da, count * sizeof(float)), "cudaMalloc A") &&
       rec.check(cudaMalloc(&db, count * sizeof(float)), "cudaMalloc B") &&
       rec.check(cudaMalloc(&dc, count * sizeof(float)), "cudaMalloc C") &&
       rec.check(cudaMemcpyAsync(da, a.data(), count * sizeof(float), cudaMemcpyHostToDevice, s),
                 "copy A") &&
       rec.check(cudaMemcpyAsync(db, b.data(), count * sizeof(float), cudaMemcpyHostToDevice, s),
                 "copy B") &&
       rec.check(cudaStreamSynchronize(s), "cudaStreamSynchronize (inputs)");
  // All threads start their GEMMs together.
  ready.add();
  if (!ready.wait_at_least(threads, std::chrono::seconds(60)))
    rec.fail("the other threads never got ready");
  const float one = 1.0f, zero = 0.0f;
  for (int r = 0; ok && r < repeats; ++r)
    ok = check_blas(rec,
                    cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, da, n, db, n,
                                r == 0 ? &zero : &one, dc, n),
                    format("cublasSgemm %d", r));
  ok = ok &&
       rec.check(cudaMemcpyAsync(c.data(), dc, count * sizeof(float), cudaMemcpyDeviceToHost, s),
                 "copy C") &&
       rec.check(cudaStreamSynchronize(s), "cudaStreamSynchronize (result)");
  if (ok) {
    // Column-major: C(i, j) = c[i + j n] = repeats * sum_k A(i, k) B(k, j).
    long long sum = 0;
    size_t not_integer = 0;
    for (size_t i = 0; i < count; ++i) {
      const long long v = static_cast<long long>(c[i]);
      not_integer += static_cast<float>(v) != c[i];
      sum += v * static_cast<long long>(i % 7 + 1);
    }
    rec.expect(not_integer == 0, format("%zu elements of C are not integers", not_integer));
    size_t wrong = 0;
    std::string first;
    for (int j : checked_columns)
      for (int i = 0; i < n; ++i) {
        long long want = 0;
        for (int k = 0; k < n; ++k)
          want += static_cast<long long>(a[i + size_t(k) * n]) *
                  static_cast<long long>(b[k + size_t(j) * n]);
        want *= repeats;
        if (static_cast<float>(want) != c[i + size_t(j) * n] && wrong++ == 0)
          first = format("C(%d, %d) = %.1f, expected %lld", i, j, c[i + size_t(j) * n], want);
      }
    rec.expect(wrong == 0,
               format("%zu elements of the checked columns wrong, first %s", wrong, first.c_str()));
    out.checksum = sum;
    out.done = true;
  }
  if (h)
    check_blas(rec, cublasDestroy(h), "cublasDestroy");
  if (t >= 1 && t <= 6 && s)
    rec.check(cudaStreamDestroy(s), "cudaStreamDestroy");
  cudaFree(da);
  cudaFree(db);
  cudaFree(dc);
  cudaFree(workspace);
}

} // namespace

int main(int argc, char **argv) {
  double timeout_s = 180;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--timeout-s" && i + 1 < argc) {
      timeout_s = std::atof(argv[++i]);
    } else if (a == "--own-workspace") {
      own_workspace = true;
    } else {
      std::fprintf(stderr, "usage: cublas_threads [--timeout-s S] [--own-workspace]\n");
      return 2;
    }
  }
  if (!run_test::have_gpu("cublas_threads"))
    return 77;
  run_test::watchdog dog("cublas_threads", timeout_s);
  dog.at("8 threads of SGEMM");
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::unique_ptr<recorder>> recs;
  std::vector<result> results(threads);
  run_test::host_flag ready;
  for (int t = 0; t < threads; ++t)
    recs.push_back(std::make_unique<recorder>(format("cublas thread %d", t)));
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back(work, t, std::ref(*recs[t]), std::ref(ready), std::ref(results[t]));
  for (auto &t : pool)
    t.join();
  std::fprintf(stderr, "cublas_threads: %.3f s\n", run_test::seconds_since(start));
  int failed = 0;
  for (int t = 0; t < threads; ++t) {
    if (recs[t]->ok() && results[t].done) {
      std::printf("thread %d (%s): %d x SGEMM %d^3, checksum %lld\n", t, stream_kind(t), repeats, n,
                  results[t].checksum);
    } else {
      std::printf("thread %d (%s): FAILED (%s)\n", t, stream_kind(t), recs[t]->summary().c_str());
      ++failed;
    }
  }
  std::printf("cublas_threads: %s\n", failed ? "FAILED" : "ok");
  return failed ? 1 : 0;
}
