// SPDX-License-Identifier: Apache-2.0
// Per-launch costs compared inside one process, block against block, so that the noise between
// processes (26-40% for one program on the H200 VM, benchmarks/RESULTS.md) drops out: the method
// for the parts of what `greenctx run` costs. Never asserted; prints one JSON line.
//
//   hooks:    A = cuLaunchKernel as the program gets it (cudaGetDriverEntryPointByVersion: under
//             greenctx run, the preload's hook), B = libcuda.so.1's own (its cuGetProcAddress_v2,
//             found with glibc's dlsym, which no preload hooks). Both launch one empty kernel in
//             the current context on the same stream. Run plain it is a control: A and B are the
//             same function ("same_function": true) and the difference is the method's own.
//   contexts: A = a green context over all of the device's SMs made by this program, B = the
//             primary context (the runtime's); both through libcuda's own cuLaunchKernel, each
//             on a stream of its context. What the driver costs in a green context. Meant to run
//             plain (under greenctx run the primary context is itself a green context).
//
// Each pair is a block of A and a block of B in alternating order (AB, BA, AB, ...); a block is
// W untimed launches and a synchronization (after a context switch, the switch's after-effects
// stay out), then N launches timed from the first to the return of the stream's synchronization.
// Reported: the medians of A and B per launch, and the paired (A - B) / B per launch: its median,
// quartiles and a distribution-free 95% interval for the median.
//
// Exit 0; 2 on bad arguments; 3 when a CUDA call fails; 4 when the driver lacks what is asked
// (the green-context API); 77 without a GPU.
//
//   launch_pairs hooks|contexts [--stream legacy|blocking|nonblocking] [--pairs P]
//                [--launches N] [--warmup W]
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>
#include <dlfcn.h>

#include "program_args.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

#define CHECK(call) PROGRAM_CHECK(me, call)

constexpr int exit_unsupported = 4;
constexpr int exit_no_gpu = 77;

const char *const usage =
    "usage: launch_pairs hooks|contexts [--stream legacy|blocking|nonblocking]"
    " [--pairs P] [--launches N] [--warmup W]\n";

__global__ void empty() {
}

struct options {
  std::string mode;
  std::string stream = "legacy";
  long pairs = 150, launches = 2000, warmup = 64;
};

const program_args::program me{"launch_pairs", usage};

[[noreturn]] void bad_usage(const std::string &why) {
  program_args::bad_usage(me, why);
}

long whole(const char *text, const char *what, long least) {
  return program_args::whole(me, text, what, least);
}

options parse(int argc, char **argv) {
  options o;
  o.mode = program_args::mode_of(me, argc, argv, {"hooks", "contexts"});
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc)
      bad_usage("'" + a + "' needs a value, or is not an option");
    const char *v = argv[++i];
    if (a == "--stream") {
      o.stream = v;
      if (o.stream != "legacy" && o.stream != "blocking" && o.stream != "nonblocking")
        bad_usage("--stream must be legacy, blocking or nonblocking, not '" + o.stream + "'");
    } else if (a == "--pairs") {
      o.pairs = whole(v, "--pairs", 4);
    } else if (a == "--launches") {
      o.launches = whole(v, "--launches", 1);
    } else if (a == "--warmup") {
      o.warmup = whole(v, "--warmup", 0);
    } else {
      bad_usage("unexpected argument '" + a + "'");
    }
  }
  return o;
}

using program_args::driver_fn;

/// libcuda.so.1's own function, past anything preloaded: glibc's dlsym (an interposer hooks the
/// name dlsym, not its versioned symbol) on the driver's handle, then the driver's lookup.
template <class Fn> Fn drivers_own(const char *name, int version) {
  using dlsym_fn = void *(*)(void *, const char *);
  auto glibc_dlsym = reinterpret_cast<dlsym_fn>(dlvsym(RTLD_DEFAULT, "dlsym", "GLIBC_2.34"));
  if (!glibc_dlsym)
    glibc_dlsym = reinterpret_cast<dlsym_fn>(dlvsym(RTLD_DEFAULT, "dlsym", "GLIBC_2.2.5"));
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (!glibc_dlsym || !lib)
    return nullptr;
  auto lookup =
      reinterpret_cast<PFN_cuGetProcAddress_v12000>(glibc_dlsym(lib, "cuGetProcAddress_v2"));
  void *p = nullptr;
  CUdriverProcAddressQueryResult found{};
  if (!lookup ||
      lookup(name, &p, version, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &found) != CUDA_SUCCESS)
    return nullptr;
  return reinterpret_cast<Fn>(p);
}

