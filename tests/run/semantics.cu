// SPDX-License-Identifier: Apache-2.0
// CUDA's cross-thread guarantees, each checked so that breaking it is likely to show: a kernel
// spins for --spin-ms (30 ms by default) and then writes a value, and the operation under test
// (a copy, a synchronization, a kernel on another stream, from another thread) must see that
// value. `greenctx run` once gave every thread its own green context, which broke all of these
// (a PyTorch training loop printed nan); this program proves a confined run keeps them. It knows
// nothing of greenctx: run it plain and under `greenctx run --sms N`, the stdouts must be equal.
//
//   semantics [--list] [--spin-ms MS] [--trials N] [--smid-out FILE] [--timeout-s S]
//             [--skip NAME]... [NAME...]      (no NAME: every subtest but those skipped)
//
// Prints "NAME: ok" or "NAME: FAILED (details)" per subtest on stdout, details on stderr too, and
// exits 1 if any failed (2: bad arguments, 77: no GPU). --smid-out FILE writes, per subtest, the
// SMs a short %smid probe on the same kind of stream used: "NAME DEVICE ID ID ...".
#include <cuda.h>
#include <cuda_runtime.h>

#include "run_common.cuh"

#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace {

using run_test::copy_value;
using run_test::format;
using run_test::host_flag;
using run_test::recorder;
using run_test::spin_then_write;

struct options {
  unsigned long long spin_ns = 30'000'000ull;
  int trials = 3;
  std::string smid_out;
  double timeout_s = 180;
};
options opt;
run_test::smid_log smids;

// ---- small helpers
// -------------------------------------------------------------------------------

/// A device int, freed at scope exit.
struct device_int {
  int *p = nullptr;
  device_int(recorder &rec, const char *what) {
    rec.check(cudaMalloc(&p, sizeof(int)), format("cudaMalloc (%s)", what));
  }
  ~device_int() {
    if (p)
      cudaFree(p);
  }
  device_int(const device_int &) = delete;
  device_int &operator=(const device_int &) = delete;
};

/// A pinned host int, freed at scope exit (cudaMemcpyAsync to it is truly asynchronous).
struct pinned_int {
  int *p = nullptr;
  pinned_int(recorder &rec, const char *what) {
    if (rec.check(cudaMallocHost(&p, sizeof(int)), format("cudaMallocHost (%s)", what)))
      *p = -2;
  }
  ~pinned_int() {
    if (p)
      cudaFreeHost(p);
  }
  pinned_int(const pinned_int &) = delete;
  pinned_int &operator=(const pinned_int &) = delete;
};

/// Sets *p to bytes of `byte` (0 -> 0, 0xff -> -1) and waits for the whole device.
bool reset(recorder &rec, int *p, int byte, const char *what) {
  return rec.check(cudaMemset(p, byte, sizeof(int)), format("cudaMemset (%s)", what)) &&
         rec.check(cudaDeviceSynchronize(), format("cudaDeviceSynchronize after reset (%s)", what));
}

/// The value trial `trial`'s kernel writes: never 0 (the reset value) nor -1 (the "not run" mark).
int value_for(int trial, int variant) {
  return 0x1000 + trial * 16 + variant;
}

/// The long kernel, by one thread: spins opt.spin_ns, then *out = value.
bool launch_spin(recorder &rec, int *out, int value, cudaStream_t s, const std::string &where) {
  spin_then_write<<<1, 1, 0, s>>>(out, value, opt.spin_ns);
  return rec.launched("spin_then_write (" + where + ")");
}

bool launch_copy(recorder &rec, const int *src, int *dst, cudaStream_t s,
                 const std::string &where) {
  copy_value<<<1, 1, 0, s>>>(src, dst);
  return rec.launched("copy_value (" + where + ")");
}

bool set_device(recorder &rec, const char *who) {
  return rec.check(cudaSetDevice(0), format("cudaSetDevice(0) (%s)", who));
}

const char *legacy_name(cudaStream_t s) {
  return s == cudaStreamLegacy ? "cudaStreamLegacy" : "0";
}

/// Trials alternate between the two spellings of the legacy stream in a legacy-stream program.
cudaStream_t legacy_for(int trial) {
  return trial % 2 ? cudaStreamLegacy : cudaStream_t(0);
}

/// Reads *d with a blocking cudaMemcpy (legacy stream, pageable memory).
int read_blocking(recorder &rec, const int *d, const char *what) {
  int h = -3;
  rec.check(cudaMemcpy(&h, d, sizeof(int), cudaMemcpyDeviceToHost),
            format("cudaMemcpy (%s)", what));
  return h;
}

/// Reads *d on `s` only: cudaMemcpyAsync into pinned memory, then cudaStreamSynchronize(s).
int read_on(recorder &rec, const int *d, cudaStream_t s, pinned_int &h, const std::string &what) {
  if (!h.p)
    return -3;
  *h.p = -3;
  rec.check(cudaMemcpyAsync(h.p, d, sizeof(int), cudaMemcpyDeviceToHost, s),
            "cudaMemcpyAsync (" + what + ")");
  rec.check(cudaStreamSynchronize(s), "cudaStreamSynchronize (" + what + ")");
  return *h.p;
}

void expect_value(recorder &rec, int got, int want, const std::string &what) {
  if (got == want)
    return;
  const char *why = got == 0    ? " (the old value: the reader was not ordered after the kernel)"
                    : got == -1 ? " (the reading kernel's output was never written)"
                                : "";
  rec.fail(format("%s: read %d, expected %d%s", what.c_str(), got, want, why));
}

// ---- (a) legacy_cross_thread
// ---------------------------------------------------------------------- A worker launches the long
// kernel on the legacy stream and exits without synchronizing; the main thread's blocking
// cudaMemcpy (legacy stream) must wait for it: one legacy stream per device.
void legacy_cross_thread(recorder &rec) {
  device_int d(rec, "value");
  if (!d.p)
    return;
  for (int trial = 0; trial < opt.trials; ++trial) {
    const int v = value_for(trial, 0);
    const cudaStream_t legacy = legacy_for(trial);
    if (!reset(rec, d.p, 0, "value"))
      return;
    std::thread worker([&] {
      if (set_device(rec, "worker"))
        launch_spin(rec, d.p, v, legacy, format("worker, legacy stream %s", legacy_name(legacy)));
      // exits with the kernel still running: no synchronization of any kind
    });
    worker.join();
    expect_value(rec, read_blocking(rec, d.p, "main thread"), v,
                 format("trial %d: main thread's cudaMemcpy after a worker's kernel on legacy "
                        "stream %s",
                        trial, legacy_name(legacy)));
    rec.check(cudaDeviceSynchronize(), "cudaDeviceSynchronize (end of trial)");
  }
  std::thread([&] {
    if (set_device(rec, "probe"))
      smids.probe(rec.name(), 0, rec);
  }).join();
}

