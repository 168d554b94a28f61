// SPDX-License-Identifier: Apache-2.0
// Repartitioning through the CUDA 13.1 runtime API (greenctx/cuda_compat.h), as the guide does it,
// over and over: split the device into 16 (then 32) SMs plus the rest, make a green context of
// each piece and a stream on each, run one kernel, destroy everything. Measures the time of each
// cycle and how much device memory the cycles cost (cudaMemGetInfo before and after): on driver
// 580 a green context's create/destroy leaks about 4 MiB, which greenctx's recycling avoids.
//
//   greenctx_repartition_bench [--cycles N] [--json FILE]
//
// Writes a one-screen summary to stdout and, with --json, the environment, the memory figures,
// the distribution of the cycle times and every sample. Exits 1 on any CUDA error, 2 on bad
// arguments.
#include <greenctx/cuda_compat.h>

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace {

// A CUDA call that failed: the call, the error's name and greenctx's explanation.
void check(cudaError_t rc, const char *call) {
  if (rc == cudaSuccess)
    return;
  std::string why = greenctxGetLastErrorMessage();
  throw std::runtime_error(std::string(call) + " failed: " + cudaGetErrorName(rc) + " (" +
                           cudaGetErrorString(rc) + ")" + (why.empty() ? "" : ": " + why));
}
#define CHECK(call) check((call), #call)

struct usage_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct options {
  long cycles = 10000;
  std::string json;
  std::string command_line;
};

const char *const usage = "usage: greenctx_repartition_bench [--cycles N] [--json FILE]\n"
                          "  --cycles N   cycles to run, at least 3 (default 10000)\n"
                          "  --json FILE  write the results, with every sample, to FILE\n";

options parse(int argc, char **argv) {
  options o;
  for (int i = 0; i < argc; ++i)
    o.command_line += (i ? " " : "") + std::string(argv[i]);
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::cout << usage;
      std::exit(0);
    }
    if (i + 1 >= argc || (arg != "--cycles" && arg != "--json"))
      throw usage_error(arg == "--cycles" || arg == "--json" ? arg + " needs a value"
                                                             : "unknown argument '" + arg + "'");
    const std::string value = argv[++i];
    if (arg == "--json") {
      o.json = value;
      continue;
    }
    char *end = nullptr;
    const long n = std::strtol(value.c_str(), &end, 10);
    if (end == value.c_str() || *end != '\0' || n < 3 || n > 100000000)
      throw usage_error("--cycles '" + value +
                        "': a whole number of cycles from 3 (the first cycle of each split "
                        "size is reported apart from the others)");
    o.cycles = n;
  }
  return o;
}

__global__ void touch(int *p) {
  *p += 1;
}

// One cycle of the guide's flow with a group of at least `sms` SMs. Returns its wall time in us.
double cycle(const cudaDevResource &device_sms, unsigned sms, int *counter) {
  const auto start = std::chrono::steady_clock::now();
  cudaDevResource group{}, rest{};
  unsigned n = 1;
  CHECK(cudaDevSmResourceSplitByCount(&group, &n, &device_sms, &rest, 0, sms));
  if (n != 1)
    throw std::runtime_error("cudaDevSmResourceSplitByCount gave " + std::to_string(n) +
                             " groups of " + std::to_string(sms) + " SMs, not 1");
  cudaDevResourceDesc_t desc_group = nullptr, desc_rest = nullptr;
  CHECK(cudaDevResourceGenerateDesc(&desc_group, &group, 1));
  CHECK(cudaDevResourceGenerateDesc(&desc_rest, &rest, 1));
  cudaExecutionContext_t a = nullptr, b = nullptr;
  CHECK(cudaGreenCtxCreate(&a, desc_group, 0, 0));
  CHECK(cudaGreenCtxCreate(&b, desc_rest, 0, 0));
  cudaStream_t sa = nullptr, sb = nullptr;
  CHECK(cudaExecutionCtxStreamCreate(&sa, a, cudaStreamDefault, 0));
  CHECK(cudaExecutionCtxStreamCreate(&sb, b, cudaStreamDefault, 0));
  touch<<<1, 1, 0, sa>>>(counter);
  CHECK(cudaGetLastError());
  CHECK(cudaStreamSynchronize(sa));
  CHECK(cudaStreamDestroy(sa));
  CHECK(cudaStreamDestroy(sb));
  CHECK(cudaExecutionCtxDestroy(a));
  CHECK(cudaExecutionCtxDestroy(b));
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
      .count();
}

double mib(size_t bytes) {
  return static_cast<double>(bytes) / (1024.0 * 1024.0);
}

struct distribution {
  double min = 0, p50 = 0, p90 = 0, p99 = 0, max = 0, mean = 0;
};

// Nearest-rank percentiles of `v` (not empty).
distribution distribution_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const auto rank = [&](double p) {
    const auto k = static_cast<std::size_t>(std::ceil(p / 100.0 * v.size()));
    return v[std::min(v.size() - 1, k == 0 ? 0 : k - 1)];
  };
  distribution d;
  d.min = v.front();
  d.max = v.back();
  d.p50 = rank(50);
  d.p90 = rank(90);
  d.p99 = rank(99);
  double sum = 0;
  for (double x : v)
    sum += x;
  d.mean = sum / v.size();
  return d;
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

} // namespace

