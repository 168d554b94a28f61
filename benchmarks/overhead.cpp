// SPDX-License-Identifier: Apache-2.0
// Does greenctx add cost over raw driver calls on the paths users repeat? Each pair times the same
// driver entry point called directly (fetched here with cuGetProcAddress, as greenctx does) and
// through greenctx, on a green context made once and reused. Needs a GPU; without one it says so
// and exits 0 having run nothing.
#include <greenctx/greenctx.hpp>

#include <benchmark/benchmark.h>
#include <cudaTypedefs.h>
#include <dlfcn.h>

#include <cstdio>
#include <optional>
#include <stdexcept>

namespace {

struct raw_driver {
  PFN_cuGreenCtxStreamCreate_v12050 green_stream_create = nullptr;
  PFN_cuStreamDestroy_v4000 stream_destroy = nullptr;
  PFN_cuEventRecord_v2000 event_record = nullptr;
  PFN_cuGreenCtxRecordEvent_v12040 green_record = nullptr;
  PFN_cuLaunchKernel_v4000 launch = nullptr;
  PFN_cuStreamSynchronize_v2000 stream_sync = nullptr;

  raw_driver() {
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    auto get =
        lib ? reinterpret_cast<PFN_cuGetProcAddress_v12000>(dlsym(lib, "cuGetProcAddress_v2"))
            : nullptr;
    if (!get)
      throw std::runtime_error("no driver");
    const auto fetch = [&](const char *name, int version) {
      void *fn = nullptr;
      CUdriverProcAddressQueryResult found{};
      get(name, &fn, version, CU_GET_PROC_ADDRESS_DEFAULT, &found);
      if (!fn)
        throw std::runtime_error(std::string("driver lacks ") + name);
      return fn;
    };
    green_stream_create =
        reinterpret_cast<decltype(green_stream_create)>(fetch("cuGreenCtxStreamCreate", 12050));
    stream_destroy = reinterpret_cast<decltype(stream_destroy)>(fetch("cuStreamDestroy", 4000));
    event_record = reinterpret_cast<decltype(event_record)>(fetch("cuEventRecord", 2000));
    green_record = reinterpret_cast<decltype(green_record)>(fetch("cuGreenCtxRecordEvent", 12040));
    launch = reinterpret_cast<decltype(launch)>(fetch("cuLaunchKernel", 4000));
    stream_sync = reinterpret_cast<decltype(stream_sync)>(fetch("cuStreamSynchronize", 2000));
  }
};

// One device, one 16/rest split, one stream and event: made once, reused by every benchmark.
struct fixture {
  greenctx::device dev{0};
  greenctx::partition_set set =
      greenctx::partition_set::create(dev, greenctx::parse_partition_request("16,rest"));
  const greenctx::green_context &gc = set.parts()[0].context;
  greenctx::stream st = gc.create_stream();
  greenctx::event ev{gc, greenctx::event_flags::disable_timing};
  raw_driver raw;
};

std::optional<fixture> &shared() {
  static std::optional<fixture> f;
  return f;
}

void check(CUresult rc, benchmark::State &state) {
  if (rc != CUDA_SUCCESS)
    state.SkipWithError("driver call failed");
}

void stream_create_raw(benchmark::State &state) {
  auto &f = *shared();
  for (auto _ : state) {
    CUstream s = nullptr;
    check(f.raw.green_stream_create(&s, f.gc.native_handle(), CU_STREAM_NON_BLOCKING, 0), state);
    check(f.raw.stream_destroy(s), state);
  }
}
void stream_create_greenctx(benchmark::State &state) {
  auto &f = *shared();
  for (auto _ : state) {
    greenctx::stream s = f.gc.create_stream();
    benchmark::DoNotOptimize(s.native_handle());
  }
}

void event_record_raw(benchmark::State &state) {
  auto &f = *shared();
  for (auto _ : state)
    check(f.raw.event_record(f.ev.native_handle(), f.st.native_handle()), state);
}
void event_record_greenctx(benchmark::State &state) {
  auto &f = *shared();
  for (auto _ : state)
    f.ev.record(f.st);
}

void context_record_raw(benchmark::State &state) {
  auto &f = *shared();
  for (auto _ : state)
    check(f.raw.green_record(f.gc.native_handle(), f.ev.native_handle()), state);
}
void context_record_greenctx(benchmark::State &state) {
  auto &f = *shared();
  for (auto _ : state)
    f.gc.record(f.ev);
}

// Launches of an empty one-block kernel, 64 per iteration (well below the launch queue's depth),
// with the synchronisation between batches outside the timing: what is timed is the host's cost
// of the launch call, not the GPU running the kernels.
constexpr int launch_batch = 64;

void launch_raw(benchmark::State &state) {
  auto &f = *shared();
  auto k = reinterpret_cast<CUfunction>(greenctx::builtin_kernel("greenctx_spin"));
  unsigned long long ns = 0;
  void *args[] = {&ns};
  for (auto _ : state) {
    for (int i = 0; i < launch_batch; ++i)
      check(f.raw.launch(k, 1, 1, 1, 32, 1, 1, 0, f.st.native_handle(), args, nullptr), state);
    state.PauseTiming();
    check(f.raw.stream_sync(f.st.native_handle()), state);
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * launch_batch);
}
void launch_greenctx(benchmark::State &state) {
  auto &f = *shared();
  for (auto _ : state) {
    for (int i = 0; i < launch_batch; ++i)
      greenctx::launch_spin(f.st, 1, std::chrono::nanoseconds(0), 32);
    state.PauseTiming();
    f.st.synchronize();
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * launch_batch);
}

} // namespace

int main(int argc, char **argv) {
  try {
    shared().emplace();
  } catch (const std::exception &e) {
    std::printf("greenctx overhead benchmark: not run: %s\n", e.what());
    return 0;
  }
  for (auto [name, fn] : {std::pair{"stream_create_destroy/raw", &stream_create_raw},
                          std::pair{"stream_create_destroy/greenctx", &stream_create_greenctx},
                          std::pair{"event_record/raw", &event_record_raw},
                          std::pair{"event_record/greenctx", &event_record_greenctx},
                          std::pair{"green_context_record/raw", &context_record_raw},
                          std::pair{"green_context_record/greenctx", &context_record_greenctx},
                          std::pair{"launch_x64/raw", &launch_raw},
                          std::pair{"launch_x64/greenctx", &launch_greenctx}})
    benchmark::RegisterBenchmark(name, fn)->UseRealTime();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  shared().reset();
  return 0;
}
