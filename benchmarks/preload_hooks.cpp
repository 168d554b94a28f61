// SPDX-License-Identifier: Apache-2.0
// What the hooks of `greenctx run` cost per call, on the CPU: libgreenctx_preload.so over the
// fake driver of the tests (tests/preload/fake_cuda.cpp, whose launch only appends to a log, here
// cleared between batches), against the fake driver's own function. This isolates the library's
// share of a launch from the GPU and the real driver (the GPU numbers, benchmarks/RESULTS.md,
// include both). Needs no GPU.
#include <cuda.h>
#include <cudaTypedefs.h>

#include <benchmark/benchmark.h>
#include <dlfcn.h>

#include <cstdlib>
#include <string>
#include <vector>

#undef cuGetProcAddress

namespace {

void *fake() {
  static void *h = dlopen(GREENCTX_FAKE_CUDA_PATH, RTLD_NOW | RTLD_GLOBAL);
  return h;
}
void *preload() {
  static void *h = [] {
    fake();
    setenv("GREENCTX_RUN_SMS", "16", 0);
    return dlopen(GREENCTX_PRELOAD_PATH, RTLD_NOW | RTLD_GLOBAL);
  }();
  return h;
}

template <class F> F lookup(void *lib, const char *name, int version) {
  auto gp = reinterpret_cast<PFN_cuGetProcAddress_v12000>(dlsym(lib, "cuGetProcAddress_v2"));
  void *p = nullptr;
  CUdriverProcAddressQueryResult found{};
  gp(name, &p, version, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &found);
  return reinterpret_cast<F>(p);
}

void clear_log() {
  using take_fn = std::vector<std::string> *(*)();
  delete reinterpret_cast<take_fn>(dlsym(fake(), "fake_cuda_take_log"))();
}

enum class target { legacy, non_blocking, blocking };

// Whether the fake driver logs (its launch then builds a string and takes a lock, about 60-100 ns
// that vary more than the hooks cost) or does nothing (quiet: the time is the hooks').
void set_quiet(bool on) {
  using quiet_fn = void (*)(bool);
  reinterpret_cast<quiet_fn>(dlsym(fake(), "fake_cuda_set_quiet"))(on);
}

// One launch per iteration on `where`, hooked or straight to the fake driver.
void launches(benchmark::State &state, bool hooked, target where, bool quiet = false) {
  set_quiet(quiet);
  void *lib = hooked ? preload() : fake();
  auto launch = lookup<PFN_cuLaunchKernel_v4000>(lib, "cuLaunchKernel", 4000);
  auto set_current = lookup<PFN_cuCtxSetCurrent_v4000>(preload(), "cuCtxSetCurrent", 4000);
  auto create = lookup<PFN_cuStreamCreate_v2000>(preload(), "cuStreamCreate", 2000);
  set_current(reinterpret_cast<CUcontext>(0x100)); // device 0's primary: the green context
  CUstream s = nullptr;
  if (where != target::legacy)
    create(&s, where == target::blocking ? 0 : CU_STREAM_NON_BLOCKING);
  std::int64_t n = 0;
  for (auto _ : state) {
    launch(nullptr, 1, 1, 1, 1, 1, 1, 0, s, nullptr, nullptr);
    if (++n % 4096 == 0) {
      state.PauseTiming();
      clear_log();
      state.ResumeTiming();
    }
  }
  clear_log();
  set_quiet(false);
}

} // namespace

BENCHMARK_CAPTURE(launches, fake_driver_legacy_stream, false, target::legacy);
BENCHMARK_CAPTURE(launches, hooked_legacy_stream, true, target::legacy);
BENCHMARK_CAPTURE(launches, fake_driver_non_blocking_stream, false, target::non_blocking);
BENCHMARK_CAPTURE(launches, hooked_non_blocking_stream, true, target::non_blocking);
BENCHMARK_CAPTURE(launches, hooked_blocking_stream, true, target::blocking);
BENCHMARK_CAPTURE(launches, quiet_fake_driver_legacy_stream, false, target::legacy, true);
BENCHMARK_CAPTURE(launches, quiet_hooked_legacy_stream, true, target::legacy, true);
BENCHMARK_CAPTURE(launches, quiet_fake_driver_non_blocking_stream, false, target::non_blocking,
                  true);
BENCHMARK_CAPTURE(launches, quiet_hooked_non_blocking_stream, true, target::non_blocking, true);
BENCHMARK_CAPTURE(launches, quiet_hooked_blocking_stream, true, target::blocking, true);

BENCHMARK_MAIN();
