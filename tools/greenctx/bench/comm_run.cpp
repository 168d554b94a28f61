// greenctx bench --comm: an NCCL all-reduce on every GPU next to a cuBLAS GEMM loop, per mode.
#include "bench/comm_run.hpp"
#include "bench/nccl.hpp"
#include "cli_common.hpp"

#include <greenctx/measure/tune.hpp>

#include <fmt/format.h>

#include <algorithm>
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
  std::unique_ptr<measure::gemm> work;
  std::unique_ptr<partition_set> parts; // partitioned modes only
  stream comm_stream, gemm_stream;
  stream fill_stream; // partitioned modes: fills the all-reduce's SMs for the confinement check
  std::vector<event> starts, ends;
};

// A GEMM loop on one stream in its own thread, at most `depth` GEMMs queued, until stopped.
class gemm_loop {
public:
  gemm_loop(measure::gemm &g, stream_ref s, const device &dev) : g_(g), s_(s) {
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
  measure::gemm &g_;
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
    g.fill_stream = stream();
    g.parts.reset();
    const auto primary = g.dev->primary_context();
    if (m.on_partition()) {
      g.parts = std::make_unique<partition_set>(
          partition_set::create(*g.dev, parse_partition_request(fmt::format("{},rest", m.k))));
      g.comm_stream = g.parts->parts()[0].context.create_stream(stream_flags::non_blocking);
      g.gemm_stream = g.parts->parts()[1].context.create_stream(stream_flags::non_blocking);
      g.fill_stream = g.parts->parts()[0].context.create_stream(stream_flags::non_blocking);
    } else {
      const int high = g.dev->stream_priority_range().second;
      g.comm_stream = primary.create_stream(stream_flags::non_blocking,
                                            m.kind == mode_kind::shared_high ? high : 0);
      g.gemm_stream = primary.create_stream(stream_flags::non_blocking);
    }
  }
}

// What the confinement check found.
struct measured_confinement {
  std::optional<bool> confined; ///< nullopt: not known (see note)
  std::string note;             ///< why not known, or what was seen
  bool hung = false;            ///< the all-reduce did not end: the device may be unusable
};

// One round of the confinement check with only GPU `filled`'s partition full: true when the
// all-reduce ended while that partition was still full (so GPU `filled`'s part of it ran on other
// SMs), false when it waited, nullopt when the fill had ended before the launch (not known).
// Sets `hung` when the all-reduce did not end within fill + limit on some GPU.
std::optional<bool> ran_outside(std::vector<gpu> &gpus, std::size_t filled, nccl_clique &clique,
                                const std::vector<CUdeviceptr> &buffers,
                                const std::vector<stream_ref> &comm_streams,
                                nccl_clique::operation op, std::chrono::milliseconds fill,
                                std::chrono::seconds limit, bool &hung, double &ended_ms) {
  gpu &g = gpus[filled];
  fill_sms(g.fill_stream, fill);
  std::this_thread::sleep_for(fill / 10); // the spin blocks are resident by now
  const auto launched = clock::now();
  clique.launch(op, buffers, 1024, comm_streams);
  for (auto &each : gpus)
    each.ends[0].record(each.comm_stream);
  const bool filled_at_launch = !g.fill_stream.ready();
  for (auto &each : gpus)
    if (!wait_for(each.ends[0], limit + std::chrono::ceil<std::chrono::seconds>(fill))) {
      hung = true;
      return std::nullopt;
    }
  ended_ms = std::chrono::duration<double, std::milli>(clock::now() - launched).count();
  const bool still_full = !g.fill_stream.ready();
  g.fill_stream.synchronize();
  if (!filled_at_launch)
    return std::nullopt;
  return still_full;
}