// ---- (b) device_sync_covers_threads
// --------------------------------------------------------------- A worker launches the long kernel
// on its own non-blocking stream and tells the main thread through a host atomic, without
// synchronizing; the main thread's cudaDeviceSynchronize must wait for it (then a legacy-stream
// read, which by itself would not wait for a non-blocking stream).
void device_sync_covers_threads(recorder &rec) {
  device_int d(rec, "value");
  if (!d.p)
    return;
  for (int trial = 0; trial < opt.trials; ++trial) {
    const int v = value_for(trial, 0);
    if (!reset(rec, d.p, 0, "value"))
      return;
    host_flag launched, checked;
    std::thread worker([&] {
      cudaStream_t s = nullptr;
      if (set_device(rec, "worker") &&
          rec.check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking),
                    "cudaStreamCreateWithFlags(NonBlocking) (worker)"))
        launch_spin(rec, d.p, v, s, "worker, its non-blocking stream");
      launched.set(); // said even after an error, so the main thread does not wait in vain
      if (!checked.wait_at_least(1))
        rec.fail("worker: the main thread never said it had read the value");
      if (s) {
        if (trial == opt.trials - 1)
          smids.probe(rec.name(), s, rec);
        rec.check(cudaStreamSynchronize(s), "cudaStreamSynchronize (worker)");
        rec.check(cudaStreamDestroy(s), "cudaStreamDestroy (worker)");
      }
    });
    if (!launched.wait_at_least(1))
      rec.fail("the worker never said it had launched");
    rec.check(cudaDeviceSynchronize(), "cudaDeviceSynchronize (main thread)");
    expect_value(
        rec, read_blocking(rec, d.p, "main thread"), v,
        format("trial %d: after the main thread's cudaDeviceSynchronize, a worker's kernel "
               "on its non-blocking stream",
               trial));
    checked.set();
    worker.join();
  }
}

// ---- (c) blocking_stream_flags
// -------------------------------------------------------------------- Streams created with flags 0
// are blocking and say so; non-blocking ones read 1. In two threads.
void blocking_stream_flags(recorder &rec) {
  auto check_flags = [&rec](const char *who) {
    if (!set_device(rec, who))
      return;
    struct made {
      const char *how;
      unsigned want;
      cudaStream_t s = nullptr;
    };
    made streams[] = {{"cudaStreamCreate", 0},
                      {"cudaStreamCreateWithFlags(cudaStreamDefault)", 0},
                      {"cudaStreamCreateWithFlags(cudaStreamNonBlocking)", 1},
                      {"cudaStreamCreateWithPriority(cudaStreamDefault, 0)", 0},
                      {"cudaStreamCreateWithPriority(cudaStreamNonBlocking, 0)", 1}};
    rec.check(cudaStreamCreate(&streams[0].s), format("cudaStreamCreate (%s)", who));
    rec.check(cudaStreamCreateWithFlags(&streams[1].s, cudaStreamDefault),
              format("%s (%s)", streams[1].how, who));
    rec.check(cudaStreamCreateWithFlags(&streams[2].s, cudaStreamNonBlocking),
              format("%s (%s)", streams[2].how, who));
    rec.check(cudaStreamCreateWithPriority(&streams[3].s, cudaStreamDefault, 0),
              format("%s (%s)", streams[3].how, who));
    rec.check(cudaStreamCreateWithPriority(&streams[4].s, cudaStreamNonBlocking, 0),
              format("%s (%s)", streams[4].how, who));
    for (auto &m : streams) {
      if (!m.s)
        continue;
      unsigned flags = 99;
      if (rec.check(cudaStreamGetFlags(m.s, &flags), format("cudaStreamGetFlags (%s)", who)))
        rec.expect(flags == m.want, format("%s: a stream from %s reads flags %u, expected %u", who,
                                           m.how, flags, m.want));
    }
    if (streams[0].s)
      smids.probe(rec.name(), streams[0].s, rec);
    for (auto &m : streams)
      if (m.s)
        rec.check(cudaStreamDestroy(m.s), format("cudaStreamDestroy (%s)", who));
  };
  std::thread worker(check_flags, "worker");
  check_flags("main thread");
  worker.join();
}

// ---- (d) blocking_after_legacy
// -------------------------------------------------------------------- The long kernel on the
// legacy stream, then a kernel on a blocking stream (flags 0) copies the value: a blocking stream
// waits for the legacy stream's earlier work. In the same thread, and with the blocking stream's
// work issued by another thread after a host-side handoff.
void blocking_after_legacy(recorder &rec) {
  device_int d(rec, "value"), out(rec, "copy");
  pinned_int h(rec, "main thread");
  if (!d.p || !out.p)
    return;
  cudaStream_t s = nullptr;
  if (!rec.check(cudaStreamCreate(&s), "cudaStreamCreate (main thread)"))
    return;
  for (int trial = 0; trial < opt.trials; ++trial) {
    const int v = value_for(trial, 0);
    const cudaStream_t legacy = legacy_for(trial);
    if (!reset(rec, d.p, 0, "value") || !reset(rec, out.p, 0xff, "copy"))
      break;
    launch_spin(rec, d.p, v, legacy, format("legacy stream %s", legacy_name(legacy)));
    launch_copy(rec, d.p, out.p, s, "blocking stream, same thread");
    expect_value(
        rec, read_on(rec, out.p, s, h, "blocking stream"), v,
        format("trial %d, same thread: a blocking stream's kernel after legacy stream %s's", trial,
               legacy_name(legacy)));
    rec.check(cudaDeviceSynchronize(), "cudaDeviceSynchronize (end of trial)");
  }
  rec.check(cudaStreamDestroy(s), "cudaStreamDestroy (main thread)");

  for (int trial = 0; trial < opt.trials; ++trial) {
    const int v = value_for(trial, 1);
    const cudaStream_t legacy = legacy_for(trial);
    if (!reset(rec, d.p, 0, "value") || !reset(rec, out.p, 0xff, "copy"))
      return;
    host_flag ready, go, done;
    std::thread worker([&] {
      cudaStream_t ws = nullptr;
      const bool ok = set_device(rec, "worker") &&
                      rec.check(cudaStreamCreate(&ws), "cudaStreamCreate (worker)");
      pinned_int wh(rec, "worker");
      ready.set();
      if (!go.wait_at_least(1))
        rec.fail("worker: the main thread never said it had launched");
      else if (ok && launch_copy(rec, d.p, out.p, ws, "worker's blocking stream"))
        expect_value(rec, read_on(rec, out.p, ws, wh, "worker's blocking stream"), v,
                     format("trial %d, other thread: a worker's blocking-stream kernel after the "
                            "main thread's kernel on legacy stream %s",
                            trial, legacy_name(legacy)));
      done.set();
      if (ws) {
        if (trial == opt.trials - 1)
          smids.probe(rec.name(), ws, rec);
        rec.check(cudaStreamDestroy(ws), "cudaStreamDestroy (worker)");
      }
    });
    if (!ready.wait_at_least(1))
      rec.fail("the worker never said it was ready");
    launch_spin(rec, d.p, v, legacy, format("main thread, legacy stream %s", legacy_name(legacy)));
    go.set();
    if (!done.wait_at_least(1))
      rec.fail("the worker never said it was done");
    worker.join();
    rec.check(cudaDeviceSynchronize(), "cudaDeviceSynchronize (end of trial)");
  }
}

