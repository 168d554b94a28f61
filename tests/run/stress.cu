// SPDX-License-Identifier: Apache-2.0
// A load test of one CUDA context shared by many threads, which is what `greenctx run` makes of a
// program (one green context per device, current on every thread). 64 threads issue about a
// million kernel launches in all (--launches), mixing: the legacy stream; created blocking and
// non-blocking streams; cudaStreamPerThread; cudaMemsetAsync / cudaMemcpyAsync (device to device,
// host to device) each followed by a kernel that checks the bytes; a blocking stream's kernel
// followed by a legacy-stream kernel that must see its value; events recorded in one thread and
// waited for in another (8 producer/consumer pairs); CUDA graphs captured (thread-local mode) and
// replayed on 8 threads, recaptured now and then; cuBLAS SGEMMs on 8 threads' own handles, checked
// by a kernel; and cudaDeviceSynchronize now and then. Every kernel adds 1 to a counter of its
// thread and kind, so the counters must equal the launches; every check kernel counts mismatches,
// which must be 0; every CUDA error is said and counted. Prints deterministic totals on stdout
// (equal plain and under `greenctx run`), timing on stderr. Knows nothing of greenctx.
//
//   stress [--launches N] [--threads T] [--smid-out FILE] [--timeout-s S]
//
// Stream capture: captures are on non-blocking streams (legacy-stream work elsewhere is then
// allowed), and a capture never overlaps a cudaDeviceSynchronize (CUDA forbids synchronizing a
// device while one of its streams captures): a shared_mutex, shared by captures, exclusive for
// device synchronizations. Nothing allocates inside the loop.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "run_common.cuh"

#include <array>
#include <cstring>
#include <shared_mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

using run_test::format;
using run_test::host_flag;
using run_test::recorder;
using ull = unsigned long long;

// ---- what each thread counts
// ----------------------------------------------------------------------

enum counter : int {
  c_legacy,                // bump kernels on the legacy stream
  c_blocking,              // ... on the thread's blocking stream
  c_nonblocking,           // ... on its non-blocking stream
  c_per_thread,            // ... on cudaStreamPerThread
  c_graph,                 // bump nodes of graph replays
  c_memop_checks,          // check kernels after memset / memcpy
  c_legacy_after_blocking, // legacy-stream checks of a blocking stream's value
  c_handoffs,              // consumer checks after waiting for the producer's event
  c_cublas,                // check kernels after an SGEMM
  c_count
};
const char *const counter_names[c_count] = {
    "legacy stream kernels",        "blocking stream kernels",   "non-blocking stream kernels",
    "cudaStreamPerThread kernels",  "graph kernel nodes",        "memset/memcpy checks",
    "legacy-after-blocking checks", "cross-thread event checks", "cuBLAS SGEMM checks"};

constexpr size_t scratch_bytes = 4096;
constexpr int gemm_n = 128;
constexpr int graph_nodes = 8;
constexpr unsigned char pattern_byte = 0x5a;

// ---- kernels
// --------------------------------------------------------------------------------------

__global__ void bump(ull *c) {
  if (threadIdx.x == 0)
    atomicAdd(c, 1ull);
}

/// Counts bytes of p[0..n) that are not `want` into *bad; adds 1 to *counter.
__global__ void check_bytes(const unsigned char *p, size_t n, unsigned char want, ull *counter,
                            ull *bad) {
  unsigned wrong = 0;
  for (size_t i = threadIdx.x; i < n; i += blockDim.x)
    wrong += p[i] != want;
  if (wrong)
    atomicAdd(bad, ull(wrong));
  if (threadIdx.x == 0)
    atomicAdd(counter, 1ull);
}

/// *slot must be at least `want` (values only grow): else counts a mismatch.
__global__ void check_at_least(const int *slot, int want, ull *counter, ull *bad) {
  if (*reinterpret_cast<const volatile int *>(slot) < want)
    atomicAdd(bad, 1ull);
  atomicAdd(counter, 1ull);
}

__global__ void check_floats(const float *c, const float *want, int n, ull *counter, ull *bad) {
  unsigned wrong = 0;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    wrong += c[i] != want[i];
  if (wrong)
    atomicAdd(bad, ull(wrong));
  if (blockIdx.x == 0 && threadIdx.x == 0)
    atomicAdd(counter, 1ull);
}

