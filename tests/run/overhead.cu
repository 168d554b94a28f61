// SPDX-License-Identifier: Apache-2.0
// What confinement costs, as a benchmark (never compared, never asserted). Knows nothing of
// greenctx: scripts/overhead-check.sh runs it plain, under `greenctx run --sms <all SMs>`, with the
// preload library loaded but confining nothing, and with a green context of its own
// (--own-green-context), in alternating order, and compares what it prints.
//
//   launch: after a warm-up, R timed repetitions of N empty-kernel launches on one kind of stream,
//           each timed on the host from its first launch to the return of the stream
//           synchronization after its last (start-up excluded); then R repetitions of Q
//           cudaStreamQuery calls on the same, idle stream (a call that passes through the driver
//           and launches nothing). The median over the repetitions is the number to compare: it
//           leaves out the noise between processes.
//   gemm:   cuBLAS SGEMM N^2 (8192), ITERATIONS (50) on the legacy stream, timed with events (the
//           kernels themselves: confinement on all SMs should cost nothing here).
//
// --own-green-context: before the runtime makes a context, the program makes a green context over
// all the device's SMs with the driver API (one group of cuDevSmResourceSplitByCount, as large as
// the device; the whole SM resource if that split fails), creates it with
// CU_GREEN_CTX_DEFAULT_STREAM, makes it current, and then uses the runtime as usual: the runtime
// takes the context that is current. That measures what the driver itself costs in a green context,
// which no preload library can remove. The driver functions come from
// cudaGetDriverEntryPointByVersion, so the program does not link libcuda: it starts (and exits 77)
// on a machine without a driver.
//
// Prints one JSON line on stdout. "green_context" says whether the launches' stream belongs to a
// green context (cuStreamGetCtx_v2; null where the driver cannot say). Exit 0; 2 on bad arguments;
// 3 when a CUDA call fails; 4 when this driver cannot do what was asked (no green-context API, or
// no cudaStreamPerThread in a green context); 77 without a GPU.
//
//   overhead launch [--stream legacy|blocking|nonblocking|per-thread] [--repetitions R]
//                   [--launches N] [--queries Q] [--warmup W] [--own-green-context]
//   overhead gemm [N] [ITERATIONS] [--own-green-context]
#include <cublas_v2.h>
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include "../../benchmarks/program_args.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

#define CHECK(call) PROGRAM_CHECK(me, call)

constexpr int exit_unsupported = 4;
constexpr int exit_no_gpu = 77;

const char *const usage =
    "usage: overhead launch [--stream legacy|blocking|nonblocking|per-thread] [--repetitions R]\n"
    "                       [--launches N] [--queries Q] [--warmup W] [--own-green-context]\n"
    "       overhead gemm [N] [ITERATIONS] [--own-green-context]\n";

__global__ void empty() {
}

__global__ void fill(float *x, size_t n, unsigned seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x)
    x[i] = static_cast<float>(((i * 2654435761u + seed) >> 7) % 5) - 2.0f;
}

struct options {
  std::string mode;
  std::string stream = "legacy";
  long repetitions = 7, launches = 20000, queries = 50000, warmup = 5000;
  size_t n = 8192;
  int iterations = 50;
  bool own_green_context = false;
};

const program_args::program me{"overhead", usage};

[[noreturn]] void bad_usage(const std::string &why) {
  program_args::bad_usage(me, why);
}

long positive(const char *text, const char *what, long least) {
  return program_args::whole(me, text, what, least);
}