struct driver {
  PFN_cuLaunchKernel_v4000 launch_as_seen = nullptr, launch_own = nullptr;
  PFN_cuStreamSynchronize_v2000 sync = nullptr;
  PFN_cuStreamCreate_v2000 stream_create_as_seen = nullptr, stream_create_own = nullptr;
  PFN_cuCtxSetCurrent_v4000 set_current = nullptr;
  PFN_cuCtxGetCurrent_v4000 get_current = nullptr;
};

driver load_driver() {
  driver d;
  d.launch_as_seen = driver_fn<PFN_cuLaunchKernel_v4000>("cuLaunchKernel", 4000);
  d.launch_own = drivers_own<PFN_cuLaunchKernel_v4000>("cuLaunchKernel", 4000);
  d.sync = drivers_own<PFN_cuStreamSynchronize_v2000>("cuStreamSynchronize", 2000);
  d.stream_create_as_seen = driver_fn<PFN_cuStreamCreate_v2000>("cuStreamCreate", 2000);
  d.stream_create_own = drivers_own<PFN_cuStreamCreate_v2000>("cuStreamCreate", 2000);
  d.set_current = drivers_own<PFN_cuCtxSetCurrent_v4000>("cuCtxSetCurrent", 4000);
  d.get_current = drivers_own<PFN_cuCtxGetCurrent_v4000>("cuCtxGetCurrent", 4000);
  if (!d.launch_as_seen || !d.launch_own || !d.sync || !d.stream_create_as_seen ||
      !d.stream_create_own || !d.set_current || !d.get_current) {
    std::fprintf(stderr, "launch_pairs: the driver's functions could not be found\n");
    std::exit(3);
  }
  return d;
}

/// A green context over all of device 0's SMs (one group of a split by count as large as the
/// device, or the whole resource where the driver will not split so); exits 4 without the API.
CUcontext all_sm_green_context() {
  const auto get_resource =
      drivers_own<PFN_cuDeviceGetDevResource_v12040>("cuDeviceGetDevResource", 12040);
  const auto split =
      drivers_own<PFN_cuDevSmResourceSplitByCount_v12040>("cuDevSmResourceSplitByCount", 12040);
  const auto generate =
      drivers_own<PFN_cuDevResourceGenerateDesc_v12040>("cuDevResourceGenerateDesc", 12040);
  const auto create = drivers_own<PFN_cuGreenCtxCreate_v12040>("cuGreenCtxCreate", 12040);
  const auto from_green = drivers_own<PFN_cuCtxFromGreenCtx_v12040>("cuCtxFromGreenCtx", 12040);
  if (!get_resource || !split || !generate || !create || !from_green) {
    std::fprintf(stderr, "launch_pairs: this driver lacks the green-context API (CUDA 12.4+)\n");
    std::exit(exit_unsupported);
  }
  CUdevResource all{}, group{};
  CHECK(get_resource(0, &all, CU_DEV_RESOURCE_TYPE_SM));
  unsigned groups = 1;
  CUdevResourceDesc desc = nullptr;
  if (split(&group, &groups, &all, nullptr, 0, all.sm.smCount) == CUDA_SUCCESS && groups == 1 &&
      group.sm.smCount == all.sm.smCount)
    CHECK(generate(&desc, &group, 1));
  else
    CHECK(generate(&desc, &all, 1));
  CUgreenCtx green = nullptr;
  CUcontext ctx = nullptr;
  CHECK(create(&green, desc, 0, CU_GREEN_CTX_DEFAULT_STREAM));
  CHECK(from_green(&ctx, green));
  return ctx;
}

/// One side of a comparison: a context, a stream in it, and the launch function.
struct side {
  CUcontext ctx = nullptr;
  CUstream stream = nullptr;
  PFN_cuLaunchKernel_v4000 launch = nullptr;
};

/// A stream of `kind` in the current context (the legacy stream: null), made by `create`.
CUstream make_stream(PFN_cuStreamCreate_v2000 create, const std::string &kind) {
  CUstream s = nullptr;
  if (kind != "legacy")
    CHECK(create(&s, kind == "nonblocking" ? CU_STREAM_NON_BLOCKING : 0));
  return s;
}