// ---- shared state
// ---------------------------------------------------------------------------------

struct options {
  long long launches = 1'000'000;
  int threads = 64;
  int sync_every = 1024; // iterations between a thread's cudaDeviceSynchronize
  std::string smid_out;
  double timeout_s = 300;
};
options opt;

enum class role { cublas, graph, producer, consumer, plain };
role role_of(int t) {
  switch (t % 8) {
  case 0:
    return role::cublas;
  case 1:
    return role::graph;
  case 2:
    return role::producer;
  case 3:
    return role::consumer;
  default:
    return role::plain;
  }
}
/// A quarter of the threads have a blocking stream, an eighth use cudaStreamPerThread (every
/// blocking stream costs each legacy-stream operation a join, emulated or not).
bool uses_blocking(int t) {
  return t % 4 == 0;
}
bool uses_per_thread(int t) {
  return t % 8 == 4;
}

struct pair_state {
  host_flag published, acked;
  cudaEvent_t event = nullptr;
  int *slot = nullptr;
};

struct shared {
  recorder rec{"stress"};
  std::atomic<bool> abort{false};
  std::shared_mutex capture_mutex;  // shared: a capture; exclusive: cudaDeviceSynchronize
  ull *counters = nullptr;          // [thread][c_count]
  ull *bad = nullptr;               // [thread]
  int *slots = nullptr;             // [thread]: legacy-after-blocking values
  unsigned char *scratch = nullptr; // [thread][3][scratch_bytes]
  unsigned char *pattern = nullptr; // pinned, scratch_bytes of pattern_byte
  float *gemm_a = nullptr, *gemm_b = nullptr, *gemm_want = nullptr;
  std::vector<pair_state> pairs;
  std::vector<std::array<ull, c_count>> expected; // per thread, what it issued
  std::vector<ull> device_syncs, graph_replays;
  std::vector<ull> value_writes; // spin-then-write kernels (no counter: checked by other kernels)
  std::atomic<int> finished{0};
  std::vector<std::atomic<long long>> progress; // iterations per thread, for the watchdog
  explicit shared(int threads)
      : pairs(threads / 8 + 1), expected(threads), device_syncs(threads), graph_replays(threads),
        value_writes(threads), progress(threads) {}
};

/// Records an error and stops every thread (one error tends to repeat a thousand times).
bool ok_or_stop(shared &sh, cudaError_t rc, const char *what, int t) {
  if (rc == cudaSuccess)
    return true;
  sh.rec.check(rc, format("thread %d: %s", t, what));
  sh.abort.store(true);
  return false;
}
bool launched_or_stop(shared &sh, const char *what, int t) {
  return ok_or_stop(sh, cudaGetLastError(), what, t);
}
bool blas_or_stop(shared &sh, cublasStatus_t rc, const char *what, int t) {
  if (rc == CUBLAS_STATUS_SUCCESS)
    return true;
  sh.rec.fail(format("thread %d: %s: %s (%d)", t, what, cublasGetStatusString(rc), int(rc)));
  sh.abort.store(true);
  return false;
}

// ---- one thread
// -----------------------------------------------------------------------------------

struct thread_streams {
  cudaStream_t blocking = nullptr, nonblocking = nullptr;
  cudaStream_t cublas = nullptr; // the handle's stream
};

/// Captures `graph_nodes` bumps of the thread's graph counter on its non-blocking stream.
bool capture(shared &sh, int t, cudaStream_t s, cudaGraph_t &graph, cudaGraphExec_t &exec) {
  std::shared_lock lock(sh.capture_mutex);
  ull *c = sh.counters + size_t(t) * c_count + c_graph;
  if (!ok_or_stop(sh, cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal),
                  "cudaStreamBeginCapture", t))
    return false;
  for (int k = 0; k < graph_nodes; ++k)
    bump<<<1, 32, 0, s>>>(c);
  const cudaError_t launch_rc = cudaGetLastError();
  cudaGraph_t g = nullptr;
  const cudaError_t end_rc = cudaStreamEndCapture(s, &g);
  if (!ok_or_stop(sh, launch_rc, "launch during capture", t) ||
      !ok_or_stop(sh, end_rc, "cudaStreamEndCapture", t))
    return false;
  cudaGraphExec_t e = nullptr;
  if (!ok_or_stop(sh, cudaGraphInstantiate(&e, g, 0), "cudaGraphInstantiate", t)) {
    cudaGraphDestroy(g);
    return false;
  }
  if (exec)
    ok_or_stop(sh, cudaGraphExecDestroy(exec), "cudaGraphExecDestroy", t);
  if (graph)
    ok_or_stop(sh, cudaGraphDestroy(graph), "cudaGraphDestroy", t);
  graph = g;
  exec = e;
  return true;
}

