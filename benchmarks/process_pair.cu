// SPDX-License-Identifier: Apache-2.0
// The two programs of the benchmark across processes (scripts/processes-bench.sh): a critical
// process that launches a small kernel at a steady rate and times each launch to its completion,
// and a background process that floods the SMs it is given with fixed work and counts what it
// finished. Plain CUDA runtime code that knows nothing of greenctx: the script runs it alone,
// side by side with and without MPS, under MPS's options and under `greenctx run --split S
// --piece I`. Prints one JSON line on stdout.
//
//   process_pair critical [--samples N] [--interval-us I] [--blocks B] [--kernel-us K]
//                         [--priority high|default]
//       N launches (default 2000), one every I us (200), of B blocks (16) of 128 threads spinning
//       K us (20); each timed on the host from the launch to the return of its stream's
//       synchronization. Prints the latency's p50, p90, p99 and max in us.
//   process_pair background --ready FILE [--seconds S] [--iterations M]
//       Waves of 8 blocks of 256 threads per SM the program is told (each thread M dependent
//       multiply-adds, default 50000), two kernels in flight, until SIGTERM or S seconds (default
//       60); creates FILE once its first kernel has finished. Prints the blocks finished per
//       second from its first launch to its last kernel's end.
//
// Exit 0; 2 on bad arguments; 3 when a CUDA call fails; 77 without a GPU.
#include <cuda_runtime.h>

#include "program_args.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

#define CHECK(call)                                                                                \
  do {                                                                                             \
    const auto rc_ = (call);                                                                       \
    if (rc_ != cudaSuccess) {                                                                      \
      std::fprintf(stderr, "process_pair: %s failed: %s\n", #call, cudaGetErrorString(rc_));       \
      std::exit(3);                                                                                \
    }                                                                                              \
  } while (0)

using clock_type = std::chrono::steady_clock;

const char *const usage =
    "usage: process_pair critical [--samples N] [--interval-us I] [--blocks B] [--kernel-us K]\n"
    "                             [--priority high|default]\n"
    "       process_pair background --ready FILE [--seconds S] [--iterations M]\n";

__global__ void spin(unsigned long long ns) {
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  while (now - start < ns);
}

__global__ void work(unsigned long long iterations, float *sink) {
  float x = 1.0f + 1e-3f * static_cast<float>(threadIdx.x);
  for (unsigned long long i = 0; i < iterations; ++i)
    x = fmaf(x, 0.999999f, 1e-6f);
  if (x == -1.0f) // never: keeps the loop
    sink[0] = x;
}

const program_args::program me{"process_pair", usage};

[[noreturn]] void bad_usage(const std::string &why) {
  program_args::bad_usage(me, why);
}

long whole(const char *text, const char *what, long least) {
  return program_args::whole(me, text, what, least);
}

using program_args::quantile;

int critical(long samples, long interval_us, long blocks, long kernel_us, bool high) {
  int least = 0, greatest = 0;
  CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  cudaStream_t s = nullptr;
  CHECK(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, high ? greatest : least));
  const auto ns = static_cast<unsigned long long>(kernel_us) * 1000;
  for (int i = 0; i < 20; ++i) // warm-up: the module loaded, the clocks up
    spin<<<static_cast<unsigned>(blocks), 128, 0, s>>>(ns);
  CHECK(cudaStreamSynchronize(s));
  std::vector<double> us;
  us.reserve(static_cast<std::size_t>(samples));
  auto next = clock_type::now();
  for (long i = 0; i < samples; ++i) {
    next += std::chrono::microseconds(interval_us);
    while (clock_type::now() < next) {
    }
    const auto t0 = clock_type::now();
    spin<<<static_cast<unsigned>(blocks), 128, 0, s>>>(ns);
    CHECK(cudaGetLastError());
    CHECK(cudaStreamSynchronize(s));
    us.push_back(std::chrono::duration<double, std::micro>(clock_type::now() - t0).count());
  }
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  std::printf("{\"role\":\"critical\",\"sms\":%d,\"samples\":%ld,\"interval_us\":%ld,"
              "\"blocks\":%ld,\"kernel_us\":%ld,\"priority\":\"%s\",\"p50_us\":%.2f,"
              "\"p90_us\":%.2f,\"p99_us\":%.2f,\"max_us\":%.2f}\n",
              sms, samples, interval_us, blocks, kernel_us, high ? "high" : "default",
              quantile(us, 0.5), quantile(us, 0.9), quantile(us, 0.99),
              *std::max_element(us.begin(), us.end()));
  return 0;
}