// ---- (e) legacy_after_blocking
// -------------------------------------------------------------------- The long kernel on a
// blocking stream, then legacy-stream work (a kernel, or cudaMemcpyAsync on the legacy stream) and
// a synchronization of the legacy stream only: the legacy stream waits for every blocking stream's
// earlier work. Same thread, and the blocking stream in another thread.
void legacy_after_blocking(recorder &rec) {
  device_int d(rec, "value"), out(rec, "copy");
  pinned_int h(rec, "main thread");
  if (!d.p || !out.p)
    return;
  // Reads *d on the legacy stream: odd variants copy it with a kernel then a blocking cudaMemcpy
  // after cudaStreamSynchronize(legacy); even ones with cudaMemcpyAsync on the legacy stream.
  auto read_on_legacy = [&](int variant) -> int {
    const cudaStream_t legacy = legacy_for(variant / 2);
    if (variant % 2) {
      launch_copy(rec, d.p, out.p, legacy, format("legacy stream %s", legacy_name(legacy)));
      rec.check(cudaStreamSynchronize(legacy), "cudaStreamSynchronize(legacy)");
      return read_blocking(rec, out.p, "copy");
    }
    return read_on(rec, d.p, legacy, h, format("legacy stream %s", legacy_name(legacy)));
  };
  auto what = [](int variant) {
    return variant % 2 ? "a legacy-stream kernel" : "cudaMemcpyAsync on the legacy stream";
  };

  cudaStream_t s = nullptr;
  if (!rec.check(cudaStreamCreate(&s), "cudaStreamCreate (main thread)"))
    return;
  for (int trial = 0; trial < 2 * opt.trials; ++trial) {
    const int v = value_for(trial, 0);
    if (!reset(rec, d.p, 0, "value") || !reset(rec, out.p, 0xff, "copy"))
      break;
    launch_spin(rec, d.p, v, s, "blocking stream, main thread");
    expect_value(
        rec, read_on_legacy(trial), v,
        format("trial %d, same thread: %s after a blocking stream's kernel", trial, what(trial)));
    rec.check(cudaDeviceSynchronize(), "cudaDeviceSynchronize (end of trial)");
  }
  rec.check(cudaStreamDestroy(s), "cudaStreamDestroy (main thread)");

  for (int trial = 0; trial < 2 * opt.trials; ++trial) {
    const int v = value_for(trial, 1);
    if (!reset(rec, d.p, 0, "value") || !reset(rec, out.p, 0xff, "copy"))
      return;
    host_flag launched, checked;
    std::thread worker([&] {
      cudaStream_t ws = nullptr;
      if (set_device(rec, "worker") &&
          rec.check(cudaStreamCreate(&ws), "cudaStreamCreate (worker)"))
        launch_spin(rec, d.p, v, ws, "worker's blocking stream");
      launched.set();
      if (!checked.wait_at_least(1))
        rec.fail("worker: the main thread never said it had read the value");
      if (ws) {
        if (trial == 2 * opt.trials - 1)
          smids.probe(rec.name(), ws, rec);
        rec.check(cudaStreamDestroy(ws), "cudaStreamDestroy (worker)");
      }
    });
    if (!launched.wait_at_least(1))
      rec.fail("the worker never said it had launched");
    expect_value(rec, read_on_legacy(trial), v,
                 format("trial %d, other thread: the main thread's %s after a worker's "
                        "blocking-stream kernel",
                        trial, what(trial)));
    checked.set();
    worker.join();
    rec.check(cudaDeviceSynchronize(), "cudaDeviceSynchronize (end of trial)");
  }
}