/// The thread's whole run: set-up, then `iterations` operations from a fixed schedule.
void work(shared &sh, int t, host_flag &ready, host_flag &go, long long budget) {
  ull *ctr = sh.counters + size_t(t) * c_count;
  ull *bad = sh.bad + t;
  auto &issued = sh.expected[t];
  unsigned char *scr = sh.scratch + size_t(t) * 3 * scratch_bytes;
  const role r = role_of(t);
  const bool blk = uses_blocking(t), pts = uses_per_thread(t);
  thread_streams st;
  cublasHandle_t handle = nullptr;
  float *gemm_c = nullptr;
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  pair_state *pair = (r == role::producer || r == role::consumer) ? &sh.pairs[t / 8] : nullptr;

  // Set-up: everything that allocates or loads happens here, before the loop.
  bool ok = ok_or_stop(sh, cudaSetDevice(0), "cudaSetDevice", t) &&
            ok_or_stop(sh, cudaStreamCreateWithFlags(&st.nonblocking, cudaStreamNonBlocking),
                       "cudaStreamCreateWithFlags(NonBlocking)", t) &&
            (!blk || ok_or_stop(sh, cudaStreamCreate(&st.blocking), "cudaStreamCreate", t));
  if (ok && r == role::cublas) {
    st.cublas = t == 0 ? cudaStream_t(0) : t % 16 == 0 ? st.blocking : st.nonblocking;
    const float one = 1.0f, zero = 0.0f;
    ok = blas_or_stop(sh, cublasCreate(&handle), "cublasCreate", t) &&
         blas_or_stop(sh, cublasSetStream(handle, st.cublas), "cublasSetStream", t) &&
         ok_or_stop(sh, cudaMalloc(&gemm_c, sizeof(float) * gemm_n * gemm_n), "cudaMalloc", t) &&
         blas_or_stop(sh,
                      cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, gemm_n, gemm_n, gemm_n, &one,
                                  sh.gemm_a, gemm_n, sh.gemm_b, gemm_n, &zero, gemm_c, gemm_n),
                      "cublasSgemm (warm-up)", t) &&
         ok_or_stop(sh, cudaStreamSynchronize(st.cublas), "cudaStreamSynchronize (warm-up)", t);
  }
  ready.add();
  if (!go.wait_at_least(1, std::chrono::seconds(120), &sh.abort)) {
    sh.abort.store(true);
    ok = false;
  }

  const float one = 1.0f, zero = 0.0f;
  const cudaStream_t sx = blk ? st.blocking : st.nonblocking; // memset/memcpy stream
  long long launched = 0, i = 0, round = 0;
  unsigned char last_byte = 0;
  int slot_seq = 0;
  // Bumps on the named stream kind, counted.
  auto bump_on = [&](counter kind, cudaStream_t s, const char *what) {
    bump<<<1, 32, 0, s>>>(ctr + kind);
    ++issued[kind];
    ++launched;
    return launched_or_stop(sh, what, t);
  };
  auto bump_blocking = [&] {
    return blk ? bump_on(c_blocking, st.blocking, "bump (blocking stream)")
               : bump_on(c_nonblocking, st.nonblocking, "bump (non-blocking stream)");
  };
  auto bump_per_thread = [&] {
    return pts ? bump_on(c_per_thread, cudaStreamPerThread, "bump (cudaStreamPerThread)")
               : bump_on(c_nonblocking, st.nonblocking, "bump (non-blocking stream)");
  };

  for (; ok && launched < budget && !sh.abort.load(std::memory_order_relaxed); ++i) {
    if (r == role::graph && i % 1024 == 0 && !capture(sh, t, st.nonblocking, graph, exec))
      break;
    switch (i % 16) {
    case 0:
      ok = bump_on(c_legacy, 0, "bump (legacy stream)");
      break;
    case 2:
    case 12:
      ok = bump_blocking();
      break;
    case 4: // memset then a check, in order on one stream
      last_byte = static_cast<unsigned char>(1 + (i / 16) % 250);
      ok = ok_or_stop(sh, cudaMemsetAsync(scr, last_byte, scratch_bytes, sx), "cudaMemsetAsync", t);
      check_bytes<<<1, 256, 0, sx>>>(scr, scratch_bytes, last_byte, ctr + c_memop_checks, bad);
      ++issued[c_memop_checks];
      ++launched;
      ok = ok && launched_or_stop(sh, "check_bytes (after memset)", t);
      break;
    case 6: // device-to-device copy of the memset bytes, then a check
      ok = ok_or_stop(
          sh,
          cudaMemcpyAsync(scr + scratch_bytes, scr, scratch_bytes, cudaMemcpyDeviceToDevice, sx),
          "cudaMemcpyAsync (device to device)", t);
      check_bytes<<<1, 256, 0, sx>>>(scr + scratch_bytes, scratch_bytes, last_byte,
                                     ctr + c_memop_checks, bad);
      ++issued[c_memop_checks];
      ++launched;
      ok = ok && launched_or_stop(sh, "check_bytes (after device copy)", t);
      break;
    case 7:
    case 15:
      ok = bump_per_thread();
      break;
    case 8: // host-to-device copy from pinned memory, a check, then clear it for the next time
      ok = ok_or_stop(sh,
                      cudaMemcpyAsync(scr + 2 * scratch_bytes, sh.pattern, scratch_bytes,
                                      cudaMemcpyHostToDevice, st.nonblocking),
                      "cudaMemcpyAsync (host to device)", t);
      check_bytes<<<1, 256, 0, st.nonblocking>>>(scr + 2 * scratch_bytes, scratch_bytes,
                                                 pattern_byte, ctr + c_memop_checks, bad);
      ++issued[c_memop_checks];
      ++launched;
      ok =
          ok && launched_or_stop(sh, "check_bytes (after host copy)", t) &&
          ok_or_stop(sh, cudaMemsetAsync(scr + 2 * scratch_bytes, 0, scratch_bytes, st.nonblocking),
                     "cudaMemsetAsync (clear)", t);
      break;
    case 10: // a blocking stream's value, checked by a legacy-stream kernel
      if (blk) {
        ++slot_seq;
        run_test::spin_then_write<<<1, 1, 0, st.blocking>>>(sh.slots + t, slot_seq, 5000);
        ++sh.value_writes[t];
        ++launched;
        ok = launched_or_stop(sh, "spin_then_write (blocking stream)", t);
        check_at_least<<<1, 1, 0, 0>>>(sh.slots + t, slot_seq, ctr + c_legacy_after_blocking, bad);
        ++issued[c_legacy_after_blocking];
        ++launched;
        ok = ok && launched_or_stop(sh, "check_at_least (legacy stream)", t);
      } else {
        ok = bump_on(c_nonblocking, st.nonblocking, "bump (non-blocking stream)");
      }
      break;
    case 11: // the thread's role
      switch (r) {
      case role::cublas:
        ok =
            blas_or_stop(sh,
                         cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, gemm_n, gemm_n, gemm_n, &one,
                                     sh.gemm_a, gemm_n, sh.gemm_b, gemm_n, &zero, gemm_c, gemm_n),
                         "cublasSgemm", t);
        check_floats<<<16, 256, 0, st.cublas>>>(gemm_c, sh.gemm_want, gemm_n * gemm_n,
                                                ctr + c_cublas, bad);
        ++issued[c_cublas];
        ++launched;
        ok = ok && launched_or_stop(sh, "check_floats", t);
        break;
      case role::graph:
        ok = ok_or_stop(sh, cudaGraphLaunch(exec, st.nonblocking), "cudaGraphLaunch", t);
        issued[c_graph] += graph_nodes;
        launched += graph_nodes;
        ++sh.graph_replays[t];
        break;
      case role::producer: // round k: wait for the consumer's round k-1, write k, record
        ++round;
        if (!pair->acked.wait_at_least(int(round - 1), std::chrono::seconds(30), &sh.abort)) {
          if (!sh.abort.load())
            sh.rec.fail(
                format("thread %d: the consumer never acknowledged round %lld", t, round - 1));
          sh.abort.store(true);
          ok = false;
          break;
        }
        run_test::spin_then_write<<<1, 1, 0, st.nonblocking>>>(pair->slot, int(round), 20000);
        ++sh.value_writes[t];
        ++launched;
        ok = launched_or_stop(sh, "spin_then_write (producer)", t) &&
             ok_or_stop(sh, cudaEventRecord(pair->event, st.nonblocking), "cudaEventRecord", t);
        pair->published.set(int(round));
        break;
      case role::consumer: // round k: wait for the producer's event, check the value is k
        ++round;
        if (!pair->published.wait_at_least(int(round), std::chrono::seconds(30), &sh.abort)) {
          if (!sh.abort.load())
            sh.rec.fail(format("thread %d: the producer never published round %lld", t, round));
          sh.abort.store(true);
          ok = false;
          break;
        }
        ok = ok_or_stop(sh, cudaStreamWaitEvent(st.nonblocking, pair->event, 0),
                        "cudaStreamWaitEvent", t);
        check_at_least<<<1, 1, 0, st.nonblocking>>>(pair->slot, int(round), ctr + c_handoffs, bad);
        ++issued[c_handoffs];
        ++launched;
        ok = ok && launched_or_stop(sh, "check_at_least (consumer)", t);
        pair->acked.set(int(round));
        break;
      case role::plain:
        ok = bump_on(c_nonblocking, st.nonblocking, "bump (non-blocking stream)");
        break;
      }
      break;
    default: // 1, 3, 5, 9, 13, 14
      ok = bump_on(c_nonblocking, st.nonblocking, "bump (non-blocking stream)");
      break;
    }
    if (!ok)
      break;
    if (i % 256 == 255) { // keep the queues bounded
      ok = ok_or_stop(sh, cudaStreamSynchronize(st.nonblocking), "cudaStreamSynchronize", t) &&
           (!blk || ok_or_stop(sh, cudaStreamSynchronize(st.blocking), "cudaStreamSynchronize", t));
    }
    if ((i + 37 * t) % opt.sync_every == opt.sync_every - 1) {
      std::unique_lock lock(sh.capture_mutex);
      ok = ok && ok_or_stop(sh, cudaDeviceSynchronize(), "cudaDeviceSynchronize", t);
      ++sh.device_syncs[t];
    }
    sh.progress[t].store(i + 1, std::memory_order_relaxed);
  }
  // A producer or consumer that stopped early must not leave its partner waiting.
  if (pair && (sh.abort.load() || !ok))
    sh.abort.store(true);

  ok_or_stop(sh, cudaStreamSynchronize(st.nonblocking), "cudaStreamSynchronize (end)", t);
  if (st.blocking)
    ok_or_stop(sh, cudaStreamSynchronize(st.blocking), "cudaStreamSynchronize (end)", t);
  if (pts)
    ok_or_stop(sh, cudaStreamSynchronize(cudaStreamPerThread), "cudaStreamSynchronize (end)", t);
  if (exec)
    cudaGraphExecDestroy(exec);
  if (graph)
    cudaGraphDestroy(graph);
  if (handle)
    blas_or_stop(sh, cublasDestroy(handle), "cublasDestroy", t);
  if (gemm_c)
    cudaFree(gemm_c);
  if (st.blocking)
    cudaStreamDestroy(st.blocking);
  if (st.nonblocking)
    cudaStreamDestroy(st.nonblocking);
  sh.finished.fetch_add(1);
}

