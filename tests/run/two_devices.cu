// SPDX-License-Identifier: Apache-2.0
// Two GPUs in one program: `greenctx run` confines each device the program uses (one shared
// green context per device), and the program must not notice. Devices 0 and 1, each driven by its
// own thread at the same time: kernels and the legacy/blocking stream order on each device; peer
// access where the hardware has it (a kernel on device 0 reading device 1's memory); cudaMemcpyPeer
// (which works without peer access); and a cross-device event: device 0's stream waits for an
// event recorded on device 1 after a long kernel there, in another thread, then copies the value
// across. Exits 77 (skip) with the reason on stderr when fewer than 2 devices are visible.
// --smid-out FILE writes the SMs of probes on each device: "NAME DEVICE ID ID ...".
// Knows nothing of greenctx: plain and `greenctx run` stdouts must be equal.
//
//   two_devices [--spin-ms MS] [--smid-out FILE] [--timeout-s S]
#include <cuda_runtime.h>

#include "run_common.cuh"

#include <string>
#include <thread>
#include <vector>

namespace {

using run_test::format;
using run_test::host_flag;
using run_test::recorder;

unsigned long long spin_ns = 30'000'000ull;
run_test::smid_log smids;
constexpr size_t n = 1 << 20;

/// out[i] = in[i] * 2 + 1: reads `in` wherever it lives (another device, with peer access).
__global__ void twice_plus_one(const int *in, int *out, size_t count) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < count;
       i += size_t(gridDim.x) * blockDim.x)
    out[i] = in[i] * 2 + 1;
}

__global__ void iota(int *x, size_t count, int base) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < count;
       i += size_t(gridDim.x) * blockDim.x)
    x[i] = base + int(i % 1000003);
}

size_t count_wrong(const std::vector<int> &h, int base, int mul, int add) {
  size_t wrong = 0;
  for (size_t i = 0; i < h.size(); ++i)
    wrong += h[i] != (base + int(i % 1000003)) * mul + add;
  return wrong;
}

/// Per device, in its own thread: a kernel and its result, the legacy stream then a blocking
/// stream, and probes.
void per_device(int dev, recorder &rec) {
  if (!rec.check(cudaSetDevice(dev), format("cudaSetDevice(%d)", dev)))
    return;
  int *x = nullptr, *value = nullptr, *copy = nullptr, *pinned = nullptr;
  cudaStream_t s = nullptr;
  if (!rec.check(cudaMalloc(&x, n * sizeof(int)), "cudaMalloc") ||
      !rec.check(cudaMalloc(&value, sizeof(int)), "cudaMalloc") ||
      !rec.check(cudaMalloc(&copy, sizeof(int)), "cudaMalloc") ||
      !rec.check(cudaMallocHost(&pinned, sizeof(int)), "cudaMallocHost") ||
      !rec.check(cudaStreamCreate(&s), "cudaStreamCreate"))
    return;
  iota<<<256, 256>>>(x, n, 100 * (dev + 1));
  rec.launched(format("iota on device %d", dev));
  std::vector<int> h(n);
  rec.check(cudaMemcpy(h.data(), x, n * sizeof(int), cudaMemcpyDeviceToHost), "cudaMemcpy");
  if (size_t k = count_wrong(h, 100 * (dev + 1), 1, 0))
    rec.fail(format("device %d: %zu of %zu elements wrong after a kernel", dev, k, n));

  const int v = 5000 + dev;
  rec.check(cudaMemset(value, 0, sizeof(int)), "cudaMemset");
  rec.check(cudaMemset(copy, 0xff, sizeof(int)), "cudaMemset");
  rec.check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  run_test::spin_then_write<<<1, 1>>>(value, v, spin_ns);
  rec.launched("spin_then_write (legacy stream)");
  run_test::copy_value<<<1, 1, 0, s>>>(value, copy);
  rec.launched("copy_value (blocking stream)");
  *pinned = -3;
  rec.check(cudaMemcpyAsync(pinned, copy, sizeof(int), cudaMemcpyDeviceToHost, s),
            "cudaMemcpyAsync");
  rec.check(cudaStreamSynchronize(s), "cudaStreamSynchronize");
  rec.expect(*pinned == v, format("device %d: a blocking stream's kernel after the legacy "
                                  "stream's read %d, expected %d",
                                  dev, *pinned, v));
  smids.probe(format("device%d_legacy", dev), 0, rec);
  smids.probe(format("device%d_blocking", dev), s, rec);
  rec.check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  cudaStreamDestroy(s);
  cudaFree(x);
  cudaFree(value);
  cudaFree(copy);
  cudaFreeHost(pinned);
}