// Whether each GPU's all-reduce kernel stays on the SMs of its k-SM green context. One GPU at a
// time, its partition is filled (greenctx::fill_sms: no other block fits beside the spin) for
// `fill`; then one all-reduce on the comm streams. Kept to
// the partition, that GPU's part can start only when the spin ends, and the all-reduce (which
// needs every GPU) ends after it; run anywhere else (the other SMs are idle now), it ends long
// before. One GPU at a time because a confined GPU would otherwise hold back the all-reduce of
// one that is not. Call it after an all-reduce has run on these streams (NCCL sets up its
// connections on the first one, which may take longer than the fill).
measured_confinement measure_confinement(std::vector<gpu> &gpus, nccl_clique &clique,
                                         const std::vector<CUdeviceptr> &buffers,
                                         const std::vector<stream_ref> &comm_streams,
                                         nccl_clique::operation op, std::chrono::milliseconds fill,
                                         std::chrono::seconds limit) {
  measured_confinement out;
  std::vector<int> outside, unknown;
  double slowest_ms = 0, fastest_ms = 0;
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    double ended_ms = 0;
    const auto r =
        ran_outside(gpus, i, clique, buffers, comm_streams, op, fill, limit, out.hung, ended_ms);
    if (out.hung) {
      out.note =
          fmt::format("the confinement check's all-reduce (GPU {} filled) did not finish "
                      "within {} s",
                      gpus[i].dev->ordinal(),
                      std::chrono::duration_cast<std::chrono::seconds>(fill + limit).count());
      return out;
    }
    if (!r)
      unknown.push_back(gpus[i].dev->ordinal());
    else if (*r)
      outside.push_back(gpus[i].dev->ordinal());
    slowest_ms = i == 0 ? ended_ms : std::max(slowest_ms, ended_ms);
    fastest_ms = i == 0 ? ended_ms : std::min(fastest_ms, ended_ms);
  }
  const std::string range = fastest_ms == slowest_ms
                                ? fmt::format("{:.1f} ms", fastest_ms)
                                : fmt::format("{:.1f}-{:.1f} ms", fastest_ms, slowest_ms);
  if (!outside.empty()) {
    out.confined = false;
    out.note = fmt::format("NOT confined: with the k SMs of GPU {} full, the all-reduce ended "
                           "before they were free, so it ran on other SMs there",
                           join_ordinals(outside));
  } else if (!unknown.empty()) {
    out.note = fmt::format("not known: on GPU {} the fill ({} ms) had ended before the all-reduce "
                           "was launched",
                           join_ordinals(unknown), fill.count());
  } else {
    out.confined = true;
    out.note = fmt::format("confined: with the k SMs of one GPU at a time full for {} ms, the "
                           "all-reduce waited for them every time (ended {} after its launch)",
                           fill.count(), range);
  }
  return out;
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

// GREENCTX_COMM_ONE_GPU_TEST lets the tool's own GPU check run the whole pipeline (children, NCCL,
// partitions, the confinement check, GEMM loop, reports) on a 1-GPU machine, with a one-rank
// operation in place of the all-reduce: "1" or "mean", NCCL's one-rank mean (a kernel launched
// through the CUDA runtime); "self", a send/recv to itself (through NCCL's own kernel launch).
// nullopt when unset or empty; a request_error for any other value.
std::optional<nccl_clique::operation> one_gpu_test_operation() {
  const char *v = std::getenv("GREENCTX_COMM_ONE_GPU_TEST");
  if (!v || !*v)
    return std::nullopt;
  const std::string_view text(v);
  if (text == "1" || text == "mean")
    return nccl_clique::operation::average;
  if (text == "self")
    return nccl_clique::operation::self_copy;
  throw request_error(CUDA_ERROR_INVALID_VALUE, api,
                      fmt::format("GREENCTX_COMM_ONE_GPU_TEST='{}': give 1 or mean (NCCL's "
                                  "one-rank mean) or self (a send/recv to itself), or unset it",
                                  text));
}

} // namespace