// ---- (g) per_thread_stream
// ------------------------------------------------------------------------ cudaStreamPerThread from
// 4 threads: memset, kernels and copies on it work and give the right results; and, as CUDA
// documents ("the per-thread default stream is not a non-blocking stream and will synchronize with
// the legacy default stream"), it is ordered with the legacy stream both ways: a legacy-stream
// kernel, then per-thread work in 4 threads; a per-thread kernel, then legacy-stream work; in other
// threads and in the same thread.
void per_thread_stream(recorder &rec) {
  constexpr int threads = 4, adds = 10;
  constexpr size_t n = 1 << 16;
  const cudaStream_t pts = cudaStreamPerThread;
  device_int d(rec, "value"), out_main(rec, "main copy");
  pinned_int h_main(rec, "main thread");
  if (!d.p || !out_main.p)
    return;
  std::atomic<bool> abort{false};
  host_flag ready, go, done, go_b, launched_b;
  std::vector<int> seen(size_t(threads) * opt.trials, -3);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      int *buf = nullptr, *out = nullptr;
      pinned_int h(rec, "worker");
      bool ok = set_device(rec, "worker") &&
                rec.check(cudaMalloc(&buf, n * sizeof(int)), "cudaMalloc (worker)") &&
                rec.check(cudaMalloc(&out, sizeof(int)), "cudaMalloc (worker)");
      // 1. plain use: memset, kernels and a copy back, all on cudaStreamPerThread
      if (ok) {
        std::vector<int> back(n, -1);
        rec.check(cudaMemsetAsync(buf, 0, n * sizeof(int), pts), "cudaMemsetAsync(PerThread)");
        for (int i = 0; i < adds; ++i) {
          run_test::add_to_all<<<64, 256, 0, pts>>>(buf, n, t + 1);
          ok = rec.launched("add_to_all on cudaStreamPerThread") && ok;
        }
        rec.check(cudaMemcpyAsync(back.data(), buf, n * sizeof(int), cudaMemcpyDeviceToHost, pts),
                  "cudaMemcpyAsync(PerThread)");
        rec.check(cudaStreamSynchronize(pts), "cudaStreamSynchronize(cudaStreamPerThread)");
        size_t wrong = 0;
        for (int x : back)
          wrong += x != adds * (t + 1);
        rec.expect(wrong == 0, format("thread %d: %zu of %zu elements wrong after %d kernels on "
                                      "cudaStreamPerThread (first %d, expected %d)",
                                      t, wrong, n, adds, back[0], adds * (t + 1)));
      }
      ready.add();
      for (int trial = 0; trial < opt.trials; ++trial) {
        // 2. the main thread's legacy-stream kernel, then this thread's per-thread stream
        if (!go.wait_at_least(trial + 1, std::chrono::seconds(20), &abort))
          break;
        if (ok) {
          rec.check(cudaMemsetAsync(out, 0xff, sizeof(int), pts), "cudaMemsetAsync (worker)");
          if (launch_copy(rec, d.p, out, pts, "cudaStreamPerThread"))
            seen[size_t(trial) * threads + t] = read_on(rec, out, pts, h, "cudaStreamPerThread");
        }
        done.add();
        // 3. thread 0's per-thread-stream kernel, then the main thread's legacy stream
        if (t == 0) {
          if (!go_b.wait_at_least(trial + 1, std::chrono::seconds(20), &abort))
            break;
          if (ok)
            launch_spin(rec, d.p, value_for(trial, 1), pts, "cudaStreamPerThread, worker");
          launched_b.set(trial + 1);
        }
      }
      if (ok && t == 0)
        smids.probe(rec.name(), pts, rec);
      if (ok)
        rec.check(cudaStreamSynchronize(pts), "cudaStreamSynchronize(cudaStreamPerThread)");
      if (buf)
        cudaFree(buf);
      if (out)
        cudaFree(out);
    });

  auto stop = [&](const char *why) {
    rec.fail(why);
    abort.store(true);
  };
  if (!ready.wait_at_least(threads))
    stop("the workers never said they were ready");
  for (int trial = 0; trial < opt.trials && !abort.load(); ++trial) {
    const int v = value_for(trial, 0);
    const cudaStream_t legacy = legacy_for(trial);
    if (!reset(rec, d.p, 0, "value")) {
      abort.store(true);
      break;
    }
    launch_spin(rec, d.p, v, legacy, format("main thread, legacy stream %s", legacy_name(legacy)));
    go.set(trial + 1);
    if (!done.wait_at_least((trial + 1) * threads)) {
      stop("the workers never said they had read the value");
      break;
    }
    for (int t = 0; t < threads; ++t)
      expect_value(rec, seen[size_t(trial) * threads + t], v,
                   format("trial %d: thread %d's cudaStreamPerThread kernel after the main "
                          "thread's kernel on legacy stream %s",
                          trial, t, legacy_name(legacy)));
    const int vb = value_for(trial, 1);
    if (!reset(rec, d.p, 0, "value") || !reset(rec, out_main.p, 0xff, "main copy")) {
      abort.store(true);
      break;
    }
    go_b.set(trial + 1);
    if (!launched_b.wait_at_least(trial + 1)) {
      stop("thread 0 never said it had launched on its per-thread stream");
      break;
    }
    launch_copy(rec, d.p, out_main.p, legacy, format("legacy stream %s", legacy_name(legacy)));
    rec.check(cudaStreamSynchronize(legacy), "cudaStreamSynchronize(legacy)");
    expect_value(rec, read_blocking(rec, out_main.p, "main copy"), vb,
                 format("trial %d: the main thread's legacy-stream kernel after thread 0's "
                        "kernel on its cudaStreamPerThread",
                        trial));
    rec.check(cudaDeviceSynchronize(), "cudaDeviceSynchronize (end of trial)");
  }
  for (auto &t : pool)
    t.join();

  // The same thread: legacy then per-thread, and per-thread then legacy.
  for (int trial = 0; trial < opt.trials; ++trial) {
    const int v = value_for(trial, 2);
    const cudaStream_t legacy = legacy_for(trial);
    if (!reset(rec, d.p, 0, "value") || !reset(rec, out_main.p, 0xff, "main copy"))
      return;
    launch_spin(rec, d.p, v, legacy, format("legacy stream %s", legacy_name(legacy)));
    launch_copy(rec, d.p, out_main.p, pts, "main thread's cudaStreamPerThread");
    expect_value(rec, read_on(rec, out_main.p, pts, h_main, "cudaStreamPerThread"), v,
                 format("trial %d, same thread: cudaStreamPerThread after legacy stream %s", trial,
                        legacy_name(legacy)));
    rec.check(cudaDeviceSynchronize(), "cudaDeviceSynchronize (end of trial)");
    const int vb = value_for(trial, 3);
    if (!reset(rec, d.p, 0, "value"))
      return;
    launch_spin(rec, d.p, vb, pts, "main thread's cudaStreamPerThread");
    expect_value(rec, read_on(rec, d.p, legacy, h_main, "legacy stream"), vb,
                 format("trial %d, same thread: cudaMemcpyAsync on legacy stream %s after "
                        "cudaStreamPerThread",
                        trial, legacy_name(legacy)));
    rec.check(cudaDeviceSynchronize(), "cudaDeviceSynchronize (end of trial)");
  }
}

