// SPDX-License-Identifier: Apache-2.0
// The communication measurement (see greenctx/measure/comm.hpp): modes, and the measurement of a
// list of them in this process.
#include "greenctx/measure/comm.hpp"

#include "greenctx/driver/driver.hpp"
#include "greenctx/measure/tune.hpp"
#include "greenctx/plan/decimal.hpp"
#include "greenctx/plan/error.hpp"
#include "measure/comm_gpus.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace greenctx::measure {
namespace {

using detail::comm_api;
using detail::comm_gpu;
using detail::gemm_loop;
using detail::wait_for;
using clock = std::chrono::steady_clock;

[[noreturn]] void refuse(const std::string &why) {
  throw request_error(CUDA_ERROR_INVALID_VALUE, comm_api, why);
}

// "  green-16": a mode's name right-aligned in `width` columns, as the progress lines show it.
std::string padded(const std::string &text, std::size_t width) {
  return text.size() >= width ? text : std::string(width - text.size(), ' ') + text;
}

std::string tflops(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", v);
  return text;
}

void check(const comm_config &cfg) {
  const bool one_rank = cfg.operation != nccl_clique::operation::sum;
  if (cfg.devices.empty() || (cfg.devices.size() < 2 && !one_rank))
    refuse("the all-reduce needs 2 GPUs or more, not " + std::to_string(cfg.devices.size()) +
           ": over one GPU it has nothing to communicate (a one-rank operation, average or "
           "self_copy, runs the measurement on one GPU to test it)");
  for (std::size_t b : cfg.sizes)
    if (b < 4 || b % 4 != 0)
      refuse("a message of " + std::to_string(b) + " bytes is not a positive multiple of 4: the " +
             "all-reduce sums float elements of 4 bytes");
  for (const comm_mode &m : cfg.modes) {
    const bool needs_k = m.on_partition() || m.kind == comm_mode_kind::max_ctas;
    if (needs_k && m.k == 0)
      refuse("mode " + m.name() + " needs k, its SMs or CTAs, of 1 or more");
    if (!m.limits_ctas())
      continue;
    const char *v = std::getenv("NCCL_MAX_CTAS");
    if (!v || std::string_view(v) != std::to_string(m.k))
      refuse("mode " + m.name() + " needs NCCL_MAX_CTAS=" + std::to_string(m.k) +
             " in the environment before NCCL is first used in this process (NCCL reads it "
             "once), not " +
             (v ? std::string("NCCL_MAX_CTAS=") + v : std::string("none")) +
             ": measure it in a process of its own, as greenctx bench comm does");
  }
}

} // namespace

std::string comm_mode::name() const {
  const std::string n = std::to_string(k);
  switch (kind) {
  case comm_mode_kind::alone:
    return "alone";
  case comm_mode_kind::partitioned:
    return "green-" + n;
  case comm_mode_kind::partitioned_ctas:
    return "green-ctas-" + n;
  case comm_mode_kind::shared:
    return "shared";
  case comm_mode_kind::shared_high:
    return "shared-high";
  case comm_mode_kind::max_ctas:
    return "max-ctas-" + n;
  }
  return "?";
}

std::optional<comm_mode> comm_mode::from_name(std::string_view text) {
  if (text == "alone")
    return comm_mode{comm_mode_kind::alone, 0};
  if (text == "shared")
    return comm_mode{comm_mode_kind::shared, 0};
  if (text == "shared-high")
    return comm_mode{comm_mode_kind::shared_high, 0};
  for (const auto &[prefix, kind] :
       {std::pair{std::string_view("green-ctas-"), comm_mode_kind::partitioned_ctas},
        std::pair{std::string_view("green-"), comm_mode_kind::partitioned},
        std::pair{std::string_view("max-ctas-"), comm_mode_kind::max_ctas}})
    if (text.substr(0, prefix.size()) == prefix) {
      const auto k = read_decimal(text.substr(prefix.size()), 4096);
      if (k && *k > 0)
        return comm_mode{kind, static_cast<unsigned>(*k)};
    }
  return std::nullopt;
}

