// The measurement of `greenctx bench --adaptive` (see bench/adaptive.hpp).
#include "bench/adaptive.hpp"
#include "report/stats.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <random>

namespace greenctx::cli::bench::adaptive {
namespace {

using clock = std::chrono::steady_clock;
using micros = std::chrono::duration<double, std::micro>;
constexpr unsigned critical_threads = 128;

double us_between(clock::time_point a, clock::time_point b) {
  return micros(b - a).count();
}

// Background chunks (bounded streaming copies) on whichever stream the caller names, at most
// `depth` queued over all streams. Rate: bytes of finished chunks over host wall time from the
// first launch to finish().
class chunk_feeder {
public:
  chunk_feeder(const device &dev, const device_buffer &in, const device_buffer &out,
               unsigned blocks, unsigned depth)
      : dev_(dev), in_(in), out_(out), blocks_(blocks), depth_(depth) {}

  void top_up(stream_ref s) {
    retire();
    while (queued_.size() < depth_) {
      if (!started_) {
        start_ = clock::now();
        started_ = true;
      }
      const double bytes = 2.0 * static_cast<double>(launch_stream_copy(s, in_, out_, blocks_));
      event e(dev_.primary_context());
      e.record(s);
      queued_.push_back({std::move(e), bytes, s.native_handle()});
    }
  }
  /// Spins (feeding nothing) until no chunk queued on `s` is unfinished.
  void wait_for(stream_ref s) {
    for (;;) {
      retire();
      if (std::none_of(queued_.begin(), queued_.end(),
                       [&](const item &i) { return i.stream == s.native_handle(); }))
        return;
    }
  }
  background_rate finish() {
    for (auto &i : queued_)
      i.done.synchronize();
    const auto end = clock::now();
    for (auto &i : queued_)
      bytes_ += i.bytes;
    queued_.clear();
    return {bytes_, started_ ? std::chrono::duration<double>(end - start_).count() : 0};
  }

private:
  struct item {
    event done;
    double bytes;
    CUstream stream;
  };
  // Chunks finish in order per stream, not across streams: retire every finished one.
  void retire() {
    for (auto it = queued_.begin(); it != queued_.end();) {
      if (it->done.ready()) {
        bytes_ += it->bytes;
        it = queued_.erase(it);
      } else {
        ++it;
      }
    }
  }
  const device &dev_;
  const device_buffer &in_, &out_;
  unsigned blocks_, depth_;
  std::deque<item> queued_;
  double bytes_ = 0;
  bool started_ = false;
  clock::time_point start_;
};

// What a configuration runs: no background, the background held wide, or the adaptive policy
// with the narrow layout `narrow`.
struct plan {
  configuration *out;
  bool background = false, adapt = false;
  std::size_t narrow = 0; // pool layout index
  policy pol = policy::lead;
};

} // namespace

results run(const device &dev, const config &cfg,
            const std::function<void(const std::string &)> &progress) {
  const auto say = [&](const std::string &line) {
    if (progress)
      progress(line);
  };
  results out;
  out.cfg = cfg;
  out.device_sms = dev.sms().sm_count();
  validate(cfg, out.device_sms);
  std::vector<std::string> names{fmt::format("{},rest", cfg.critical_sms)};
  for (unsigned n : cfg.shrink_to)
    names.push_back(fmt::format("{},{},rest", cfg.critical_sms, n));
  say(fmt::format("making a pool of {} layouts", names.size()));
  pool_options po;
  po.streams_per_partition = 1;
  pool p = pool::create(dev, names, po);
  const auto layouts = p.layouts();
  const pool_layout &wide = layouts[0];
  out.critical_sms_obtained = wide.parts[0].sm_count;
  out.wide_sms_obtained = wide.parts[1].sm_count;
  out.critical_shared = true;
  for (std::size_t i = 1; i < layouts.size(); ++i) {
    out.narrow_sms_obtained.push_back(layouts[i].parts[1].sm_count);
    if (layouts[i].parts[0].slot != wide.parts[0].slot)
      out.critical_shared = false;
  }
  out.critical_sharing =
      out.critical_shared
          ? fmt::format("one green context (pool slot {}, {} SMs) in every layout: the pool "
                        "found equal descriptor content ids",
                        wide.parts[0].slot, out.critical_sms_obtained)
          : "NOT shared: the layouts' critical pieces differ (different green contexts, "
            "possibly on different SMs); each adaptive sample launches on its narrow layout's "
            "critical stream";
  say(out.critical_sharing);

  const device_buffer in(dev, cfg.chunk_bytes), outb(dev, cfg.chunk_bytes);
  const unsigned blocks = out.device_sms * 8;
  const stream_ref crit_wide = wide.parts[0].streams[0], bg_wide = wide.parts[1].streams[0];

  // Warm-up of every stream: module loading and clock ramp-up are not measured.
  say("warming up");
  for (const auto &l : layouts) {
    launch_spin(l.parts[0].streams[0], cfg.critical_blocks, cfg.critical_block_time,
                critical_threads);
    for (int i = 0; i < 3; ++i)
      launch_stream_copy(l.parts[1].streams[0], in, outb, blocks);
  }
  for (const auto &l : layouts)
    p.synchronize(static_cast<std::size_t>(&l - layouts.data()));

  // The background alone on each partition it may use.
  for (std::size_t i = 0; i < layouts.size(); ++i) {
    const unsigned sms = layouts[i].parts[1].sm_count;
    say(fmt::format("background alone on {} SMs", sms));
    chunk_feeder f(dev, in, outb, blocks, cfg.queue_depth);
    const auto until = clock::now() + cfg.rate_window;
    while (clock::now() < until)
      f.top_up(layouts[i].parts[1].streams[0]);
    out.alone.push_back({sms, f.finish()});
  }

  out.configurations.push_back(
      {"alone",
       fmt::format("critical alone on its {} SMs", out.critical_sms_obtained),
       0,
       "",
       {},
       std::nullopt,
       {}});
  out.configurations.push_back(
      {"static",
       fmt::format("static: background on {} SMs throughout", out.wide_sms_obtained),
       0,
       "",
       {},
       background_rate{},
       {}});
  for (std::size_t i = 0; i < cfg.shrink_to.size(); ++i)
    for (policy pol : cfg.policies)
      out.configurations.push_back({fmt::format("adaptive-{}-{}", cfg.shrink_to[i], name(pol)),
                                    fmt::format("adaptive {}: background {} -> {} SMs", name(pol),
                                                out.wide_sms_obtained, out.narrow_sms_obtained[i]),
                                    cfg.shrink_to[i],
                                    name(pol),
                                    {},
                                    background_rate{},
                                    {}});
  std::vector<plan> plans;
  plans.push_back({&out.configurations[0]});
  plans.push_back({&out.configurations[1], true});
  {
    std::size_t k = 2;
    for (std::size_t i = 0; i < cfg.shrink_to.size(); ++i)
      for (policy pol : cfg.policies)
        plans.push_back({&out.configurations[k++], true, true, i + 1, pol});
  }

  const event before(dev.primary_context()), after(dev.primary_context());
  std::mt19937 rng(12345);
  std::uniform_real_distribution<double> jitter(0.5, 1.5);
  const unsigned rounds = std::max(1u, std::min(cfg.rounds, cfg.samples));
  for (unsigned round = 0; round < rounds; ++round) {
    say(fmt::format("round {}/{}: {} configurations", round + 1, rounds, plans.size()));
    const unsigned count = cfg.samples / rounds + (round < cfg.samples % rounds ? 1 : 0);
    const unsigned warmup = round == 0 ? cfg.warmup : std::min(cfg.warmup, 5u);
    for (const plan &pl : plans) {
      chunk_feeder f(dev, in, outb, blocks, cfg.queue_depth);
      const std::size_t narrow = pl.adapt ? pl.narrow : 0;
      const stream_ref crit = pl.adapt ? layouts[narrow].parts[0].streams[0] : crit_wide;
      // Keeps the background fed for `d` on the layout in use, as a program would: it reads
      // the pool's current layout before each launch (nothing without a background).
      const auto feed_for = [&](micros d) {
        const auto until = clock::now() + std::chrono::duration_cast<clock::duration>(d);
        do {
          if (pl.background)
            f.top_up(p.current().parts[1].streams[0]);
        } while (clock::now() < until);
      };
      p.use(std::size_t{0});
      if (pl.background)
        feed_for(std::chrono::milliseconds(2)); // let the background fill its SMs first
      for (unsigned s = 0; s < warmup + count; ++s) {
        const micros gap(cfg.gap.count() * jitter(rng));
        const step st = pl.adapt ? schedule(pl.pol, gap, cfg.lead) : step{gap, micros(0)};
        feed_for(st.wide);
        if (pl.adapt)
          p.use(narrow);
        if (st.narrow.count() > 0) // reactive: the critical work arrives as the layout switches
          feed_for(st.narrow);
        const auto arrival = clock::now();
        double waited = 0;
        if (pl.adapt && waits(pl.pol)) {
          f.wait_for(bg_wide);
          waited = us_between(arrival, clock::now());
        }
        before.record(crit);
        launch_spin(crit, cfg.critical_blocks, cfg.critical_block_time, critical_threads);
        after.record(crit);
        // The host does not feed the background while it waits (a launch of its own would delay
        // noticing the completion, in every configuration with a background but not alone): the
        // queue filled up to the arrival (queue depth x chunk) covers the critical kernel.
        while (!after.ready()) {
        }
        const auto done = clock::now();
        if (pl.adapt)
          p.use(std::size_t{0});
        if (s < warmup)
          continue;
        pl.out->critical.host_us.push_back(us_between(arrival, done));
        pl.out->critical.gpu_us.push_back(1000.0 * elapsed_ms(before, after));
        if (pl.adapt && waits(pl.pol))
          pl.out->wait_us.push_back(waited);
      }
      if (pl.background) {
        const background_rate seg = f.finish();
        pl.out->background->work += seg.work;
        pl.out->background->seconds += seg.seconds;
      }
    }
  }
  p.use(std::size_t{0});
  for (auto &c : out.configurations) {
    c.critical.host = summarize(c.critical.host_us);
    c.critical.gpu = summarize(c.critical.gpu_us);
  }
  return out;
}

} // namespace greenctx::cli::bench::adaptive