int main(int argc, char **argv) try {
  const options opt = parse(argc, argv);
  int devices = 0;
  CHECK(cudaGetDeviceCount(&devices));
  if (devices == 0)
    throw std::runtime_error("no CUDA GPU: this benchmark needs one (it uses device 0)");
  CHECK(cudaSetDevice(0)); // initialises the primary context, as the guide advises
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  int driver = 0;
  CHECK(cudaDriverGetVersion(&driver));
  cudaDevResource device_sms{};
  CHECK(cudaDeviceGetDevResource(0, &device_sms, cudaDevResourceTypeSm));
  int *counter = nullptr;
  CHECK(cudaMalloc(&counter, sizeof(int)));
  CHECK(cudaMemset(counter, 0, sizeof(int)));
  CHECK(cudaDeviceSynchronize());

  size_t free_before = 0, free_warm = 0, free_after = 0, total = 0;
  CHECK(cudaMemGetInfo(&free_before, &total));
  std::vector<double> samples(static_cast<std::size_t>(opt.cycles));
  for (long i = 0; i < opt.cycles; ++i) {
    samples[i] = cycle(device_sms, i % 2 ? 32 : 16, counter);
    if (i == 1) // both split sizes have made their contexts once
      CHECK(cudaMemGetInfo(&free_warm, &total));
  }
  CHECK(cudaMemGetInfo(&free_after, &total));
  int touched = 0;
  CHECK(cudaMemcpy(&touched, counter, sizeof(int), cudaMemcpyDeviceToHost));
  if (touched != opt.cycles)
    throw std::runtime_error("the kernel ran " + std::to_string(touched) + " times in " +
                             std::to_string(opt.cycles) + " cycles");

  // The first cycle of each split size makes its green contexts; the others may recycle them.
  const std::vector<double> steady(samples.begin() + 2, samples.end());
  const distribution d = distribution_of(steady);
  const double growth = mib(free_before) - mib(free_after);
  const double steady_growth = mib(free_warm) - mib(free_after);

  std::printf("repartition: %ld cycles of split 16|32 + rest, 2 green contexts, 2 streams, "
              "1 kernel, destroy all\n",
              opt.cycles);
  std::printf("  GPU %s, %d SMs, driver %d.%d\n", prop.name, prop.multiProcessorCount,
              driver / 1000, driver % 1000 / 10);
  std::printf("  first cycle %.1f us, first 32-SM cycle %.1f us\n", samples[0], samples[1]);
  std::printf("  other cycles (us): min %.1f  p50 %.1f  p90 %.1f  p99 %.1f  max %.1f  mean %.1f\n",
              d.min, d.p50, d.p90, d.p99, d.max, d.mean);
  std::printf("  device memory: %.1f MiB free before, %.1f after: grew by %.1f MiB "
              "(%.1f MiB after the first two cycles)\n",
              mib(free_before), mib(free_after), growth, steady_growth);

  if (!opt.json.empty()) {
    const nlohmann::ordered_json j = {
        {"benchmark", "repartition"},
        {"flow", "cudaDevSmResourceSplitByCount (1 group of 16 or 32 SMs, alternating, plus the "
                 "rest), cudaDevResourceGenerateDesc x2, cudaGreenCtxCreate x2, "
                 "cudaExecutionCtxStreamCreate x2, 1 kernel + cudaStreamSynchronize, "
                 "cudaStreamDestroy x2, cudaExecutionCtxDestroy x2"},
        {"gpu", prop.name},
        {"sm_count", prop.multiProcessorCount},
        {"driver_version", driver},
        {"date", utc_now()},
        {"command_line", opt.command_line},
        {"cycles", opt.cycles},
        {"memory_free_before_mib", mib(free_before)},
        {"memory_free_after_first_two_cycles_mib", mib(free_warm)},
        {"memory_free_after_mib", mib(free_after)},
        {"memory_growth_mib", growth},
        {"memory_growth_after_first_two_cycles_mib", steady_growth},
        {"first_cycle_us", samples[0]},
        {"first_32_sm_cycle_us", samples[1]},
        {"cycle_us",
         {{"of", "cycles 3 to " + std::to_string(opt.cycles)},
          {"min", d.min},
          {"p50", d.p50},
          {"p90", d.p90},
          {"p99", d.p99},
          {"max", d.max},
          {"mean", d.mean}}},
        {"samples_us", samples}};
    std::ofstream f(opt.json);
    f << j.dump(2) << "\n";
    if (!f.flush())
      throw std::runtime_error("cannot write " + opt.json);
    std::printf("  results: %s\n", opt.json.c_str());
  }
  cudaFree(counter);
  return 0;
} catch (const usage_error &e) {
  std::cerr << "greenctx_repartition_bench: " << e.what() << "\n" << usage;
  return 2;
} catch (const std::exception &e) {
  std::cerr << "greenctx_repartition_bench: " << e.what() << "\n";
  return 1;
}