std::string format_bytes(std::size_t bytes) {
  static constexpr const char *units[] = {"B", "KiB", "MiB", "GiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 3) {
    v /= 1024;
    ++u;
  }
  char text[64];
  std::snprintf(text, sizeof text, "%g %s", v, units[u]);
  return text;
}

comm_result measure_comm(const comm_config &cfg, const progress_fn &progress) {
  const auto log = [&](const std::string &line) {
    if (progress)
      progress(line);
  };
  check(cfg);
  const int driver_version = query_driver().version;
  const nccl_library &lib = load_nccl();
  if (!lib.loaded)
    throw unsupported_error(lib.failure, 0, driver_version);
  if (!gemm::available())
    throw unsupported_error(gemm::availability(), 0, driver_version);

  const auto op = cfg.operation;
  std::size_t max_bytes = 0;
  for (auto b : cfg.sizes)
    max_bytes = std::max(max_bytes, b);
  // Owned through pointers so that a hang can leave them alone (see the end of the loop).
  auto gpus_owner = std::make_unique<std::vector<comm_gpu>>(cfg.devices.size());
  std::vector<comm_gpu> &gpus = *gpus_owner;
  std::vector<CUdeviceptr> buffers;
  for (std::size_t i = 0; i < cfg.devices.size(); ++i) {
    gpus[i].dev = std::make_unique<device>(cfg.devices[i]);
    // A send/recv to itself receives into the buffer's second half.
    gpus[i].buffer = device_buffer(
        *gpus[i].dev, op == nccl_clique::operation::self_copy ? 2 * max_bytes : max_bytes);
    const stream fill = gpus[i].dev->primary_context().create_stream(stream_flags::non_blocking);
    gpus[i].buffer.fill_async(0, fill); // sums of zeros: no NaN or denormal from stale memory
    fill.synchronize();
    buffers.push_back(gpus[i].buffer.get());
    gpus[i].work = std::make_unique<gemm>(*gpus[i].dev, cfg.gemm_n);
    gpus[i].starts.emplace_back(gpus[i].dev->primary_context());
    gpus[i].ends.emplace_back(gpus[i].dev->primary_context());
  }
  comm_result out;
  out.devices = cfg.devices;
  out.nccl_library = lib.path;
  out.nccl_version = lib.version_text();
  out.cublas = gemm::availability();
  // The N,rest splits every one of these GPUs makes, for tune --comm's candidates.
  out.split_sizes = tune_candidates(gpus.front().dev->sms());
  for (const auto &g : gpus) {
    const std::vector<unsigned> here = tune_candidates(g.dev->sms());
    std::erase_if(out.split_sizes,
                  [&](unsigned n) { return std::find(here.begin(), here.end(), n) == here.end(); });
  }

  // Untimed first: the GEMM loop on all SMs for a window (clocks up from idle, cuBLAS's first
  // kernels loaded); then, when asked, the timed GEMM alone.
  {
    std::vector<stream> streams;
    for (auto &g : gpus)
      streams.push_back(g.dev->primary_context().create_stream(stream_flags::non_blocking));
    detail::run_gemm_loops(gpus, streams, std::max(cfg.window, std::chrono::milliseconds(300)));
    if (cfg.gemm_alone) {
      out.gemm_alone_tflops = detail::run_gemm_loops(gpus, streams, cfg.window);
      log("GEMM alone on all SMs: " + tflops(*out.gemm_alone_tflops) + " TFLOP/s per GPU");
    }
  }

  log("NCCL " + lib.version_text() + " from " + lib.path + "; " + std::to_string(gpus.size()) +
      " GPUs (" + detail::join_ordinals(cfg.devices) + ")");
  auto clique = std::make_unique<nccl_clique>(cfg.devices);
  // After a hang: the GEMM threads, the buffers and the communicators belong to a device that may
  // never finish, and releasing them could block, so they are left to the end of the process.
  const auto abandon = [&](const comm_mode &m, const std::string &failure,
                           std::vector<std::unique_ptr<gemm_loop>> loops,
                           std::optional<comm_point> failed_point = std::nullopt) {
    for (auto &l : loops) {
      l->request_stop();
      (void)l.release();
    }
    (void)gpus_owner.release();
    (void)clique.release();
    if (failed_point)
      out.points.push_back(std::move(*failed_point));
    out.error = failure + " (mode " + m.name() + ")";
    return out;
  };
  for (const comm_mode &m : cfg.modes) {
    detail::prepare(gpus, m);
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
        log(padded(m.name(), 12) + ": " + std::to_string(comm_sms[i]) + " SMs on GPU " +
            std::to_string(gpus[i].dev->ordinal()) + " (" + gpus[i].parts->parts()[0].rounding +
            ")");
    std::optional<bool> confined;
    std::string confinement_note;
    if (m.on_partition()) {
      // One all-reduce first (NCCL may set up its connections then), then the check.
      std::string failure;
      clique->launch(op, buffers, 1024, comm_streams);
      for (auto &g : gpus) {
        g.ends[0].record(g.comm_stream);
        if (failure.empty() && !wait_for(g.ends[0], cfg.hang_limit))
          failure = "the first all-reduce on " + std::to_string(m.k) +
                    " SMs did not finish within " + std::to_string(cfg.hang_limit.count()) +
                    " s on GPU " + std::to_string(g.dev->ordinal());
      }
      detail::measured_confinement c;
      if (failure.empty()) {
        c = detail::measure_confinement(gpus, *clique, buffers, comm_streams, op,
                                        cfg.confinement_fill, cfg.hang_limit);
        if (c.hung)
          failure = c.note;
      }
      if (!failure.empty())
        return abandon(m, failure, {});
      confined = c.confined;
      confinement_note = c.note;
      log(padded(m.name(), 12) + ": " + c.note);
    }
    for (const std::size_t bytes : cfg.sizes) {
      comm_point p{m, bytes, {}, 0.0, comm_sms, confined, confinement_note, ""};
      std::vector<std::unique_ptr<gemm_loop>> loops;
      if (m.kind != comm_mode_kind::alone)
        for (auto &g : gpus)
          loops.push_back(std::make_unique<gemm_loop>(*g.work, g.gemm_stream, *g.dev));
      const auto t0 = clock::now();
      const unsigned cap = 100 * std::max(1u, cfg.iterations) + cfg.warmup;
      std::string failure;
      for (unsigned it = 0; it < cap; ++it) {
        const bool timed = it >= cfg.warmup;
        if (timed && p.allreduce_us.size() >= cfg.iterations && clock::now() - t0 >= cfg.window)
          break;
        for (auto &g : gpus)
          g.starts[0].record(g.comm_stream);
        clique->launch(op, buffers, bytes / 4, comm_streams);
        for (auto &g : gpus)
          g.ends[0].record(g.comm_stream);
        double slowest = 0;
        for (auto &g : gpus) {
          if (!wait_for(g.ends[0], cfg.hang_limit)) {
            failure = "an all-reduce of " + format_bytes(bytes) + " did not finish within " +
                      std::to_string(cfg.hang_limit.count()) + " s on GPU " +
                      std::to_string(g.dev->ordinal());
            break;
          }
          slowest = std::max(slowest, 1000.0 * elapsed_ms(g.starts[0], g.ends[0]));
        }
        if (!failure.empty())
          break;
        if (timed)
          p.allreduce_us.push_back(slowest);
      }
      if (!failure.empty()) {
        p.allreduce_us.clear();
        p.failure = failure;
        return abandon(m, failure, std::move(loops), std::move(p));
      }
      double sum = 0;
      for (auto &l : loops)
        sum += l->stop();
      p.gemm_tflops = loops.empty() ? 0.0 : sum / static_cast<double>(loops.size());
      log(padded(m.name(), 12) + " " + padded(format_bytes(bytes), 9) + ": " +
          std::to_string(p.allreduce_us.size()) + " samples, GEMM " + tflops(p.gemm_tflops) +
          " TFLOP/s");
      out.points.push_back(std::move(p));
    }
  }
  return out;
}

} // namespace greenctx::measure