// ---- (h) limits_shared
// ---------------------------------------------------------------------------- Device limits and
// the cache configuration belong to the device (its context), not to a thread: what thread A sets,
// thread B reads. The values are restored afterwards. (No kernel of this program uses device malloc
// or printf, so the heap and FIFO sizes may still change.)
void limits_shared(recorder &rec) {
  struct limit {
    cudaLimit which;
    const char *name;
    size_t original = 0, wanted = 0, set_by_a = 0, read_by_b = 0;
  };
  limit limits[] = {{cudaLimitMallocHeapSize, "cudaLimitMallocHeapSize"},
                    {cudaLimitPrintfFifoSize, "cudaLimitPrintfFifoSize"},
                    {cudaLimitStackSize, "cudaLimitStackSize"}};
  cudaFuncCache cache_original = cudaFuncCachePreferNone, cache_wanted = cudaFuncCachePreferShared,
                cache_a = cudaFuncCachePreferNone, cache_b = cudaFuncCachePreferNone;
  for (auto &l : limits)
    if (!rec.check(cudaDeviceGetLimit(&l.original, l.which),
                   format("cudaDeviceGetLimit(%s) (main thread)", l.name)))
      return;
  rec.check(cudaDeviceGetCacheConfig(&cache_original), "cudaDeviceGetCacheConfig (main thread)");
  // A value other than the current one, in a round number the driver keeps as it is.
  limits[0].wanted = limits[0].original == (48u << 20) ? (40u << 20) : (48u << 20);
  limits[1].wanted = limits[1].original == (3u << 20) ? (5u << 20) : (3u << 20);
  limits[2].wanted = limits[2].original == 4096 ? 8192 : 4096;
  if (cache_original == cudaFuncCachePreferShared)
    cache_wanted = cudaFuncCachePreferL1;

  host_flag set_done;
  std::thread a([&] {
    if (set_device(rec, "thread A")) {
      for (auto &l : limits)
        if (rec.check(cudaDeviceSetLimit(l.which, l.wanted),
                      format("cudaDeviceSetLimit(%s, %zu) (thread A)", l.name, l.wanted)) &&
            rec.check(cudaDeviceGetLimit(&l.set_by_a, l.which),
                      format("cudaDeviceGetLimit(%s) (thread A)", l.name)))
          rec.expect(l.set_by_a >= l.wanted,
                     format("thread A set %s to %zu but reads %zu", l.name, l.wanted, l.set_by_a));
      if (rec.check(cudaDeviceSetCacheConfig(cache_wanted), "cudaDeviceSetCacheConfig (thread A)"))
        rec.check(cudaDeviceGetCacheConfig(&cache_a), "cudaDeviceGetCacheConfig (thread A)");
    }
    set_done.set();
  });
  std::thread b([&] {
    if (!set_done.wait_at_least(1)) {
      rec.fail("thread A never said it had set the limits");
      return;
    }
    if (!set_device(rec, "thread B"))
      return;
    for (auto &l : limits)
      if (rec.check(cudaDeviceGetLimit(&l.read_by_b, l.which),
                    format("cudaDeviceGetLimit(%s) (thread B)", l.name)))
        rec.expect(l.read_by_b == l.set_by_a,
                   format("%s: thread A set %zu (reads %zu), thread B reads %zu (the original was "
                          "%zu)",
                          l.name, l.wanted, l.set_by_a, l.read_by_b, l.original));
    if (rec.check(cudaDeviceGetCacheConfig(&cache_b), "cudaDeviceGetCacheConfig (thread B)"))
      rec.expect(cache_b == cache_a, format("cache config: thread A set %d (reads %d), thread B "
                                            "reads %d",
                                            int(cache_wanted), int(cache_a), int(cache_b)));
    smids.probe(rec.name(), 0, rec);
  });
  a.join();
  b.join();
  for (auto &l : limits)
    rec.check(cudaDeviceSetLimit(l.which, l.original),
              format("cudaDeviceSetLimit(%s) back to %zu (main thread)", l.name, l.original));
  rec.check(cudaDeviceSetCacheConfig(cache_original),
            "cudaDeviceSetCacheConfig back (main thread)");
}

// ---- (i) ctx_create
// ------------------------------------------------------------------------------- A context made
// with cuCtxCreate is a context of its own: distinct from the primary context, current after
// creation, the runtime's kernels run in it and give the right results, a blocking stream made in
// it is ordered after ITS legacy stream (also when another thread made that context current and
// launched), cuCtxDestroy succeeds and the primary context works afterwards.
bool check_cu(recorder &rec, CUresult rc, const std::string &what) {
  if (rc == CUDA_SUCCESS)
    return true;
  const char *name = nullptr;
  cuGetErrorName(rc, &name);
  rec.fail(what + ": " + (name ? name : "unknown error") + format(" (%d)", int(rc)));
  return false;
}