nlohmann::json measure(const run_config &cfg, const std::function<void(const std::string &)> &log) {
  const auto list = parse_device_list(cfg.devices, api);
  const driver_info drv = query_driver();
  const int count = device::count();
  const std::vector<int> ordinals = resolve_device_list(list, count, api);
  const auto test_op = one_gpu_test_operation(); // the report says such numbers mean nothing
  const bool one_gpu_test = test_op.has_value();
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
  if (!measure::gemm::available())
    throw unsupported_error(measure::gemm::availability(), 0, drv.version);

  std::size_t max_bytes = 0;
  for (auto b : cfg.sizes)
    max_bytes = std::max(max_bytes, b);
  // Owned through pointers so that a hang can leave them alone (see the end of the loop).
  auto gpus_owner = std::make_unique<std::vector<gpu>>(ordinals.size());
  std::vector<gpu> &gpus = *gpus_owner;
  std::vector<CUdeviceptr> buffers;
  for (std::size_t i = 0; i < ordinals.size(); ++i) {
    gpus[i].dev = std::make_unique<device>(ordinals[i]);
    // A send/recv to itself receives into the buffer's second half.
    gpus[i].buffer = device_buffer(
        *gpus[i].dev, test_op == nccl_clique::operation::self_copy ? 2 * max_bytes : max_bytes);
    const stream fill = gpus[i].dev->primary_context().create_stream(stream_flags::non_blocking);
    gpus[i].buffer.fill_async(0, fill); // sums of zeros: no NaN or denormal from stale memory
    fill.synchronize();
    buffers.push_back(gpus[i].buffer.get());
    gpus[i].work = std::make_unique<measure::gemm>(*gpus[i].dev, cfg.gemm_n);
    gpus[i].starts.emplace_back(gpus[i].dev->primary_context());
    gpus[i].ends.emplace_back(gpus[i].dev->primary_context());
  }
  nlohmann::json out;
  nlohmann::json env = environment_json(drv, *gpus.front().dev);
  env["devices"] = ordinals;
  if (one_gpu_test) {
    env["one_gpu_test"] = true;
    env["one_gpu_test_operation"] =
        *test_op == nccl_clique::operation::self_copy ? "self send/recv" : "one-rank mean";
  }
  env["nccl_library"] = lib.path;
  env["nccl_version"] = lib.version_text();
  for (const char *name : {"NCCL_NVLS_ENABLE", "NCCL_MAX_CTAS", "CUDA_DEVICE_MAX_CONNECTIONS"}) {
    const char *v = std::getenv(name);
    env["env"][name] = v ? nlohmann::json(v) : nlohmann::json(nullptr);
  }
  env["cublas"] = measure::gemm::availability();
  // The N,rest splits every one of these GPUs makes, for tune --comm's candidates.
  std::vector<unsigned> sizes = measure::tune_candidates(gpus.front().dev->sms());
  for (const auto &g : gpus) {
    const std::vector<unsigned> here = measure::tune_candidates(g.dev->sms());
    std::erase_if(sizes,
                  [&](unsigned n) { return std::find(here.begin(), here.end(), n) == here.end(); });
  }
  env["split_sizes"] = sizes;
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
  const nccl_clique::operation op = test_op.value_or(nccl_clique::operation::sum);
  // After a hang: the GEMM threads, the buffers and the communicators belong to a device that may
  // never finish, and releasing them could block, so they are left to the end of the process.
  const auto abandon = [&](const mode &m, const std::string &failure,
                           std::vector<std::unique_ptr<gemm_loop>> loops,
                           nlohmann::json failed_point = nullptr) {
    for (auto &l : loops)
      (void)l.release();
    (void)gpus_owner.release();
    (void)clique.release();
    if (!failed_point.is_null())
      out["points"].push_back(std::move(failed_point));
    out["error"] = failure + fmt::format(" (mode {})", m.name());
    return out;
  };
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
    for (std::size_t i = 0; i < comm_sms.size(); ++i)
      if (comm_sms[i] != m.k)
        log(fmt::format("{:>12}: {} SMs on GPU {} ({})", m.name(), comm_sms[i],
                        gpus[i].dev->ordinal(), gpus[i].parts->parts()[0].rounding));
    nlohmann::json confined = nullptr, confinement_note = "";
    if (m.on_partition()) {
      // One all-reduce first (NCCL may set up its connections then), then the check.
      std::string failure;
      clique->launch(op, buffers, 1024, comm_streams);
      for (auto &g : gpus) {
        g.ends[0].record(g.comm_stream);
        if (failure.empty() && !wait_for(g.ends[0], cfg.hang_limit))
          failure = fmt::format("the first all-reduce on {} SMs did not finish within {} s on "
                                "GPU {}",
                                m.k, cfg.hang_limit.count(), g.dev->ordinal());
      }
      measured_confinement c;
      if (failure.empty()) {
        c = measure_confinement(gpus, *clique, buffers, comm_streams, op, cfg.confinement_fill,
                                cfg.hang_limit);
        if (c.hung)
          failure = c.note;
      }
      if (!failure.empty())
        return abandon(m, failure, {});
      confined = c.confined ? nlohmann::json(*c.confined) : nlohmann::json(nullptr);
      confinement_note = c.note;
      log(fmt::format("{:>12}: {}", m.name(), c.note));
    }
    for (const std::size_t bytes : cfg.sizes) {
      nlohmann::json p = {{"mode", m.name()},     {"bytes", bytes},
                          {"gemm_tflops", 0.0},   {"comm_sms", comm_sms},
                          {"confined", confined}, {"confinement", confinement_note},
                          {"failure", ""},        {"allreduce_us", nlohmann::json::array()}};
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
        clique->launch(op, buffers, bytes / 4, comm_streams);
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
        p["failure"] = failure;
        return abandon(m, failure, std::move(loops), std::move(p));
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
