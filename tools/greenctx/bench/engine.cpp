#include "bench/engine.hpp"

#include "bench/cublas.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <memory>
#include <random>

namespace greenctx::cli::bench {
namespace {

using clock = std::chrono::steady_clock;
constexpr unsigned spin_threads = 128;

double us_between(clock::time_point a, clock::time_point b) {
  return std::chrono::duration<double, std::micro>(b - a).count();
}

void busy_wait(std::chrono::duration<double, std::micro> d) {
  const auto until = clock::now() + std::chrono::duration_cast<clock::duration>(d);
  while (clock::now() < until) {
  }
}

// Blocks of `threads` threads that fit on one SM at once (no shared memory, few registers).
unsigned resident_blocks(const device &dev, unsigned threads) {
  const int by_blocks = dev.attribute(CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR);
  const int by_threads =
      dev.attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR) / static_cast<int>(threads);
  return static_cast<unsigned>(std::max(1, std::min(by_blocks, by_threads)));
}

// --- workloads -------------------------------------------------------------------------------

class background_work {
public:
  virtual ~background_work() = default;
  /// Enqueues one unit on `s` and returns the work it does (in the result's base unit).
  virtual double launch(stream_ref s) = 0;
};

class spin_background : public background_work {
public:
  spin_background(unsigned blocks, std::chrono::microseconds block_time)
      : blocks_(blocks), time_(block_time) {}
  double launch(stream_ref s) override {
    launch_spin(s, blocks_, time_, spin_threads);
    return blocks_;
  }

private:
  unsigned blocks_;
  std::chrono::microseconds time_;
};

class memory_background : public background_work {
public:
  memory_background(const device &dev, std::size_t bytes, unsigned blocks)
      : in_(dev, bytes), out_(dev, bytes), blocks_(blocks) {}
  double launch(stream_ref s) override {
    return 2.0 * static_cast<double>(launch_stream_copy(s, in_, out_, blocks_)); // read + write
  }

private:
  device_buffer in_, out_;
  unsigned blocks_;
};

class gemm_background : public background_work {
public:
  gemm_background(const device &dev, unsigned n) : gemm_(dev, n) {}
  double launch(stream_ref s) override {
    gemm_.launch(s);
    return gemm_.flops();
  }

private:
  gemm gemm_;
};

class critical_work {
public:
  virtual ~critical_work() = default;
  virtual void launch(stream_ref s) = 0;
  /// The kernel's own execution time (first block start to last block end), when known.
  virtual std::optional<double> exec_us(stream_ref s) = 0;
};

class kernel_critical : public critical_work {
public:
  kernel_critical(const device &dev, unsigned blocks, std::chrono::microseconds block_time)
      : stamps_(dev, 2 * sizeof(unsigned long long) * blocks), blocks_(blocks), time_(block_time),
        host_(2 * blocks) {}
  void launch(stream_ref s) override {
    launch_timed_spin(s, blocks_, time_, spin_threads, stamps_);
  }
  std::optional<double> exec_us(stream_ref s) override {
    // On the critical stream itself: a copy on the NULL stream could queue behind the background.
    stamps_.copy_to_host(host_.data(), host_.size() * sizeof(unsigned long long), s);
    unsigned long long first = ~0ull, last = 0;
    for (unsigned b = 0; b < blocks_; ++b) {
      first = std::min(first, host_[2 * b]);
      last = std::max(last, host_[2 * b + 1]);
    }
    return static_cast<double>(last - first) / 1000.0;
  }

private:
  device_buffer stamps_;
  unsigned blocks_;
  std::chrono::microseconds time_;
  std::vector<unsigned long long> host_;
};

class gemm_critical : public critical_work {
public:
  gemm_critical(const device &dev, unsigned n) : gemm_(dev, n) {}
  void launch(stream_ref s) override { gemm_.launch(s); }
  std::optional<double> exec_us(stream_ref) override { return std::nullopt; }

private:
  gemm gemm_;
};

// Keeps a stream fed with background units (two queued at all times) and accounts for the work
// finished between the first unit's start and the last finished unit's end.
class feeder {
public:
  feeder(const device &dev, stream_ref s, background_work &work)
      : dev_(dev), s_(s), work_(work), first_(dev.primary_context()) {
    first_.record(s_);
    top_up();
  }
  void top_up() {
    while (!queued_.empty() && queued_.front().first.ready()) {
      done_ += queued_.front().second;
      last_ = std::move(queued_.front().first);
      queued_.pop_front();
    }
    while (queued_.size() < 2) {
      const double w = work_.launch(s_);
      event e(dev_.primary_context());
      e.record(s_);
      queued_.emplace_back(std::move(e), w);
    }
  }
  background_rate finish() {
    s_.synchronize();
    while (!queued_.empty()) {
      done_ += queued_.front().second;
      last_ = std::move(queued_.front().first);
      queued_.pop_front();
    }
    return {done_, elapsed_ms(first_, last_) / 1000.0};
  }

private:
  const device &dev_;
  stream_ref s_;
  background_work &work_;
  event first_, last_;
  std::deque<std::pair<event, double>> queued_;
  double done_ = 0;
};

background_rate background_alone(const device &dev, stream_ref s, background_work &work,
                                 std::chrono::milliseconds window) {
  feeder f(dev, s, work);
  const auto until = clock::now() + window;
  while (clock::now() < until) {
    f.top_up();
    busy_wait(std::chrono::microseconds(200));
  }
  return f.finish();
}

// Appends `count` samples (after `warmup` untimed ones) to `st`.
void sample_critical(const device &dev, const config &cfg, critical_work &crit, stream_ref cs,
                     feeder *bg, unsigned warmup, unsigned count, std::mt19937 &rng,
                     critical_stats &st) {
  const event before(dev.primary_context()), after(dev.primary_context());
  std::uniform_real_distribution<double> jitter(0.5, 1.5);
  if (bg)
    busy_wait(std::chrono::milliseconds(2)); // let the background fill the GPU first
  for (unsigned i = 0; i < warmup + count; ++i) {
    if (bg)
      bg->top_up();
    busy_wait(std::chrono::duration<double, std::micro>(cfg.gap.count() * jitter(rng)));
    const auto t0 = clock::now();
    before.record(cs);
    crit.launch(cs);
    after.record(cs);
    cs.synchronize();
    const auto t1 = clock::now();
    const auto exec = crit.exec_us(cs);
    if (i < warmup)
      continue;
    const double gpu = 1000.0 * elapsed_ms(before, after);
    st.host_us.push_back(us_between(t0, t1));
    st.gpu_us.push_back(gpu);
    if (exec)
      st.start_delay_us.push_back(std::max(0.0, gpu - *exec));
  }
}

void summarize_all(critical_stats &st) {
  st.host = summarize(st.host_us);
  st.gpu = summarize(st.gpu_us);
  st.start_delay = summarize(st.start_delay_us);
}

} // namespace