/// cuBLAS's inputs (integers in -2..2, column-major) and the exact product, on the device.
bool make_gemm_inputs(shared &sh) {
  const int n = gemm_n;
  std::vector<float> a(n * n), b(n * n), want(n * n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      a[i + j * n] = float((i * 3 + j * 5) % 5 - 2);
      b[i + j * n] = float((i * 7 + j * 2 + 1) % 5 - 2);
    }
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      int s = 0;
      for (int k = 0; k < n; ++k)
        s += int(a[i + k * n]) * int(b[k + j * n]);
      want[i + j * n] = float(s);
    }
  const size_t bytes = sizeof(float) * n * n;
  return sh.rec.check(cudaMalloc(&sh.gemm_a, bytes), "cudaMalloc") &&
         sh.rec.check(cudaMalloc(&sh.gemm_b, bytes), "cudaMalloc") &&
         sh.rec.check(cudaMalloc(&sh.gemm_want, bytes), "cudaMalloc") &&
         sh.rec.check(cudaMemcpy(sh.gemm_a, a.data(), bytes, cudaMemcpyHostToDevice), "copy") &&
         sh.rec.check(cudaMemcpy(sh.gemm_b, b.data(), bytes, cudaMemcpyHostToDevice), "copy") &&
         sh.rec.check(cudaMemcpy(sh.gemm_want, want.data(), bytes, cudaMemcpyHostToDevice), "copy");
}