/// Peer access and cudaMemcpyPeer between device 1 (source) and device 0.
void peer(recorder &rec, bool &can_access) {
  int can = 0;
  if (!rec.check(cudaDeviceCanAccessPeer(&can, 0, 1), "cudaDeviceCanAccessPeer(0, 1)"))
    return;
  can_access = can != 0;
  int *src = nullptr, *dst = nullptr;
  std::vector<int> h(n);
  if (!rec.check(cudaSetDevice(1), "cudaSetDevice(1)") ||
      !rec.check(cudaMalloc(&src, n * sizeof(int)), "cudaMalloc (device 1)"))
    return;
  iota<<<256, 256>>>(src, n, 7);
  rec.launched("iota on device 1");
  rec.check(cudaDeviceSynchronize(), "cudaDeviceSynchronize (device 1)");
  if (rec.check(cudaSetDevice(0), "cudaSetDevice(0)") &&
      rec.check(cudaMalloc(&dst, n * sizeof(int)), "cudaMalloc (device 0)")) {
    // cudaMemcpyPeer works with or without peer access.
    rec.check(cudaMemcpyPeer(dst, 0, src, 1, n * sizeof(int)), "cudaMemcpyPeer");
    rec.check(cudaMemcpy(h.data(), dst, n * sizeof(int), cudaMemcpyDeviceToHost), "cudaMemcpy");
    if (size_t k = count_wrong(h, 7, 1, 0))
      rec.fail(format("cudaMemcpyPeer: %zu of %zu elements wrong", k, n));
    if (can_access) {
      const cudaError_t rc = cudaDeviceEnablePeerAccess(1, 0);
      if (rc == cudaErrorPeerAccessAlreadyEnabled)
        cudaGetLastError(); // not an error here; clear it
      else
        rec.check(rc, "cudaDeviceEnablePeerAccess(1)");
      twice_plus_one<<<256, 256>>>(src, dst, n); // runs on device 0, reads device 1
      rec.launched("twice_plus_one on device 0 reading device 1");
      rec.check(cudaMemcpy(h.data(), dst, n * sizeof(int), cudaMemcpyDeviceToHost), "cudaMemcpy");
      if (size_t k = count_wrong(h, 7, 2, 1))
        rec.fail(format("peer access: %zu of %zu elements wrong", k, n));
      rec.check(cudaDeviceDisablePeerAccess(1), "cudaDeviceDisablePeerAccess(1)");
    }
    cudaFree(dst);
  }
  cudaSetDevice(1);
  cudaFree(src);
  cudaSetDevice(0);
}