options parse(int argc, char **argv) {
  options o;
  o.mode = program_args::mode_of(me, argc, argv, {"launch", "gemm"});
  int positional = 0;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--own-green-context") {
      o.own_green_context = true;
    } else if (o.mode == "launch" && a == "--stream" && has_value) {
      o.stream = argv[++i];
      if (o.stream != "legacy" && o.stream != "blocking" && o.stream != "nonblocking" &&
          o.stream != "per-thread")
        bad_usage("--stream must be legacy, blocking, nonblocking or per-thread, not '" + o.stream +
                  "'");
    } else if (o.mode == "launch" && a == "--repetitions" && has_value) {
      o.repetitions = positive(argv[++i], "--repetitions", 1);
    } else if (o.mode == "launch" && a == "--launches" && has_value) {
      o.launches = positive(argv[++i], "--launches", 1);
    } else if (o.mode == "launch" && a == "--queries" && has_value) {
      o.queries = positive(argv[++i], "--queries", 0);
    } else if (o.mode == "launch" && a == "--warmup" && has_value) {
      o.warmup = positive(argv[++i], "--warmup", 0);
    } else if (o.mode == "gemm" && a[0] != '-' && positional == 0) {
      o.n = static_cast<size_t>(positive(a.c_str(), "N", 16));
      ++positional;
    } else if (o.mode == "gemm" && a[0] != '-' && positional == 1) {
      o.iterations = static_cast<int>(positive(a.c_str(), "ITERATIONS", 1));
      ++positional;
    } else {
      bad_usage("unexpected argument '" + a + "'");
    }
  }
  return o;
}

// ---- the driver, through the runtime (no libcuda link) -----------------------------------------

using program_args::driver_fn;

/// The green context the program made for itself (--own-green-context).
struct own_green {
  CUgreenCtx green = nullptr;
  CUcontext ctx = nullptr;
  unsigned sms = 0;
  const char *how = "";
};

/// A green context over all of device 0's SMs, made current; exits 4 when the driver lacks the API.
own_green make_own_green_context() {
  const auto device_get = driver_fn<PFN_cuDeviceGet_v2000>("cuDeviceGet", 2000);
  const auto get_resource =
      driver_fn<PFN_cuDeviceGetDevResource_v12040>("cuDeviceGetDevResource", 12040);
  const auto split =
      driver_fn<PFN_cuDevSmResourceSplitByCount_v12040>("cuDevSmResourceSplitByCount", 12040);
  const auto generate =
      driver_fn<PFN_cuDevResourceGenerateDesc_v12040>("cuDevResourceGenerateDesc", 12040);
  const auto create = driver_fn<PFN_cuGreenCtxCreate_v12040>("cuGreenCtxCreate", 12040);
  const auto from_green = driver_fn<PFN_cuCtxFromGreenCtx_v12040>("cuCtxFromGreenCtx", 12040);
  const auto set_current = driver_fn<PFN_cuCtxSetCurrent_v4000>("cuCtxSetCurrent", 4000);
  if (!device_get || !get_resource || !split || !generate || !create || !from_green ||
      !set_current) {
    std::fprintf(stderr, "overhead: this driver lacks the green-context API (CUDA 12.4+): "
                         "--own-green-context cannot run\n");
    std::exit(exit_unsupported);
  }
  CUdevice dev = 0;
  CHECK(device_get(&dev, 0));
  CUdevResource all{};
  CHECK(get_resource(dev, &all, CU_DEV_RESOURCE_TYPE_SM));
  // One group as large as the device, the way greenctx run asks for "all SMs"; the whole resource
  // where the driver will not split it so.
  own_green g;
  CUdevResource group{};
  unsigned groups = 1;
  CUdevResourceDesc desc = nullptr;
  if (split(&group, &groups, &all, nullptr, 0, all.sm.smCount) == CUDA_SUCCESS && groups == 1 &&
      group.sm.smCount == all.sm.smCount) {
    CHECK(generate(&desc, &group, 1));
    g.how = "split";
  } else {
    CHECK(generate(&desc, &all, 1));
    g.how = "whole";
  }
  g.sms = all.sm.smCount;
  CHECK(create(&g.green, desc, dev, CU_GREEN_CTX_DEFAULT_STREAM));
  CHECK(from_green(&g.ctx, g.green));
  CHECK(set_current(g.ctx));
  return g;
}