std::atomic<bool> stop{false};
void on_term(int) {
  stop.store(true);
}

int background(const std::string &ready, long seconds, long iterations) {
  std::signal(SIGTERM, on_term);
  std::signal(SIGINT, on_term);
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const unsigned blocks = 8u * static_cast<unsigned>(sms);
  cudaStream_t s = nullptr;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  float *sink = nullptr;
  CHECK(cudaMalloc(&sink, sizeof(float)));
  const auto n = static_cast<unsigned long long>(iterations);
  work<<<blocks, 256, 0, s>>>(n, sink); // warm-up
  CHECK(cudaStreamSynchronize(s));
  if (FILE *f = std::fopen(ready.c_str(), "w"))
    std::fclose(f);
  else
    bad_usage("cannot create the ready file '" + ready + "'");
  cudaEvent_t done[2];
  CHECK(cudaEventCreateWithFlags(&done[0], cudaEventDisableTiming));
  CHECK(cudaEventCreateWithFlags(&done[1], cudaEventDisableTiming));
  const auto t0 = clock_type::now();
  const auto limit = t0 + std::chrono::seconds(seconds);
  long long kernels = 0;
  while (!stop.load() && clock_type::now() < limit) {
    work<<<blocks, 256, 0, s>>>(n, sink);
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(done[kernels % 2], s));
    ++kernels;
    if (kernels >= 2) // two in flight: wait for the one before this
      CHECK(cudaEventSynchronize(done[kernels % 2]));
  }
  CHECK(cudaStreamSynchronize(s));
  const double secs = std::chrono::duration<double>(clock_type::now() - t0).count();
  std::printf("{\"role\":\"background\",\"sms\":%d,\"kernels\":%lld,\"blocks\":%lld,"
              "\"seconds\":%.4f,\"blocks_per_s\":%.1f,\"iterations\":%ld}\n",
              sms, kernels, kernels * blocks, secs, static_cast<double>(kernels * blocks) / secs,
              iterations);
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  const std::string role = program_args::mode_of(me, argc, argv, {"critical", "background"});
  long samples = 2000, interval = 200, blocks = 16, kernel_us = 20, seconds = 60,
       iterations = 50000;
  bool high = false;
  std::string ready;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc)
      bad_usage("'" + a + "' needs a value, or is not an option");
    const char *v = argv[++i];
    if (role == "critical" && a == "--samples")
      samples = whole(v, "--samples", 1);
    else if (role == "critical" && a == "--interval-us")
      interval = whole(v, "--interval-us", 1);
    else if (role == "critical" && a == "--blocks")
      blocks = whole(v, "--blocks", 1);
    else if (role == "critical" && a == "--kernel-us")
      kernel_us = whole(v, "--kernel-us", 1);
    else if (role == "critical" && a == "--priority") {
      if (std::string(v) != "high" && std::string(v) != "default")
        bad_usage("--priority must be high or default, not '" + std::string(v) + "'");
      high = std::string(v) == "high";
    } else if (role == "background" && a == "--ready")
      ready = v;
    else if (role == "background" && a == "--seconds")
      seconds = whole(v, "--seconds", 1);
    else if (role == "background" && a == "--iterations")
      iterations = whole(v, "--iterations", 1);
    else
      bad_usage("unexpected argument '" + a + "'");
  }
  if (role == "background" && ready.empty())
    bad_usage("background needs --ready FILE");
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "process_pair: no CUDA device\n");
    return 77;
  }
  return role == "critical" ? critical(samples, interval, blocks, kernel_us, high)
                            : background(ready, seconds, iterations);
}
