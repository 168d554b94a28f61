// greenctx bench --comm: an NCCL all-reduce on every GPU next to a cuBLAS GEMM loop, per mode.
#include "bench/comm_run.hpp"
#include "bench/cublas.hpp"
#include "bench/nccl.hpp"
#include "cli_common.hpp"

#include <fmt/format.h>

#include <array>
#include <atomic>
#include <cstdlib>
#include <memory>
#include <string_view>
#include <thread>

namespace greenctx::cli::bench::comm {
namespace {

using clock = std::chrono::steady_clock;
constexpr const char *api = "greenctx bench --comm";

// One GPU: its buffer, its GEMM, and the streams of the mode being measured.
struct gpu {
  std::unique_ptr<device> dev;
  device_buffer buffer;
  std::unique_ptr<gemm> work;
  std::unique_ptr<partition_set> parts; // partitioned modes only
  stream comm_stream, gemm_stream;
  std::vector<event> starts, ends;
};

// A GEMM loop on one stream in its own thread, at most `depth` GEMMs queued, until stopped.
class gemm_loop {
public:
  gemm_loop(gemm &g, stream_ref s, const device &dev) : g_(g), s_(s) {
    for (auto &e : ring_)
      e = event(dev.primary_context(), event_flags::disable_timing | event_flags::blocking_sync);
    thread_ = std::thread([this] { loop(); });
  }
  ~gemm_loop() {
    try {
      stop();
    } catch (const error &) { // reported by the stop() the measurement called, if it got there
    }
  }
  /// Stops, waits for the queued GEMMs and returns TFLOP/s over the loop's life. Throws the
  /// loop's error (cuBLAS or the driver), if it had one.
  double stop() {
    if (thread_.joinable()) {
      stop_ = true;
      thread_.join();
    }
    if (!failure_.empty())
      throw error(CUDA_ERROR_UNKNOWN, api, "the GEMM loop failed: " + failure_);
    return tflops_;
  }

private:
  // At most ring_.size() GEMMs queued; the rate counts whole GEMMs over the loop's wall time
  // (the last GEMMs, finished after the measurement, add at most that many GEMMs' time).
  void loop() {
    try {
      const auto t0 = clock::now();
      std::size_t n = 0;
      while (!stop_) {
        auto &e = ring_[n % ring_.size()];
        if (n >= ring_.size())
          e.synchronize();
        g_.launch(s_);
        e.record(s_);
        ++n;
      }
      s_.synchronize();
      const double s = std::chrono::duration<double>(clock::now() - t0).count();
      tflops_ = s > 0 ? static_cast<double>(n) * g_.flops() / s / 1e12 : 0;
    } catch (const std::exception &e) {
      failure_ = e.what();
    }
  }
  gemm &g_;
  stream_ref s_;
  std::array<event, 2> ring_;
  std::atomic<bool> stop_{false};
  double tflops_ = 0;
  std::string failure_;
  std::thread thread_;
};

// Waits for `e`, polling, up to `limit`; false on a hang.
bool wait_for(event_ref e, std::chrono::seconds limit) {
  const auto deadline = clock::now() + limit;
  while (!e.ready()) {
    if (clock::now() > deadline)
      return false;
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
  return true;
}

// Sets the streams of `m` on every GPU (and its partitions), or throws.
void prepare(std::vector<gpu> &gpus, const mode &m) {
  for (auto &g : gpus) {
    g.comm_stream = stream(); // streams go before the green contexts they belong to
    g.gemm_stream = stream();
    g.parts.reset();
    const auto primary = g.dev->primary_context();
    if (m.kind == mode_kind::partitioned) {
      g.parts = std::make_unique<partition_set>(
          partition_set::create(*g.dev, parse_partition_request(fmt::format("{},rest", m.k))));
      g.comm_stream = g.parts->parts()[0].context.create_stream(stream_flags::non_blocking);
      g.gemm_stream = g.parts->parts()[1].context.create_stream(stream_flags::non_blocking);
    } else {
      const int high = g.dev->stream_priority_range().second;
      g.comm_stream = primary.create_stream(stream_flags::non_blocking,
                                            m.kind == mode_kind::shared_high ? high : 0);
      g.gemm_stream = primary.create_stream(stream_flags::non_blocking);
    }
  }
}

// The GEMM loop on every GPU, GPU i on streams[i], for `length`: TFLOP/s per GPU, the mean.
double run_gemm_loops(std::vector<gpu> &gpus, const std::vector<stream> &streams,
                      std::chrono::milliseconds length) {
  std::vector<std::unique_ptr<gemm_loop>> loops;
  for (std::size_t i = 0; i < gpus.size(); ++i)
    loops.push_back(std::make_unique<gemm_loop>(*gpus[i].work, streams[i], *gpus[i].dev));
  std::this_thread::sleep_for(length);
  double sum = 0;
  for (auto &l : loops)
    sum += l->stop();
  return sum / static_cast<double>(gpus.size());
}

} // namespace

bool one_gpu_test_mode() {
  const char *v = std::getenv("GREENCTX_COMM_ONE_GPU_TEST");
  return v && std::string_view(v) == "1";
}

nlohmann::json measure(const run_config &cfg, const std::function<void(const std::string &)> &log) {
  const auto list = parse_device_list(cfg.devices, api);
  const driver_info drv = query_driver();
  const int count = device::count();
  const std::vector<int> ordinals = resolve_device_list(list, count, api);
  // GREENCTX_COMM_ONE_GPU_TEST=1 lets the tool's own GPU check run the whole pipeline (children,
  // NCCL, partitions, GEMM loop, reports) on a 1-GPU machine; the report says the numbers mean
  // nothing, since NCCL's all-reduce over one rank communicates nothing.
  const bool one_gpu_test = one_gpu_test_mode();
  if (ordinals.size() < 2 && !(one_gpu_test && ordinals.size() == 1))
    throw error(CUDA_ERROR_NO_DEVICE, api,
                fmt::format("needs 2 GPUs or more: {} ({}){}; an all-reduce over one GPU has "
                            "nothing to communicate. Run it on a multi-GPU host (--device all)",
                            ordinals.size() == 1 && count == 1 ? "the driver sees 1 GPU"
                                                               : "--device names 1 GPU",
                            join_ordinals(ordinals), visible_devices_note()));
  const nccl_library &lib = load_nccl();
  if (!lib.loaded)
    throw unsupported_error(lib.failure, 0, drv.version);
  if (gemm::availability().rfind("cuBLAS from", 0) != 0)
    throw unsupported_error(gemm::availability(), 0, drv.version);

  std::size_t max_bytes = 0;
  for (auto b : cfg.sizes)
    max_bytes = std::max(max_bytes, b);
  // Owned through pointers so that a hang can leave them alone (see the end of the loop).
  auto gpus_owner = std::make_unique<std::vector<gpu>>(ordinals.size());
  std::vector<gpu> &gpus = *gpus_owner;
  std::vector<CUdeviceptr> buffers;
  for (std::size_t i = 0; i < ordinals.size(); ++i) {
    gpus[i].dev = std::make_unique<device>(ordinals[i]);
    gpus[i].buffer = device_buffer(*gpus[i].dev, max_bytes);
    const stream fill = gpus[i].dev->primary_context().create_stream(stream_flags::non_blocking);
    gpus[i].buffer.fill_async(0, fill); // sums of zeros: no NaN or denormal from stale memory
    fill.synchronize();
    buffers.push_back(gpus[i].buffer.get());
    gpus[i].work = std::make_unique<gemm>(*gpus[i].dev, cfg.gemm_n);
    gpus[i].starts.emplace_back(gpus[i].dev->primary_context());
    gpus[i].ends.emplace_back(gpus[i].dev->primary_context());
  }
  nlohmann::json out;
  nlohmann::json env = environment_json(drv, *gpus.front().dev);
  env["devices"] = ordinals;
  if (one_gpu_test)
    env["one_gpu_test"] = true;
  env["nccl_library"] = lib.path;
  env["nccl_version"] = lib.version_text();
  for (const char *name : {"NCCL_NVLS_ENABLE", "NCCL_MAX_CTAS", "CUDA_DEVICE_MAX_CONNECTIONS"}) {
    const char *v = std::getenv(name);
    env["env"][name] = v ? nlohmann::json(v) : nlohmann::json(nullptr);
  }
  env["cublas"] = gemm::availability();
  out["environment"] = env;
  out["points"] = nlohmann::json::array();

  // Untimed first: the GEMM loop on all SMs for a window (clocks up from idle, cuBLAS's first
  // kernels loaded); then, when asked, the timed GEMM alone.
  {
    std::vector<stream> streams;
    for (auto &g : gpus)
      streams.push_back(g.dev->primary_context().create_stream(stream_flags::non_blocking));
    run_gemm_loops(gpus, streams, std::max(cfg.window, std::chrono::milliseconds(300)));
    if (cfg.gemm_alone) {
      out["gemm_alone_tflops"] = run_gemm_loops(gpus, streams, cfg.window);
      log(fmt::format("GEMM alone on all SMs: {:.1f} TFLOP/s per GPU",
                      out["gemm_alone_tflops"].get<double>()));
    }
  }

  log(fmt::format("NCCL {} from {}; {} GPUs ({})", lib.version_text(), lib.path, gpus.size(),
                  join_ordinals(ordinals)));
  auto clique = std::make_unique<nccl_clique>(ordinals);
  for (const mode &m : cfg.modes) {
    prepare(gpus, m);
    // A GEMM on each GEMM stream first, untimed: a green context loads its kernels on first use.
    for (auto &g : gpus)
      g.work->launch(g.gemm_stream);
    for (auto &g : gpus)
      g.gemm_stream.synchronize();
    std::vector<stream_ref> comm_streams;
    std::vector<unsigned> comm_sms;
    for (auto &g : gpus) {
      comm_streams.push_back(g.comm_stream);
      if (g.parts)
        comm_sms.push_back(g.parts->parts()[0].obtained());
    }
    for (const std::size_t bytes : cfg.sizes) {
      nlohmann::json p = {{"mode", m.name()},   {"bytes", bytes},
                          {"gemm_tflops", 0.0}, {"comm_sms", comm_sms},
                          {"failure", ""},      {"allreduce_us", nlohmann::json::array()}};
      std::vector<double> samples;
      std::vector<std::unique_ptr<gemm_loop>> loops;
      if (m.kind != mode_kind::alone)
        for (auto &g : gpus)
          loops.push_back(std::make_unique<gemm_loop>(*g.work, g.gemm_stream, *g.dev));
      const auto t0 = clock::now();
      const unsigned cap = 100 * std::max(1u, cfg.iterations) + cfg.warmup;
      std::string failure;
      for (unsigned it = 0; it < cap; ++it) {
        const bool timed = it >= cfg.warmup;
        if (timed && samples.size() >= cfg.iterations && clock::now() - t0 >= cfg.window)
          break;
        for (auto &g : gpus)
          g.starts[0].record(g.comm_stream);
        // One GPU (test mode): the mean, so that NCCL runs a kernel on the stream at all.
        clique->all_reduce(buffers, bytes / 4, comm_streams,
                           one_gpu_test ? nccl_clique::reduction::average
                                        : nccl_clique::reduction::sum);
        for (auto &g : gpus)
          g.ends[0].record(g.comm_stream);
        double slowest = 0;
        for (auto &g : gpus) {
          if (!wait_for(g.ends[0], cfg.hang_limit)) {
            failure = fmt::format("an all-reduce of {} did not finish within {} s on GPU {}",
                                  format_bytes(bytes), cfg.hang_limit.count(), g.dev->ordinal());
            break;
          }
          slowest = std::max(slowest, 1000.0 * elapsed_ms(g.starts[0], g.ends[0]));
        }
        if (!failure.empty())
          break;
        if (timed)
          samples.push_back(slowest);
      }
      if (!failure.empty()) {
        // The GEMM threads, the buffers and the communicators belong to a device that may never
        // finish: releasing them could block, so they are left to the end of the process.
        for (auto &l : loops)
          (void)l.release();
        (void)gpus_owner.release();
        (void)clique.release();
        p["failure"] = failure;
        out["points"].push_back(p);
        out["error"] = failure + fmt::format(" (mode {})", m.name());
        return out;
      }
      double tflops = 0;
      for (auto &l : loops)
        tflops += l->stop();
      p["gemm_tflops"] = loops.empty() ? 0.0 : tflops / static_cast<double>(loops.size());
      p["allreduce_us"] = samples;
      out["points"].push_back(p);
      log(fmt::format("{:>12} {:>9}: {} samples, GEMM {:.1f} TFLOP/s", m.name(),
                      format_bytes(bytes), samples.size(), p["gemm_tflops"].get<double>()));
    }
  }
  return out;
}

} // namespace greenctx::cli::bench::comm