/// 1 when `stream` (a special handle means the current context) belongs to a green context, 0
/// when not, -1 when the driver cannot say. cudaStreamPerThread is asked through the NULL stream:
/// the driver refuses that handle while a green context is current.
int in_green_context(cudaStream_t stream) {
  const auto get_ctx = driver_fn<PFN_cuStreamGetCtx_v12050>("cuStreamGetCtx", 12050);
  if (!get_ctx)
    return -1;
  CUcontext ctx = nullptr;
  CUgreenCtx green = nullptr;
  const CUstream s = stream == cudaStreamPerThread ? nullptr : reinterpret_cast<CUstream>(stream);
  if (get_ctx(s, &ctx, &green) != CUDA_SUCCESS)
    return -1;
  return green ? 1 : 0;
}

/// Exits 3 unless `g`'s context is still the current one (the runtime took it and kept it).
void check_still_current(const own_green &g) {
  const auto get_current = driver_fn<PFN_cuCtxGetCurrent_v4000>("cuCtxGetCurrent", 4000);
  CUcontext now = nullptr;
  if (!get_current || get_current(&now) != CUDA_SUCCESS || now != g.ctx) {
    std::fprintf(stderr,
                 "overhead: --own-green-context: the runtime did not keep the green "
                 "context current (current context %p, green context's %p)\n",
                 static_cast<void *>(now), static_cast<void *>(g.ctx));
    std::exit(3);
  }
}

// ---- the measurements ---------------------------------------------------------------------------

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

std::string json_list(const std::vector<double> &v) {
  std::string out = "[";
  char buf[32];
  for (size_t i = 0; i < v.size(); ++i) {
    std::snprintf(buf, sizeof buf, "%s%.4f", i ? "," : "", v[i]);
    out += buf;
  }
  return out + "]";
}

std::string json_median(const std::vector<double> &v) {
  if (v.empty())
    return "null";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4f", median(v));
  return buf;
}

