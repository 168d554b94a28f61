// SPDX-License-Identifier: Apache-2.0
#include "measure/comm_gpus.hpp"

#include "greenctx/core/stream_flags.hpp"
#include "greenctx/measure/workloads.hpp"
#include "greenctx/plan/error.hpp"
#include "greenctx/plan/partition_plan.hpp"

#include <algorithm>
#include <cstdio>

namespace greenctx::measure::detail {
namespace {

using clock = std::chrono::steady_clock;

// "12.3 ms", or "12.3-14.0 ms" from the fastest to the slowest: the confinement check's times.
std::string ms_range(double fastest, double slowest) {
  char text[64];
  if (fastest == slowest)
    std::snprintf(text, sizeof text, "%.1f ms", fastest);
  else
    std::snprintf(text, sizeof text, "%.1f-%.1f ms", fastest, slowest);
  return text;
}

// One round of the confinement check with only GPU `filled`'s partition full: true when the
// all-reduce ended while that partition was still full (so GPU `filled`'s part of it ran on other
// SMs), false when it waited, nullopt when the fill had ended before the launch (not known).
// Sets `hung` when the all-reduce did not end within fill + limit on some GPU.
std::optional<bool> ran_outside(std::vector<comm_gpu> &gpus, std::size_t filled,
                                nccl_clique &clique, const std::vector<CUdeviceptr> &buffers,
                                const std::vector<stream_ref> &comm_streams,
                                nccl_clique::operation op, std::chrono::milliseconds fill,
                                std::chrono::seconds limit, bool &hung, double &ended_ms) {
  comm_gpu &g = gpus[filled];
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

} // namespace

gemm_loop::gemm_loop(measure::gemm &g, stream_ref s, const device &dev) : g_(g), s_(s) {
  for (auto &e : ring_)
    e = event(dev.primary_context(), event_flags::disable_timing | event_flags::blocking_sync);
  thread_ = std::thread([this] { loop(); });
}

gemm_loop::~gemm_loop() {
  try {
    stop();
  } catch (const error &) { // reported by the stop() the measurement called, if it got there
  }
}

double gemm_loop::stop() {
  if (thread_.joinable()) {
    stop_ = true;
    thread_.join();
  }
  if (!failure_.empty())
    throw error(CUDA_ERROR_UNKNOWN, comm_api, "the GEMM loop failed: " + failure_);
  return tflops_;
}

// At most ring_.size() GEMMs queued; the rate counts whole GEMMs over the loop's wall time (the
// last GEMMs, finished after the measurement, add at most that many GEMMs' time).
void gemm_loop::loop() {
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

void prepare(std::vector<comm_gpu> &gpus, const comm_mode &m) {
  for (auto &g : gpus) {
    g.comm_stream = stream(); // streams go before the green contexts they belong to
    g.gemm_stream = stream();
    g.fill_stream = stream();
    g.parts.reset();
    const auto primary = g.dev->primary_context();
    if (m.on_partition()) {
      g.parts = std::make_unique<partition_set>(
          partition_set::create(*g.dev, partition_request{{m.k}, true}));
      g.comm_stream = g.parts->parts()[0].context.create_stream(stream_flags::non_blocking);
      g.gemm_stream = g.parts->parts()[1].context.create_stream(stream_flags::non_blocking);
      g.fill_stream = g.parts->parts()[0].context.create_stream(stream_flags::non_blocking);
    } else {
      const int high = g.dev->stream_priority_range().second;
      g.comm_stream = primary.create_stream(stream_flags::non_blocking,
                                            m.kind == comm_mode_kind::shared_high ? high : 0);
      g.gemm_stream = primary.create_stream(stream_flags::non_blocking);
    }
  }
}

measured_confinement measure_confinement(std::vector<comm_gpu> &gpus, nccl_clique &clique,
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
          "the confinement check's all-reduce (GPU " + std::to_string(gpus[i].dev->ordinal()) +
          " filled) did not finish within " +
          std::to_string(std::chrono::duration_cast<std::chrono::seconds>(fill + limit).count()) +
          " s";
      return out;
    }
    if (!r)
      unknown.push_back(gpus[i].dev->ordinal());
    else if (*r)
      outside.push_back(gpus[i].dev->ordinal());
    slowest_ms = i == 0 ? ended_ms : std::max(slowest_ms, ended_ms);
    fastest_ms = i == 0 ? ended_ms : std::min(fastest_ms, ended_ms);
  }
  const std::string range = ms_range(fastest_ms, slowest_ms);
  if (!outside.empty()) {
    out.confined = false;
    out.note = "NOT confined: with the k SMs of GPU " + join_ordinals(outside) +
               " full, the all-reduce ended before they were free, so it ran on other SMs there";
  } else if (!unknown.empty()) {
    out.note = "not known: on GPU " + join_ordinals(unknown) + " the fill (" +
               std::to_string(fill.count()) + " ms) had ended before the all-reduce was launched";
  } else {
    out.confined = true;
    out.note =
        "confined: with the k SMs of one GPU at a time full for " + std::to_string(fill.count()) +
        " ms, the all-reduce waited for them every time (ended " + range + " after its launch)";
  }
  return out;
}

double run_gemm_loops(std::vector<comm_gpu> &gpus, const std::vector<stream> &streams,
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

std::string join_ordinals(const std::vector<int> &ordinals) {
  std::string out;
  for (int x : ordinals)
    out += (out.empty() ? "" : ",") + std::to_string(x);
  return out;
}

} // namespace greenctx::measure::detail