/// Thread B: a long kernel on device 1, then an event recorded there. Thread A: device 0's stream
/// waits for that event, then copies the value from device 1 to device 0 and reads it.
void cross_device_event(recorder &rec) {
  int *value = nullptr, *dst = nullptr, *pinned = nullptr;
  cudaEvent_t event = nullptr;
  cudaStream_t s1 = nullptr, s0 = nullptr;
  const int v = 6061;
  if (!rec.check(cudaSetDevice(1), "cudaSetDevice(1)") ||
      !rec.check(cudaMalloc(&value, sizeof(int)), "cudaMalloc (device 1)") ||
      !rec.check(cudaMemset(value, 0, sizeof(int)), "cudaMemset (device 1)") ||
      !rec.check(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "cudaEventCreate") ||
      !rec.check(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking), "cudaStreamCreate") ||
      !rec.check(cudaDeviceSynchronize(), "cudaDeviceSynchronize (device 1)") ||
      !rec.check(cudaSetDevice(0), "cudaSetDevice(0)") ||
      !rec.check(cudaMalloc(&dst, sizeof(int)), "cudaMalloc (device 0)") ||
      !rec.check(cudaMemset(dst, 0xff, sizeof(int)), "cudaMemset (device 0)") ||
      !rec.check(cudaMallocHost(&pinned, sizeof(int)), "cudaMallocHost") ||
      !rec.check(cudaStreamCreateWithFlags(&s0, cudaStreamNonBlocking), "cudaStreamCreate") ||
      !rec.check(cudaDeviceSynchronize(), "cudaDeviceSynchronize (device 0)"))
    return;
  host_flag recorded;
  std::thread b([&] {
    if (rec.check(cudaSetDevice(1), "cudaSetDevice(1) (thread B)")) {
      run_test::spin_then_write<<<1, 1, 0, s1>>>(value, v, spin_ns);
      rec.launched("spin_then_write on device 1");
      rec.check(cudaEventRecord(event, s1), "cudaEventRecord (device 1)");
    }
    recorded.set();
  });
  if (!recorded.wait_at_least(1)) {
    rec.fail("thread B never said it had recorded the event");
  } else {
    *pinned = -3;
    rec.check(cudaStreamWaitEvent(s0, event, 0), "cudaStreamWaitEvent (device 0, event of 1)");
    rec.check(cudaMemcpyPeerAsync(dst, 0, value, 1, sizeof(int), s0), "cudaMemcpyPeerAsync");
    rec.check(cudaMemcpyAsync(pinned, dst, sizeof(int), cudaMemcpyDeviceToHost, s0),
              "cudaMemcpyAsync");
    rec.check(cudaStreamSynchronize(s0), "cudaStreamSynchronize (device 0)");
    rec.expect(*pinned == v, format("device 0's stream after waiting for device 1's event read "
                                    "%d, expected %d",
                                    *pinned, v));
  }
  b.join();
  smids.probe("device0_nonblocking", s0, rec);
  cudaStreamDestroy(s0);
  cudaFree(dst);
  cudaFreeHost(pinned);
  cudaSetDevice(1);
  smids.probe("device1_nonblocking", s1, rec);
  cudaStreamSynchronize(s1);
  cudaStreamDestroy(s1);
  cudaEventDestroy(event);
  cudaFree(value);
  cudaSetDevice(0);
}

} // namespace

int main(int argc, char **argv) {
  std::string smid_out;
  double timeout_s = 120;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--spin-ms" && i + 1 < argc)
      spin_ns = static_cast<unsigned long long>(std::atof(argv[++i]) * 1e6);
    else if (a == "--smid-out" && i + 1 < argc)
      smid_out = argv[++i];
    else if (a == "--timeout-s" && i + 1 < argc)
      timeout_s = std::atof(argv[++i]);
    else {
      std::fprintf(stderr, "usage: two_devices [--spin-ms MS] [--smid-out FILE] [--timeout-s S]\n");
      return 2;
    }
  }
  int count = 0;
  const cudaError_t rc = cudaGetDeviceCount(&count);
  if (rc != cudaSuccess || count < 2) {
    std::fprintf(stderr, "two_devices: needs 2 CUDA devices, %s: skipped\n",
                 rc != cudaSuccess ? cudaGetErrorString(rc)
                                   : (count == 1 ? "only 1 is visible" : "none is visible"));
    return 77;
  }
  smids.enabled = !smid_out.empty();
  run_test::watchdog dog("two_devices", timeout_s);
  int failed = 0;
  auto report = [&failed](const char *name, const recorder &rec) {
    if (rec.ok()) {
      std::printf("%s: ok\n", name);
    } else {
      std::printf("%s: FAILED (%s)\n", name, rec.summary().c_str());
      ++failed;
    }
    std::fflush(stdout);
  };

  dog.at("per device");
  recorder rec0("device 0"), rec1("device 1");
  std::thread t0(per_device, 0, std::ref(rec0)), t1(per_device, 1, std::ref(rec1));
  t0.join();
  t1.join();
  std::printf("using devices 0 and 1\n");
  report("device 0 kernels and stream order", rec0);
  report("device 1 kernels and stream order", rec1);

  dog.at("peer");
  recorder rec_peer("peer");
  bool can_access = false;
  peer(rec_peer, can_access);
  std::printf("peer access 0 -> 1: %s\n", can_access ? "yes" : "no");
  report("peer copy and access", rec_peer);

  dog.at("cross-device event");
  recorder rec_event("cross-device event");
  cross_device_event(rec_event);
  report("cross-device event", rec_event);

  if (smids.enabled && !smids.write(smid_out))
    ++failed;
  std::printf("two_devices: %s\n", failed ? "FAILED" : "ok");
  return failed ? 1 : 0;
}