/// Nanoseconds per launch of one block on `s`.
double block(const driver &d, const side &s, CUfunction f, long warmup, long n) {
  CHECK(d.set_current(s.ctx));
  for (long i = 0; i < warmup; ++i)
    CHECK(s.launch(f, 1, 1, 1, 32, 1, 1, 0, s.stream, nullptr, nullptr));
  CHECK(d.sync(s.stream));
  const auto t0 = std::chrono::steady_clock::now();
  for (long i = 0; i < n; ++i)
    CHECK(s.launch(f, 1, 1, 1, 32, 1, 1, 0, s.stream, nullptr, nullptr));
  CHECK(d.sync(s.stream));
  const auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::nano>(t1 - t0).count() / static_cast<double>(n);
}

using program_args::quantile;

/// The order statistics that bound the median with about 95% confidence (normal approximation
/// of the binomial): the values at ranks n/2 -+ 0.98 sqrt(n).
std::pair<double, double> median_interval(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const double n = static_cast<double>(v.size());
  const double half = 0.98 * std::sqrt(n);
  const long lo = std::max(0L, static_cast<long>(std::floor(n / 2 - half)));
  const long hi = std::min(static_cast<long>(n) - 1, static_cast<long>(std::ceil(n / 2 + half)));
  return {v[static_cast<std::size_t>(lo)], v[static_cast<std::size_t>(hi)]};
}

} // namespace

int main(int argc, char **argv) {
  const options o = parse(argc, argv);
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "launch_pairs: no CUDA device\n");
    return exit_no_gpu;
  }
  CHECK(cudaSetDevice(0));
  CHECK(cudaFree(nullptr)); // the runtime's context, current
  const driver d = load_driver();
  cudaKernel_t kernel = nullptr;
  CHECK(cudaGetKernel(&kernel, empty));
  // A CUkernel launches in whichever context is current (CUDA 12.0+).
  const auto f = reinterpret_cast<CUfunction>(kernel);

  side a, b;
  CUcontext runtime_ctx = nullptr;
  CHECK(d.get_current(&runtime_ctx));
  if (o.mode == "hooks") {
    a.ctx = runtime_ctx;
    // Made the way the program would make it, so that a preload knows a blocking stream.
    a.stream = make_stream(d.stream_create_as_seen, o.stream);
    a.launch = d.launch_as_seen;
    b = a;
    b.launch = d.launch_own;
  } else {
    b.ctx = runtime_ctx;
    b.stream = make_stream(d.stream_create_own, o.stream);
    b.launch = d.launch_own;
    a.ctx = all_sm_green_context();
    a.launch = d.launch_own;
    CHECK(d.set_current(a.ctx));
    a.stream = make_stream(d.stream_create_own, o.stream);
  }

  std::vector<double> as, bs, rel;
  for (long p = 0; p < o.pairs; ++p) {
    double ta = 0, tb = 0;
    if (p % 2 == 0) {
      ta = block(d, a, f, o.warmup, o.launches);
      tb = block(d, b, f, o.warmup, o.launches);
    } else {
      tb = block(d, b, f, o.warmup, o.launches);
      ta = block(d, a, f, o.warmup, o.launches);
    }
    as.push_back(ta);
    bs.push_back(tb);
    rel.push_back((ta - tb) / tb);
  }
  CHECK(d.set_current(runtime_ctx));
  std::vector<double> diff(as.size());
  for (std::size_t i = 0; i < as.size(); ++i)
    diff[i] = as[i] - bs[i];
  const auto [lo, hi] = median_interval(rel);
  std::printf("{\"mode\":\"%s\",\"stream\":\"%s\",\"pairs\":%ld,\"launches\":%ld,\"warmup\":%ld,"
              "\"same_function\":%s,\"a_ns\":%.2f,\"b_ns\":%.2f,\"diff_ns\":%.2f,"
              "\"rel_median\":%.5f,\"rel_q1\":%.5f,\"rel_q3\":%.5f,\"rel_ci95\":[%.5f,%.5f]}\n",
              o.mode.c_str(), o.stream.c_str(), o.pairs, o.launches, o.warmup,
              d.launch_as_seen == d.launch_own ? "true" : "false", quantile(as, 0.5),
              quantile(bs, 0.5), quantile(diff, 0.5), quantile(rel, 0.5), quantile(rel, 0.25),
              quantile(rel, 0.75), lo, hi);
  return 0;
}