void ctx_create(recorder &rec) {
  std::thread([&rec] {
    CUdevice dev = 0;
    CUcontext primary = nullptr, own = nullptr, current = nullptr;
    if (!set_device(rec, "context thread") ||
        !rec.check(cudaFree(nullptr), "cudaFree(0) (make the primary context current)") ||
        !check_cu(rec, cuInit(0), "cuInit") ||
        !check_cu(rec, cuDeviceGet(&dev, 0), "cuDeviceGet") ||
        !check_cu(rec, cuDevicePrimaryCtxRetain(&primary, dev), "cuDevicePrimaryCtxRetain"))
      return;
    CUcontext before = nullptr; // the runtime's context (primary_context_identity checks which)
    if (!check_cu(rec, cuCtxGetCurrent(&before), "cuCtxGetCurrent (before cuCtxCreate)") ||
        !rec.expect(before != nullptr, "no context is current after cudaFree(0)")) {
      cuDevicePrimaryCtxRelease(dev);
      return;
    }
    CUctxCreateParams params{};
    if (check_cu(rec, cuCtxCreate(&own, &params, 0, dev), "cuCtxCreate")) {
      rec.expect(own != nullptr && own != primary && own != before,
                 "cuCtxCreate returned the primary or the runtime's context (or null), not a "
                 "context of its own");
      if (check_cu(rec, cuCtxGetCurrent(&current), "cuCtxGetCurrent (after cuCtxCreate)"))
        rec.expect(current == own, "the context cuCtxCreate made is not current after creation");
      CUdevice cur_dev = -1;
      if (check_cu(rec, cuCtxGetDevice(&cur_dev), "cuCtxGetDevice"))
        rec.expect(cur_dev == dev, format("cuCtxGetDevice says %d, expected %d", cur_dev, dev));

      // The runtime in the created context: a kernel and its result.
      constexpr size_t n = 4096;
      int *buf = nullptr;
      if (rec.check(cudaMalloc(&buf, n * sizeof(int)), "cudaMalloc (created context)")) {
        std::vector<int> back(n, -1);
        rec.check(cudaMemset(buf, 0, n * sizeof(int)), "cudaMemset (created context)");
        run_test::add_to_all<<<16, 256>>>(buf, n, 7);
        rec.launched("add_to_all (created context, legacy stream)");
        rec.check(cudaMemcpy(back.data(), buf, n * sizeof(int), cudaMemcpyDeviceToHost),
                  "cudaMemcpy (created context)");
        size_t wrong = 0;
        for (int x : back)
          wrong += x != 7;
        rec.expect(wrong == 0, format("created context: %zu of %zu elements wrong (first %d, "
                                      "expected 7)",
                                      wrong, n, back[0]));
        rec.check(cudaFree(buf), "cudaFree (created context)");
      }

      // Its legacy stream and a blocking stream made in it, same thread then another thread.
      device_int d(rec, "value, created context"), out(rec, "copy, created context");
      pinned_int h(rec, "created context");
      cudaStream_t s = nullptr;
      if (d.p && out.p && rec.check(cudaStreamCreate(&s), "cudaStreamCreate (created context)")) {
        unsigned flags = 99;
        if (rec.check(cudaStreamGetFlags(s, &flags), "cudaStreamGetFlags (created context)"))
          rec.expect(flags == 0, format("a stream from cudaStreamCreate in the created context "
                                        "reads flags %u, expected 0",
                                        flags));
        for (int trial = 0; trial < opt.trials; ++trial) {
          const int v = value_for(trial, 0);
          if (!reset(rec, d.p, 0, "value") || !reset(rec, out.p, 0xff, "copy"))
            break;
          launch_spin(rec, d.p, v, 0, "created context's legacy stream");
          launch_copy(rec, d.p, out.p, s, "created context's blocking stream");
          expect_value(rec, read_on(rec, out.p, s, h, "created context's blocking stream"), v,
                       format("trial %d: a blocking stream of the created context after its "
                              "legacy stream",
                              trial));
          rec.check(cudaDeviceSynchronize(), "cudaDeviceSynchronize (created context)");
        }
        for (int trial = 0; trial < opt.trials; ++trial) {
          const int v = value_for(trial, 1);
          if (!reset(rec, d.p, 0, "value") || !reset(rec, out.p, 0xff, "copy"))
            break;
          host_flag launched;
          std::thread other([&] {
            if (check_cu(rec, cuCtxSetCurrent(own), "cuCtxSetCurrent(created) (other thread)"))
              launch_spin(rec, d.p, v, 0, "created context's legacy stream, other thread");
            launched.set();
            check_cu(rec, cuCtxSetCurrent(nullptr), "cuCtxSetCurrent(NULL) (other thread)");
          });
          if (!launched.wait_at_least(1))
            rec.fail("the other thread never said it had launched");
          launch_copy(rec, d.p, out.p, s, "created context's blocking stream");
          expect_value(rec, read_on(rec, out.p, s, h, "created context's blocking stream"), v,
                       format("trial %d: a blocking stream of the created context after another "
                              "thread's kernel on its legacy stream",
                              trial));
          other.join();
          rec.check(cudaDeviceSynchronize(), "cudaDeviceSynchronize (created context)");
        }
        smids.probe(rec.name(), s, rec);
        rec.check(cudaStreamDestroy(s), "cudaStreamDestroy (created context)");
      }
      // d, out and h go before the context does.
      if (d.p)
        rec.check(cudaFree(d.p), "cudaFree (created context)");
      if (out.p)
        rec.check(cudaFree(out.p), "cudaFree (created context)");
      if (h.p)
        rec.check(cudaFreeHost(h.p), "cudaFreeHost (created context)");
      d.p = out.p = h.p = nullptr;
      check_cu(rec, cuCtxDestroy(own), "cuCtxDestroy");
    }
    // cuCtxCreate pushed the new context over the runtime's; cuCtxDestroy popped it.
    if (check_cu(rec, cuCtxGetCurrent(&current), "cuCtxGetCurrent (after cuCtxDestroy)"))
      rec.expect(current == before, "after cuCtxDestroy of the created context, the context "
                                    "current before cuCtxCreate is not current again");
    device_int d(rec, "value, primary context after cuCtxDestroy");
    if (d.p) {
      if (reset(rec, d.p, 0, "value"))
        launch_spin(rec, d.p, 77, 0, "primary context after cuCtxDestroy");
      expect_value(rec, read_blocking(rec, d.p, "primary context after cuCtxDestroy"), 77,
                   "the primary context's legacy stream after cuCtxDestroy");
    }
    check_cu(rec, cuDevicePrimaryCtxRelease(dev), "cuDevicePrimaryCtxRelease");
  }).join();
}