/// %smid probes on each kind of stream the threads used, and in a captured graph.
void probe_all(run_test::smid_log &smids, recorder &rec) {
  cudaStream_t b = nullptr, nb = nullptr;
  smids.probe("stress_legacy", 0, rec);
  smids.probe("stress_per_thread", cudaStreamPerThread, rec);
  if (rec.check(cudaStreamCreate(&b), "cudaStreamCreate (probe)")) {
    smids.probe("stress_blocking", b, rec);
    cudaStreamDestroy(b);
  }
  if (!rec.check(cudaStreamCreateWithFlags(&nb, cudaStreamNonBlocking), "cudaStreamCreate (probe)"))
    return;
  smids.probe("stress_nonblocking", nb, rec);
  unsigned *d = nullptr;
  const size_t bytes = run_test::probe_blocks * sizeof(unsigned);
  if (rec.check(cudaMalloc(&d, bytes), "cudaMalloc (graph probe)")) {
    cudaGraph_t g = nullptr;
    cudaGraphExec_t e = nullptr;
    std::vector<unsigned> h(run_test::probe_blocks, ~0u);
    if (rec.check(cudaMemset(d, 0xff, bytes), "cudaMemset (graph probe)") &&
        rec.check(cudaStreamBeginCapture(nb, cudaStreamCaptureModeThreadLocal),
                  "cudaStreamBeginCapture (graph probe)")) {
      greenctx_test::record_smid<<<run_test::probe_blocks, 32, 0, nb>>>(d, run_test::probe_spin_ns);
      rec.launched("record_smid (graph probe)");
      if (rec.check(cudaStreamEndCapture(nb, &g), "cudaStreamEndCapture (graph probe)") &&
          rec.check(cudaGraphInstantiate(&e, g, 0), "cudaGraphInstantiate (graph probe)") &&
          rec.check(cudaGraphLaunch(e, nb), "cudaGraphLaunch (graph probe)") &&
          rec.check(cudaMemcpyAsync(h.data(), d, bytes, cudaMemcpyDeviceToHost, nb),
                    "copy (graph probe)") &&
          rec.check(cudaStreamSynchronize(nb), "cudaStreamSynchronize (graph probe)")) {
        std::set<unsigned> sms;
        for (unsigned id : h)
          if (id != ~0u)
            sms.insert(id);
        smids.add("stress_graph", 0, sms);
      }
    }
    if (e)
      cudaGraphExecDestroy(e);
    if (g)
      cudaGraphDestroy(g);
    cudaFree(d);
  }
  cudaStreamDestroy(nb);
}

} // namespace