const char *json_bool(int v) {
  return v < 0 ? "null" : v ? "true" : "false";
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void launch_mode(const options &o, const own_green *own) {
  cudaStream_t s = nullptr; // legacy: the NULL stream of a program built with legacy semantics
  if (o.stream == "blocking")
    CHECK(cudaStreamCreate(&s)); // flags 0: synchronizes with the legacy stream
  else if (o.stream == "nonblocking")
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  else if (o.stream == "per-thread")
    s = cudaStreamPerThread;

  empty<<<1, 1, 0, s>>>();
  if (const cudaError_t rc = cudaGetLastError(); rc != cudaSuccess) {
    const bool unsupported = own && o.stream == "per-thread";
    std::fprintf(stderr, "overhead: the first launch on the %s stream failed (%s)%s\n",
                 o.stream.c_str(), cudaGetErrorString(rc),
                 unsupported ? ": this driver has no cudaStreamPerThread in a green context" : "");
    std::exit(unsupported ? exit_unsupported : 3);
  }
  for (long i = 0; i < o.warmup; ++i) // module load, queues, the library's first lookups
    empty<<<1, 1, 0, s>>>();
  CHECK(cudaGetLastError());
  CHECK(cudaStreamSynchronize(s));
  for (long i = 0; i < 1000 && o.queries > 0; ++i)
    CHECK(cudaStreamQuery(s));

  std::vector<double> us_launch, us_query;
  for (long r = 0; r < o.repetitions; ++r) {
    const auto start = std::chrono::steady_clock::now();
    for (long i = 0; i < o.launches; ++i)
      empty<<<1, 1, 0, s>>>();
    CHECK(cudaStreamSynchronize(s));
    const double t = seconds_since(start);
    CHECK(cudaGetLastError());
    us_launch.push_back(t * 1e6 / o.launches);
  }
  for (long r = 0; r < o.repetitions && o.queries > 0; ++r) {
    const auto start = std::chrono::steady_clock::now();
    for (long i = 0; i < o.queries; ++i)
      CHECK(cudaStreamQuery(s)); // the stream is idle: anything but cudaSuccess is an error
    us_query.push_back(seconds_since(start) * 1e6 / o.queries);
  }
  const int green = in_green_context(s);
  if (own)
    check_still_current(*own);

  std::printf("{\"mode\":\"launch\",\"stream\":\"%s\",\"own_green_context\":%s,"
              "\"green_context\":%s,\"repetitions\":%ld,\"warmup\":%ld,\"launches\":%ld,"
              "\"us_per_launch\":%s,\"median_us_per_launch\":%s,\"queries\":%ld,"
              "\"us_per_query\":%s,\"median_us_per_query\":%s}\n",
              o.stream.c_str(), own ? "true" : "false", json_bool(green), o.repetitions, o.warmup,
              o.launches, json_list(us_launch).c_str(), json_median(us_launch).c_str(), o.queries,
              json_list(us_query).c_str(), json_median(us_query).c_str());
  if (s && s != cudaStreamPerThread)
    CHECK(cudaStreamDestroy(s));
}

void gemm_mode(const options &o, const own_green *own) {
  const size_t n = o.n;
  float *a, *b, *c;
  CHECK(cudaMalloc(&a, n * n * sizeof(float)));
  CHECK(cudaMalloc(&b, n * n * sizeof(float)));
  CHECK(cudaMalloc(&c, n * n * sizeof(float)));
  fill<<<1024, 256>>>(a, n * n, 1);
  fill<<<1024, 256>>>(b, n * n, 2);
  CHECK(cudaGetLastError());
  cublasHandle_t h;
  CHECK(cublasCreate(&h));
  const float one = 1, zero = 0;
  const int ni = static_cast<int>(n);
  for (int i = 0; i < 2; ++i) // warm-up
    CHECK(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, ni, ni, ni, &one, a, ni, b, ni, &zero, c, ni));
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  CHECK(cudaEventRecord(start));
  for (int i = 0; i < o.iterations; ++i)
    CHECK(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, ni, ni, ni, &one, a, ni, b, ni, &zero, c, ni));
  CHECK(cudaEventRecord(stop));
  CHECK(cudaEventSynchronize(stop));
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, start, stop));
  const double s = ms * 1e-3;
  const int green = in_green_context(nullptr);
  if (own)
    check_still_current(*own);
  std::printf("{\"mode\":\"gemm\",\"own_green_context\":%s,\"green_context\":%s,\"seconds\":%.6f,"
              "\"n\":%zu,\"iterations\":%d,\"tflops\":%.2f}\n",
              own ? "true" : "false", json_bool(green), s, n, o.iterations,
              2.0 * n * n * n * o.iterations / s / 1e12);
  CHECK(cublasDestroy(h));
  CHECK(cudaFree(a));
  CHECK(cudaFree(b));
  CHECK(cudaFree(c));
}

} // namespace

int main(int argc, char **argv) {
  const options o = parse(argc, argv);
  int count = 0;
  const cudaError_t rc = cudaGetDeviceCount(&count);
  if (rc != cudaSuccess || count == 0) {
    std::fprintf(stderr, "overhead: no CUDA device (%s): skipped\n",
                 rc == cudaSuccess ? "none found" : cudaGetErrorString(rc));
    return exit_no_gpu;
  }
  own_green own;
  if (o.own_green_context) {
    // Before any runtime call that makes a context current: cudaSetDevice would make the primary
    // context current, so the runtime is only initialized (cudaFree) on top of the green one.
    own = make_own_green_context();
    std::fprintf(stderr, "overhead: own green context over %u SMs (%s)\n", own.sms, own.how);
  } else {
    CHECK(cudaSetDevice(0));
  }
  CHECK(cudaFree(nullptr));
  if (o.mode == "launch")
    launch_mode(o, o.own_green_context ? &own : nullptr);
  else
    gemm_mode(o, o.own_green_context ? &own : nullptr);
  // The own green context is left to the end of the process: the runtime still uses it until then.
  return 0;
}
