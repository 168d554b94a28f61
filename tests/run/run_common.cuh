// SPDX-License-Identifier: Apache-2.0
// Helpers the programs of tests/run share: error recording that never aborts a subtest silently,
// bounded host waits, a watchdog, the long "spin then write" kernel the ordering checks rely on,
// and the %smid probe whose results go to --smid-out files. The programs know nothing of
// greenctx: they are run plain and under `greenctx run`, and their stdouts are compared.
#pragma once

#include <cuda_runtime.h>

#include "smid_kernels.cuh"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace run_test {

// ---- formatting and failure recording
// ------------------------------------------------------------

inline std::string format(const char *fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return buf;
}

/// Collects what went wrong in one subtest (from any of its threads). Each failure is also said on
/// stderr at once, with the subtest's name, so a hang or crash later still leaves the cause.
class recorder {
public:
  explicit recorder(std::string name) : name_(std::move(name)) {}

  void fail(const std::string &what) {
    std::lock_guard lock(mutex_);
    // A failure that repeats (a stress loop) is said and kept a bounded number of times.
    if (count_++ < max_kept) {
      std::fprintf(stderr, "%s: %s\n", name_.c_str(), what.c_str());
      failures_.push_back(what);
    }
  }
  /// True when rc is cudaSuccess; otherwise records "what: error name (text)".
  bool check(cudaError_t rc, const std::string &what) {
    if (rc == cudaSuccess)
      return true;
    fail(what + ": " + cudaGetErrorName(rc) + " (" + cudaGetErrorString(rc) + ")");
    return false;
  }
  /// Checks the launch just made on this thread (cudaGetLastError is per thread).
  bool launched(const std::string &what) { return check(cudaGetLastError(), "launch " + what); }
  bool expect(bool condition, const std::string &what) {
    if (!condition)
      fail(what);
    return condition;
  }
  bool ok() const { return count() == 0; }
  size_t count() const {
    std::lock_guard lock(mutex_);
    return count_;
  }
  /// The failures joined by "; ", at most `limit` of them (the rest are counted).
  std::string summary(size_t limit = 6) const {
    std::lock_guard lock(mutex_);
    std::string s;
    for (size_t i = 0; i < failures_.size() && i < limit; ++i)
      s += (i ? "; " : "") + failures_[i];
    const size_t shown = std::min(limit, failures_.size());
    if (count_ > shown)
      s += format("; and %zu more", count_ - shown);
    return s;
  }
  const std::string &name() const { return name_; }

private:
  static constexpr size_t max_kept = 50;
  std::string name_;
  mutable std::mutex mutex_;
  std::vector<std::string> failures_;
  size_t count_ = 0;
};

// ---- bounded host-side waiting
// --------------------------------------------------------------------