int main(int argc, char **argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--launches" && i + 1 < argc)
      opt.launches = std::atoll(argv[++i]);
    else if (a == "--threads" && i + 1 < argc)
      opt.threads = std::atoi(argv[++i]);
    else if (a == "--smid-out" && i + 1 < argc)
      opt.smid_out = argv[++i];
    else if (a == "--timeout-s" && i + 1 < argc)
      opt.timeout_s = std::atof(argv[++i]);
    else {
      std::fprintf(stderr, "usage: stress [--launches N] [--threads T (a multiple of 8)] "
                           "[--smid-out FILE] [--timeout-s S]\n");
      return 2;
    }
  }
  if (opt.threads < 8 || opt.threads % 8 || opt.launches < opt.threads || opt.timeout_s <= 0) {
    std::fprintf(stderr, "stress: --threads must be a multiple of 8 and --launches at least "
                         "--threads\n");
    return 2;
  }
  int count = 0;
  const cudaError_t rc = cudaGetDeviceCount(&count);
  if (rc != cudaSuccess || count == 0) {
    std::fprintf(stderr, "stress: no CUDA device (%s): skipped\n",
                 rc == cudaSuccess ? "none found" : cudaGetErrorString(rc));
    return 77;
  }
  run_test::watchdog dog("stress", opt.timeout_s);
  dog.at("set-up");
  const int threads = opt.threads;
  shared sh(threads);
  const size_t ctr_bytes = sizeof(ull) * threads * c_count;
  bool ok = sh.rec.check(cudaSetDevice(0), "cudaSetDevice") &&
            sh.rec.check(cudaMalloc(&sh.counters, ctr_bytes), "cudaMalloc") &&
            sh.rec.check(cudaMalloc(&sh.bad, sizeof(ull) * threads), "cudaMalloc") &&
            sh.rec.check(cudaMalloc(&sh.slots, sizeof(int) * threads), "cudaMalloc") &&
            sh.rec.check(cudaMalloc(&sh.scratch, 3 * scratch_bytes * threads), "cudaMalloc") &&
            sh.rec.check(cudaMallocHost(&sh.pattern, scratch_bytes), "cudaMallocHost") &&
            sh.rec.check(cudaMemset(sh.counters, 0, ctr_bytes), "cudaMemset") &&
            sh.rec.check(cudaMemset(sh.bad, 0, sizeof(ull) * threads), "cudaMemset") &&
            sh.rec.check(cudaMemset(sh.slots, 0, sizeof(int) * threads), "cudaMemset") &&
            make_gemm_inputs(sh);
  if (ok) {
    std::memset(sh.pattern, pattern_byte, scratch_bytes);
    for (auto &p : sh.pairs) {
      ok = ok &&
           sh.rec.check(cudaEventCreateWithFlags(&p.event, cudaEventDisableTiming),
                        "cudaEventCreate") &&
           sh.rec.check(cudaMalloc(&p.slot, sizeof(int)), "cudaMalloc") &&
           sh.rec.check(cudaMemset(p.slot, 0, sizeof(int)), "cudaMemset");
    }
  }
  // Every kernel once, so that no module is loaded while a stream captures.
  if (ok) {
    ull *scratch_ctr = sh.counters; // corrected below by clearing all counters again
    bump<<<1, 32>>>(scratch_ctr);
    check_bytes<<<1, 256>>>(sh.scratch, scratch_bytes, 0, scratch_ctr, scratch_ctr);
    check_at_least<<<1, 1>>>(sh.slots, 0, scratch_ctr, scratch_ctr);
    check_floats<<<1, 256>>>(sh.gemm_want, sh.gemm_want, 16, scratch_ctr, scratch_ctr);
    run_test::spin_then_write<<<1, 1>>>(sh.slots, 0, 1000);
    ok = sh.rec.launched("warm-up kernels") &&
         sh.rec.check(cudaDeviceSynchronize(), "cudaDeviceSynchronize (warm-up)") &&
         sh.rec.check(cudaMemset(sh.counters, 0, ctr_bytes), "cudaMemset") &&
         sh.rec.check(cudaMemset(sh.bad, 0, sizeof(ull) * threads), "cudaMemset") &&
         sh.rec.check(cudaMemset(sh.slots, 0, sizeof(int) * threads), "cudaMemset") &&
         sh.rec.check(cudaDeviceSynchronize(), "cudaDeviceSynchronize (warm-up)");
  }
  if (!ok) {
    std::printf("stress: FAILED (%s)\n", sh.rec.summary().c_str());
    return 1;
  }

  dog.at("threads starting");
  const long long budget = opt.launches / threads;
  host_flag ready, go;
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back(work, std::ref(sh), t, std::ref(ready), std::ref(go), budget);
  if (!ready.wait_at_least(threads, std::chrono::seconds(120), &sh.abort)) {
    sh.rec.fail(format("only %d of %d threads got ready", ready.get(), threads));
    sh.abort.store(true);
  }
  const auto start = std::chrono::steady_clock::now();
  go.set();
  auto last_report = start;
  while (sh.finished.load() < threads) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    long long done = 0, least = -1;
    for (auto &p : sh.progress) {
      const long long v = p.load(std::memory_order_relaxed);
      done += v;
      least = least < 0 || v < least ? v : least;
    }
    dog.at(format("main loop: %d of %d threads finished, %lld iterations in all, the slowest "
                  "thread at %lld",
                  sh.finished.load(), threads, done, least));
    if (run_test::seconds_since(last_report) > 10) {
      last_report = std::chrono::steady_clock::now();
      std::fprintf(stderr, "stress: %.0f s, %d of %d threads finished, %lld iterations\n",
                   run_test::seconds_since(start), sh.finished.load(), threads, done);
    }
  }
  for (auto &t : pool)
    t.join();
  const double seconds = run_test::seconds_since(start);

  dog.at("checking");
  std::vector<ull> counters(size_t(threads) * c_count, 0), bad(threads, 0);
  sh.rec.check(cudaDeviceSynchronize(), "cudaDeviceSynchronize (end)");
  sh.rec.check(cudaMemcpy(counters.data(), sh.counters, ctr_bytes, cudaMemcpyDeviceToHost),
               "cudaMemcpy (counters)");
  sh.rec.check(cudaMemcpy(bad.data(), sh.bad, sizeof(ull) * threads, cudaMemcpyDeviceToHost),
               "cudaMemcpy (mismatches)");
  std::array<ull, c_count> total{};
  ull total_bad = 0, syncs = 0, replays = 0, total_launches = 0, writes = 0;
  size_t counter_mismatches = 0;
  for (int t = 0; t < threads; ++t) {
    for (int k = 0; k < c_count; ++k) {
      const ull want = sh.expected[t][k], got = counters[size_t(t) * c_count + k];
      total[k] += want;
      total_launches += want;
      if (want != got && counter_mismatches++ < 10)
        sh.rec.fail(
            format("thread %d: %s: counter %llu, launched %llu", t, counter_names[k], got, want));
    }
    if (bad[t])
      sh.rec.fail(format("thread %d: %llu mismatches seen by its check kernels", t, bad[t]));
    total_bad += bad[t];
    syncs += sh.device_syncs[t];
    writes += sh.value_writes[t];
    total_launches += sh.value_writes[t];
    replays += sh.graph_replays[t];
  }
  std::fprintf(stderr, "stress: %llu kernels in %.2f s (%.0f per second, %d threads)\n",
               total_launches, seconds, total_launches / seconds, threads);

  if (!opt.smid_out.empty()) {
    run_test::smid_log smids;
    smids.enabled = true;
    probe_all(smids, sh.rec);
    if (!smids.write(opt.smid_out))
      sh.rec.fail("cannot write the --smid-out file");
  }

  std::printf("stress: %d threads, %lld launches asked (%lld per thread)\n", threads, opt.launches,
              budget);
  for (int k = 0; k < c_count; ++k)
    std::printf("%s: %llu\n", counter_names[k], total[k]);
  std::printf("spin-then-write kernels (checked by others): %llu\n", writes);
  std::printf("kernels in all: %llu\n", total_launches);
  std::printf("graph replays: %llu\n", replays);
  std::printf("device synchronizations: %llu\n", syncs);
  std::printf("counters that differ from the launches: %zu\n", counter_mismatches);
  std::printf("mismatches seen by check kernels: %llu\n", total_bad);
  std::printf("errors: %zu\n", sh.rec.count());
  if (!sh.rec.ok()) {
    std::printf("stress: FAILED (%s)\n", sh.rec.summary().c_str());
    return 1;
  }
  std::printf("stress: ok\n");
  return 0;
}