// ---- primary_context_identity
// -------------------------------------------------------------------- The runtime works in the
// device's primary context, and every way a program or library learns a context names that one
// handle: cuDevicePrimaryCtxRetain, cuCtxGetCurrent (in every thread), cuCtxPopCurrent,
// cuStreamGetCtx (and _v2, with no green context), cuStreamGetGreenCtx (none),
// CU_POINTER_ATTRIBUTE_CONTEXT of cudaMalloc'd memory, cuCtxGetId. Calls that take the handle act
// on the context the runtime uses: a thread that only pushes the retained handle runs its kernels
// there (%smid probe) and cuCtxSynchronize_v2 on it waits for the runtime's work. Libraries rely
// on this (numba-cuda refuses a current context that is not the primary one). A separate subtest,
// so that a failure here is told apart from the ordering guarantees.
void primary_context_identity(recorder &rec) {
  CUdevice dev = 0;
  CUcontext primary = nullptr, main_current = nullptr, worker_current = nullptr;
  if (!rec.check(cudaFree(nullptr), "cudaFree(0) (main thread)") ||
      !check_cu(rec, cuInit(0), "cuInit") || !check_cu(rec, cuDeviceGet(&dev, 0), "cuDeviceGet") ||
      !check_cu(rec, cuDevicePrimaryCtxRetain(&primary, dev), "cuDevicePrimaryCtxRetain"))
    return;
  unsigned flags = 0;
  int active = 0;
  if (check_cu(rec, cuDevicePrimaryCtxGetState(dev, &flags, &active), "cuDevicePrimaryCtxGetState"))
    rec.expect(active != 0, "the primary context is not active while the runtime uses device 0");
  if (check_cu(rec, cuCtxGetCurrent(&main_current), "cuCtxGetCurrent (main thread)"))
    rec.expect(main_current == primary, "main thread: after cudaFree(0), the current context is "
                                        "not the primary context (cuDevicePrimaryCtxRetain's "
                                        "handle)");
  std::thread([&] {
    if (set_device(rec, "worker") && rec.check(cudaFree(nullptr), "cudaFree(0) (worker)") &&
        check_cu(rec, cuCtxGetCurrent(&worker_current), "cuCtxGetCurrent (worker)")) {
      rec.expect(worker_current == primary, "worker: after cudaFree(0), the current context is "
                                            "not the primary context");
      rec.expect(worker_current == main_current, "the runtime's current context differs between "
                                                 "the main thread and a worker");
    }
  }).join();

  // Pushed and popped: the same handle comes back.
  CUcontext popped = nullptr;
  if (check_cu(rec, cuCtxPushCurrent(primary), "cuCtxPushCurrent(primary)") &&
      check_cu(rec, cuCtxPopCurrent(&popped), "cuCtxPopCurrent"))
    rec.expect(popped == primary, "cuCtxPopCurrent after pushing the primary context returned "
                                  "another handle");
  unsigned long long id_primary = 0, id_current = 0;
  if (check_cu(rec, cuCtxGetId(primary, &id_primary), "cuCtxGetId(primary)") &&
      check_cu(rec, cuCtxGetId(main_current, &id_current), "cuCtxGetId(current)"))
    rec.expect(id_primary == id_current, "cuCtxGetId differs for the primary and current context");

  // Streams and memory name it too.
  cudaStream_t s = nullptr;
  if (rec.check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate")) {
    CUcontext of_stream = nullptr, of_legacy = nullptr;
    if (check_cu(rec, cuStreamGetCtx(s, &of_stream), "cuStreamGetCtx (created stream)"))
      rec.expect(of_stream == primary, "cuStreamGetCtx of a runtime stream is not the primary "
                                       "context");
    if (check_cu(rec, cuStreamGetCtx(CU_STREAM_LEGACY, &of_legacy), "cuStreamGetCtx (legacy)"))
      rec.expect(of_legacy == primary, "cuStreamGetCtx of the legacy stream is not the primary "
                                       "context");
    CUcontext v2_ctx = nullptr;
    CUgreenCtx v2_green = reinterpret_cast<CUgreenCtx>(1);
    if (check_cu(rec, cuStreamGetCtx_v2(s, &v2_ctx, &v2_green), "cuStreamGetCtx_v2")) {
      rec.expect(v2_ctx == primary, "cuStreamGetCtx_v2 does not name the primary context");
      rec.expect(v2_green == nullptr, "cuStreamGetCtx_v2 names a green context for a stream of "
                                      "the primary context");
    }
    CUgreenCtx green = reinterpret_cast<CUgreenCtx>(1);
    const CUresult rc = cuStreamGetGreenCtx(s, &green);
    // Printed, so that the confined run must give the plain run's answer (rc and null).
    std::printf("cuStreamGetGreenCtx on a primary-context stream: %d, %s\n", int(rc),
                green == nullptr ? "no green context" : "a green context");
    rec.check(cudaStreamDestroy(s), "cudaStreamDestroy");
  }
  void *mem = nullptr;
  if (rec.check(cudaMalloc(&mem, 4096), "cudaMalloc")) {
    CUcontext of_memory = nullptr;
    if (check_cu(rec,
                 cuPointerGetAttribute(&of_memory, CU_POINTER_ATTRIBUTE_CONTEXT,
                                       reinterpret_cast<CUdeviceptr>(mem)),
                 "cuPointerGetAttribute(CONTEXT)"))
      rec.expect(of_memory == primary, "CU_POINTER_ATTRIBUTE_CONTEXT of cudaMalloc'd memory is "
                                       "not the primary context");
    rec.check(cudaFree(mem), "cudaFree");
  }

  // A thread that only pushes the retained handle works in the runtime's context: its kernels
  // go where the runtime's go, and cuCtxSynchronize_v2(handle) waits for the runtime's work.
  device_int d(rec, "value, pushed primary");
  std::thread([&] {
    if (!check_cu(rec, cuCtxPushCurrent(primary), "cuCtxPushCurrent(primary) (fresh thread)"))
      return;
    smids.probe(rec.name(), 0, rec);
    if (d.p && reset(rec, d.p, 0, "value")) {
      launch_spin(rec, d.p, 41, 0, "legacy stream of the pushed primary context");
      if (check_cu(rec, cuCtxSynchronize_v2(primary), "cuCtxSynchronize_v2(primary)"))
        expect_value(rec, read_blocking(rec, d.p, "after cuCtxSynchronize_v2"), 41,
                     "cuCtxSynchronize_v2 on the primary context handle");
    }
    CUcontext back = nullptr;
    check_cu(rec, cuCtxPopCurrent(&back), "cuCtxPopCurrent (fresh thread)");
  }).join();
  check_cu(rec, cuDevicePrimaryCtxRelease(dev), "cuDevicePrimaryCtxRelease");
}