/// A host-side signal between threads: a counter that only grows. Waits are bounded: a thread that
/// never signals costs the waiter `timeout`, never a hang.
class host_flag {
public:
  void set(int v = 1) { value_.store(v, std::memory_order_release); }
  void add(int n = 1) { value_.fetch_add(n, std::memory_order_acq_rel); }
  int get() const { return value_.load(std::memory_order_acquire); }
  /// True once the value is at least v; false after `timeout` or once `abort` (if given) is set.
  bool wait_at_least(int v, std::chrono::milliseconds timeout = std::chrono::seconds(20),
                     const std::atomic<bool> *abort = nullptr) const {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (unsigned spins = 0; get() < v; ++spins) {
      if (abort && abort->load(std::memory_order_relaxed))
        return false;
      if (std::chrono::steady_clock::now() > deadline)
        return false;
      if (spins < 2000)
        std::this_thread::yield();
      else
        std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
    return true;
  }

private:
  std::atomic<int> value_{0};
};

/// Ends the process (exit 124, like timeout(1)) if it is still running after `seconds`, saying so
/// on stderr with what `at` last said. A hung CUDA call must not hang the test run.
class watchdog {
public:
  watchdog(const char *program, double seconds) : state_(std::make_shared<state>()) {
    std::thread([s = state_, program, seconds] {
      const auto deadline =
          std::chrono::steady_clock::now() + std::chrono::milliseconds(long(seconds * 1000));
      while (!s->done.load()) {
        if (std::chrono::steady_clock::now() > deadline) {
          std::string where;
          {
            std::lock_guard lock(s->mutex);
            where = s->where;
          }
          std::fprintf(stderr, "%s: watchdog: still running after %.0f s (at: %s); exiting 124\n",
                       program, seconds, where.c_str());
          std::fflush(stdout);
          std::fflush(stderr);
          std::_Exit(124);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
    }).detach();
  }
  ~watchdog() { state_->done.store(true); }
  watchdog(const watchdog &) = delete;
  watchdog &operator=(const watchdog &) = delete;
  void at(const std::string &where) {
    std::lock_guard lock(state_->mutex);
    state_->where = where;
  }

private:
  struct state {
    std::atomic<bool> done{false};
    std::mutex mutex;
    std::string where = "start";
  };
  std::shared_ptr<state> state_; // shared with the detached thread, which may outlive this
};

/// Seconds since `start`.
/// Whether the program sees a CUDA device; when not, says so on stderr ("NAME: no CUDA device
/// (why): skipped") for the program to exit 77.
inline bool have_gpu(const char *name) {
  int count = 0;
  const cudaError_t rc = cudaGetDeviceCount(&count);
  if (rc == cudaSuccess && count > 0)
    return true;
  std::fprintf(stderr, "%s: no CUDA device (%s): skipped\n", name,
               rc == cudaSuccess ? "none found" : cudaGetErrorString(rc));
  return false;
}

inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// ---- kernels ------------------------------------------------------------------------------------

/// One thread spins for spin_ns (by %globaltimer, and at most 4 clock64 cycles per ns in case the
/// timer stood still: bounded either way), then writes `value`. A reader that is not ordered after
/// this kernel sees the old value: the ordering checks make that likely with a spin of 20-50 ms.
__global__ void spin_then_write(int *out, int value, unsigned long long spin_ns) {
  const unsigned long long start = greenctx_test::now_ns();
  const long long start_clock = clock64();
  const long long max_cycles = static_cast<long long>(spin_ns) * 4 + 100000;
  while (greenctx_test::now_ns() - start < spin_ns && clock64() - start_clock < max_cycles) {
  }
  __threadfence();
  *reinterpret_cast<volatile int *>(out) = value;
}

/// *dst = *src, by one thread: "a kernel on stream X read the value".
__global__ void copy_value(const int *src, int *dst) {
  *dst = *reinterpret_cast<const volatile int *>(src);
}

/// x[i] += add for i < n.
__global__ void add_to_all(int *x, size_t n, int add) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x)
    x[i] += add;
}

// ---- %smid probes and the --smid-out file
// --------------------------------------------------------

inline constexpr unsigned probe_blocks = 2048;
inline constexpr unsigned long long probe_spin_ns = 10000;

/// Runs record_smid on `stream` (of the current device) and returns the SMs its blocks ran on.
/// Synchronizes `stream` only. Errors go to `rec`.
inline std::set<unsigned> probe_sms(cudaStream_t stream, recorder &rec, const std::string &where) {
  unsigned *d = nullptr;
  const size_t bytes = probe_blocks * sizeof(unsigned);
  if (!rec.check(cudaMalloc(&d, bytes), "probe cudaMalloc (" + where + ")"))
    return {};
  std::vector<unsigned> h(probe_blocks, ~0u);
  bool ok = rec.check(cudaMemsetAsync(d, 0xff, bytes, stream), "probe memset (" + where + ")");
  greenctx_test::record_smid<<<probe_blocks, 32, 0, stream>>>(d, probe_spin_ns);
  ok = rec.launched("record_smid (" + where + ")") && ok;
  ok = rec.check(cudaMemcpyAsync(h.data(), d, bytes, cudaMemcpyDeviceToHost, stream),
                 "probe copy (" + where + ")") &&
       ok;
  ok = rec.check(cudaStreamSynchronize(stream), "probe synchronize (" + where + ")") && ok;
  rec.check(cudaFree(d), "probe cudaFree (" + where + ")");
  std::set<unsigned> sms;
  if (ok)
    for (unsigned id : h)
      if (id != ~0u)
        sms.insert(id);
  return sms;
}

/// The SMs each named probe used, per device: written as one line per (name, device),
/// "NAME DEVICE ID ID ...", ids ascending, lines sorted by name then device.
class smid_log {
public:
  /// Probes run only when a file was asked for (--smid-out): they cost ~1 ms each.
  bool enabled = false;

  void add(const std::string &name, int device, const std::set<unsigned> &sms) {
    std::lock_guard lock(mutex_);
    auto &s = seen_[{name, device}];
    s.insert(sms.begin(), sms.end());
  }
  /// Adds the SMs of a probe on `stream` of the current device.
  void probe(const std::string &name, cudaStream_t stream, recorder &rec) {
    if (!enabled)
      return;
    int device = -1;
    if (!rec.check(cudaGetDevice(&device), "cudaGetDevice (probe " + name + ")"))
      return;
    add(name, device, probe_sms(stream, rec, name));
  }
  bool write(const std::string &path) const {
    std::lock_guard lock(mutex_);
    std::ofstream f(path);
    for (const auto &[key, sms] : seen_) {
      f << key.first << ' ' << key.second;
      for (unsigned id : sms)
        f << ' ' << id;
      f << '\n';
    }
    f.close();
    if (!f) {
      std::fprintf(stderr, "cannot write %s\n", path.c_str());
      return false;
    }
    return true;
  }

private:
  mutable std::mutex mutex_;
  std::map<std::pair<std::string, int>, std::set<unsigned>> seen_;
};

} // namespace run_test