results run(const device &dev, const config &cfg,
            const std::function<void(const std::string &)> &progress) {
  const partition_set set = partition_set::create(dev, partition_request{{cfg.critical_sms}, true});
  return run(dev, set, cfg, progress);
}

results run(const device &dev, const partition_set &set, const config &cfg,
            const std::function<void(const std::string &)> &progress) {
  const auto say = [&](const std::string &line) {
    if (progress)
      progress(line);
  };
  results out;
  out.cfg = cfg;
  out.device_sms = dev.sms().sm_count();
  const execution_context_ref crit_ctx = set.parts()[0].context, bg_ctx = set.parts()[1].context;
  out.critical_sms_obtained = set.parts()[0].obtained();
  out.background_sms_obtained = set.parts()[1].obtained();

  std::unique_ptr<background_work> bg;
  switch (cfg.background) {
  case background_kind::spin: {
    const unsigned resident = resident_blocks(dev, spin_threads);
    const unsigned blocks = cfg.background_waves * out.device_sms * resident;
    bg = std::make_unique<spin_background>(blocks, cfg.background_block_time);
    out.background_unit = "blocks/s";
    const double share_waves =
        static_cast<double>(blocks) / (out.background_sms_obtained * resident);
    out.quantization = fmt::format(
        "each background kernel is {} full-GPU waves ({} blocks of {} us, {} resident per SM); "
        "on {} SMs that is {:.2f} waves, run as {}: whole waves alone allow {:.3f} of the SM "
        "share",
        cfg.background_waves, blocks, cfg.background_block_time.count(), resident,
        out.background_sms_obtained, share_waves, std::ceil(share_waves),
        share_waves / std::ceil(share_waves));
    break;
  }
  case background_kind::memory:
    bg = std::make_unique<memory_background>(dev, cfg.memory_bytes, out.device_sms * 64);
    out.background_unit = "GB/s";
    out.background_unit_scale = 1e9;
    out.quantization = "memory-bound: the rate follows memory bandwidth, which fewer SMs may "
                       "still saturate, so the SM share is a floor, not a ceiling";
    break;
  case background_kind::gemm:
    bg = std::make_unique<gemm_background>(dev, cfg.gemm_n);
    out.background_unit = "TFLOP/s";
    out.background_unit_scale = 1e12;
    out.quantization = "cuBLAS sizes its tiles for the whole GPU; on fewer SMs the last wave "
                       "of tiles can run partly empty";
    break;
  }
  std::unique_ptr<critical_work> crit;
  if (cfg.critical == critical_kind::kernel)
    crit = std::make_unique<kernel_critical>(dev, cfg.critical_blocks, cfg.critical_block_time);
  else
    crit = std::make_unique<gemm_critical>(dev, cfg.critical_gemm_n);

  const auto [least, greatest] = dev.stream_priority_range();
  const execution_context_ref primary = dev.primary_context();
  const stream bg_primary = primary.create_stream(stream_flags::non_blocking, least);
  const stream crit_primary = primary.create_stream(stream_flags::non_blocking, least);
  const stream crit_primary_high = primary.create_stream(stream_flags::non_blocking, greatest);
  const stream crit_green = crit_ctx.create_stream(stream_flags::none, least);
  const stream crit_green_high = crit_ctx.create_stream(stream_flags::none, greatest);
  const stream bg_green = bg_ctx.create_stream(stream_flags::none, least);

  // Warm-up: the first units pay for module loading, cuBLAS's first-call setup and clock ramp-up
  // (measured: a GEMM baseline taken cold read 20% low), so run a few on each stream first.
  say("warming up the background workload");
  for (const stream *s : {&bg_primary, &bg_green}) {
    for (int i = 0; i < 3; ++i)
      out.background_launch_work = bg->launch(*s);
    s->synchronize();
  }
  say("background alone on all SMs");
  out.background_full = background_alone(dev, bg_primary, *bg, cfg.rate_window);
  say(fmt::format("background alone on its {} SMs", out.background_sms_obtained));
  out.background_share = background_alone(dev, bg_green, *bg, cfg.rate_window);

  struct plan {
    const char *name;
    std::string description;
    stream_ref critical;
    const stream *background;
    bool trap;
  };
  const unsigned c = out.critical_sms_obtained, b = out.background_sms_obtained;
  std::vector<plan> plans = {
      {"alone", "critical alone, whole GPU", crit_primary, nullptr, false},
      {"alone_green", fmt::format("critical alone in its {}-SM green context", c), crit_green,
       nullptr, false},
      {"shared", "shared GPU, equal priority", crit_primary, &bg_primary, false},
      {"priority", "shared GPU, critical stream at highest priority", crit_primary_high,
       &bg_primary, false},
      {"green", fmt::format("green contexts: critical {} SMs, background {} SMs", c, b), crit_green,
       &bg_green, false},
      {"green_priority", "green contexts, critical stream at highest priority", crit_green_high,
       &bg_green, false},
      {"trap", "TRAP: background left in the primary context, critical green", crit_green,
       &bg_primary, true},
  };
  const auto wanted = [&](const plan &p) {
    return cfg.placements.empty() ||
           std::find(cfg.placements.begin(), cfg.placements.end(), p.name) != cfg.placements.end();
  };
  plans.erase(std::remove_if(plans.begin(), plans.end(), [&](const plan &p) { return !wanted(p); }),
              plans.end());
  // Rounds: every placement takes its share of the samples in each round, so that slow drifts
  // of the machine (clocks, host jitter) fall on all placements alike and ratios between them
  // stay honest. Each placement's first segment is preceded by the full warm-up, later ones by a
  // short re-warm.
  for (const plan &p : plans)
    out.placements.push_back({p.name, p.description, p.trap, critical_stats{}, std::nullopt});
  std::mt19937 rng(12345);
  const unsigned rounds = std::max(1u, std::min(cfg.rounds, cfg.samples));
  for (unsigned round = 0; round < rounds; ++round) {
    say(fmt::format("round {}/{}: {} placements", round + 1, rounds, plans.size()));
    const unsigned count = cfg.samples / rounds + (round < cfg.samples % rounds ? 1 : 0);
    const unsigned warmup = round == 0 ? cfg.warmup : std::min(cfg.warmup, 5u);
    for (std::size_t i = 0; i < plans.size(); ++i) {
      const plan &p = plans[i];
      placement_result &r = out.placements[i];
      if (p.background) {
        feeder f(dev, *p.background, *bg);
        sample_critical(dev, cfg, *crit, p.critical, &f, warmup, count, rng, *r.critical);
        const background_rate segment = f.finish();
        if (!r.background)
          r.background = background_rate{};
        r.background->work += segment.work;
        r.background->seconds += segment.seconds;
      } else {
        sample_critical(dev, cfg, *crit, p.critical, nullptr, warmup, count, rng, *r.critical);
      }
    }
  }
  for (auto &r : out.placements)
    summarize_all(*r.critical);
  return out;
}

} // namespace greenctx::cli::bench