// ---- (j) events_cross_thread
// ---------------------------------------------------------------------- Thread A records an event
// after the long kernel on its blocking stream; thread B makes its own non-blocking stream wait for
// that event (odd trials: waits with cudaEventSynchronize) and reads the value on it.
void events_cross_thread(recorder &rec) {
  device_int d(rec, "value"), out(rec, "copy");
  if (!d.p || !out.p)
    return;
  std::atomic<bool> abort{false};
  host_flag recorded, consumed;
  cudaEvent_t event = nullptr;
  std::thread a([&] {
    cudaStream_t s = nullptr;
    const bool ok = set_device(rec, "thread A") &&
                    rec.check(cudaStreamCreate(&s), "cudaStreamCreate (thread A)") &&
                    rec.check(cudaEventCreateWithFlags(&event, cudaEventDisableTiming),
                              "cudaEventCreateWithFlags (thread A)");
    for (int trial = 0; trial < 2 * opt.trials; ++trial) {
      if (ok && reset(rec, d.p, 0, "value") && reset(rec, out.p, 0xff, "copy")) {
        launch_spin(rec, d.p, value_for(trial, 0), s, "thread A's blocking stream");
        rec.check(cudaEventRecord(event, s), "cudaEventRecord (thread A)");
      }
      recorded.set(trial + 1);
      if (!consumed.wait_at_least(trial + 1, std::chrono::seconds(20), &abort)) {
        rec.fail("thread A: thread B never said it had read the value");
        abort.store(true);
        break;
      }
    }
    if (s) {
      smids.probe(rec.name(), s, rec);
      rec.check(cudaStreamDestroy(s), "cudaStreamDestroy (thread A)");
    }
  });
  std::thread b([&] {
    cudaStream_t s = nullptr;
    pinned_int h(rec, "thread B");
    const bool ok = set_device(rec, "thread B") &&
                    rec.check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking),
                              "cudaStreamCreateWithFlags(NonBlocking) (thread B)");
    for (int trial = 0; trial < 2 * opt.trials; ++trial) {
      if (!recorded.wait_at_least(trial + 1, std::chrono::seconds(20), &abort)) {
        rec.fail("thread B: thread A never said it had recorded the event");
        abort.store(true);
        break;
      }
      if (ok && event) {
        if (trial % 2 == 0) {
          rec.check(cudaStreamWaitEvent(s, event, 0), "cudaStreamWaitEvent (thread B)");
          launch_copy(rec, d.p, out.p, s, "thread B's non-blocking stream");
          expect_value(rec, read_on(rec, out.p, s, h, "thread B"), value_for(trial, 0),
                       format("trial %d: thread B's kernel after cudaStreamWaitEvent on thread A's "
                              "event",
                              trial));
        } else {
          rec.check(cudaEventSynchronize(event), "cudaEventSynchronize (thread B)");
          expect_value(rec, read_on(rec, d.p, s, h, "thread B"), value_for(trial, 0),
                       format("trial %d: thread B's copy after cudaEventSynchronize on thread A's "
                              "event",
                              trial));
        }
      }
      rec.check(cudaDeviceSynchronize(), "cudaDeviceSynchronize (thread B)");
      consumed.set(trial + 1);
    }
    if (s) {
      smids.probe(rec.name(), s, rec);
      rec.check(cudaStreamDestroy(s), "cudaStreamDestroy (thread B)");
    }
  });
  a.join();
  b.join();
  if (event)
    rec.check(cudaEventDestroy(event), "cudaEventDestroy");
}

// ---- the driver
// ----------------------------------------------------------------------------------

struct subtest {
  const char *name;
  void (*run)(recorder &);
};
const subtest subtests[] = {
    {"legacy_cross_thread", legacy_cross_thread},
    {"device_sync_covers_threads", device_sync_covers_threads},
    {"blocking_stream_flags", blocking_stream_flags},
    {"blocking_after_legacy", blocking_after_legacy},
    {"legacy_after_blocking", legacy_after_blocking},
    {"per_thread_stream", per_thread_stream},
    {"limits_shared", limits_shared},
    {"ctx_create", ctx_create},
    {"events_cross_thread", events_cross_thread},
    {"primary_context_identity", primary_context_identity},
};

int usage() {
  std::fprintf(stderr, "usage: semantics [--list] [--spin-ms MS] [--trials N] [--smid-out FILE] "
                       "[--timeout-s S] [--skip NAME]... [NAME...]\n");
  return 2;
}

} // namespace

int main(int argc, char **argv) {
  std::vector<const subtest *> chosen;
  std::vector<std::string> skipped;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--list") {
      for (const auto &t : subtests)
        std::printf("%s\n", t.name);
      return 0;
    } else if (a == "--spin-ms" && i + 1 < argc) {
      opt.spin_ns = static_cast<unsigned long long>(std::atof(argv[++i]) * 1e6);
    } else if (a == "--trials" && i + 1 < argc) {
      opt.trials = std::atoi(argv[++i]);
    } else if (a == "--smid-out" && i + 1 < argc) {
      opt.smid_out = argv[++i];
    } else if (a == "--timeout-s" && i + 1 < argc) {
      opt.timeout_s = std::atof(argv[++i]);
    } else if (a == "--skip" && i + 1 < argc) {
      skipped.push_back(argv[++i]);
    } else if (!a.empty() && a[0] != '-') {
      const subtest *found = nullptr;
      for (const auto &t : subtests)
        if (a == t.name)
          found = &t;
      if (!found) {
        std::fprintf(stderr, "semantics: no subtest '%s' (--list lists them)\n", a.c_str());
        return 2;
      }
      chosen.push_back(found);
    } else {
      std::fprintf(stderr, "semantics: unknown argument '%s'\n", a.c_str());
      return usage();
    }
  }
  if (opt.trials < 1 || opt.spin_ns < 1000000 || opt.timeout_s <= 0) {
    std::fprintf(stderr, "semantics: --trials must be >= 1 and --spin-ms >= 1\n");
    return 2;
  }
  for (const auto &name : skipped) {
    bool known = false;
    for (const auto &t : subtests)
      known = known || name == t.name;
    if (!known) {
      std::fprintf(stderr, "semantics: --skip %s: no such subtest (--list lists them)\n",
                   name.c_str());
      return 2;
    }
  }
  if (chosen.empty())
    for (const auto &t : subtests)
      chosen.push_back(&t);
  chosen.erase(std::remove_if(chosen.begin(), chosen.end(),
                              [&](const subtest *t) {
                                return std::find(skipped.begin(), skipped.end(), t->name) !=
                                       skipped.end();
                              }),
               chosen.end());
  smids.enabled = !opt.smid_out.empty();

  if (!run_test::have_gpu("semantics"))
    return 77;
  run_test::watchdog dog("semantics", opt.timeout_s);
  int failed = 0;
  for (const subtest *t : chosen) {
    dog.at(t->name);
    recorder rec(t->name);
    const auto start = std::chrono::steady_clock::now();
    if (set_device(rec, "main thread"))
      t->run(rec);
    // Nothing of one subtest may still run in the next: wait for the device (errors recorded).
    rec.check(cudaDeviceSynchronize(), "cudaDeviceSynchronize (end of subtest)");
    std::fprintf(stderr, "%s: %.3f s\n", t->name, run_test::seconds_since(start));
    if (rec.ok()) {
      std::printf("%s: ok\n", t->name);
    } else {
      std::printf("%s: FAILED (%s)\n", t->name, rec.summary().c_str());
      ++failed;
    }
    std::fflush(stdout);
  }
  if (smids.enabled && !smids.write(opt.smid_out))
    ++failed;
  return failed ? 1 : 0;
}
