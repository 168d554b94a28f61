// SPDX-License-Identifier: Apache-2.0
#include "greenctx/measure/bandwidth.hpp"

#include "core/kernels.hpp"
#include "greenctx/core/event.hpp"
#include "greenctx/core/memory.hpp"
#include "greenctx/core/partition.hpp"
#include "greenctx/measure/tune.hpp"
#include "greenctx/plan/error.hpp"

#include <algorithm>
#include <cmath>
#include <map>

namespace greenctx::measure {
namespace {

constexpr const char *api = "greenctx::measure::bandwidth";
constexpr unsigned threads = 256;
constexpr unsigned blocks_per_sm = 8; // 2048 threads: every SM of an H100/H200 full
constexpr std::size_t word = 16;

[[noreturn]] void refuse(const std::string &why) {
  throw request_error(CUDA_ERROR_INVALID_VALUE, api, why);
}

template <class T> bool has_duplicates(std::vector<T> v) {
  std::sort(v.begin(), v.end());
  return std::adjacent_find(v.begin(), v.end()) != v.end();
}

std::string listed(const std::vector<unsigned> &v) {
  std::string out;
  for (unsigned x : v)
    out += (out.empty() ? "" : ",") + std::to_string(x);
  return out;
}

// The buffers one side streams over: a is read, b written.
struct side_buffers {
  device_buffer a, b;
};

// One side of a measurement: a stream and the SMs behind it.
struct side {
  stream_ref s;
  unsigned sms = 0;
  const side_buffers *buffers = nullptr;
};

struct kernel_shape {
  memory_op op;
  std::size_t words;
  unsigned passes;
};

void launch(const side &x, const kernel_shape &k, const device_buffer &sink) {
  CUdeviceptr a = x.buffers->a.get(), b = x.buffers->b.get(), out = sink.get();
  unsigned long long words = k.words;
  unsigned op = static_cast<unsigned>(k.op), passes = k.passes;
  void *args[] = {&a, &b, &words, &op, &passes, &out};
  detail::launch(detail::kernel_id::bandwidth, x.s.native_handle(), x.sms * blocks_per_sm, threads,
                 args);
}

class meter {
public:
  meter(const device &dev, unsigned repeats)
      : repeats_(repeats), sink_(dev, word), start_(dev.primary_context()),
        end_(dev.primary_context()), first_(dev.primary_context()),
        other_end_(dev.primary_context()) {}

  // `repeats` kernels on x after one untimed; with `other`, while it streams the same kernel,
  // starting once its first kernel has ended, for `margin` times as long as x takes alone
  // (`alone_s`; `other_kernel_s`: one of its kernels alone). Measured again with 4x the margin, up
  // to 192x, while the other side ends first; `overlapped` says whether it still did at the end.
  bandwidth_rate measure(const side &x, const kernel_shape &k, const side *other = nullptr,
                         double other_kernel_s = 0, double alone_s = 0,
                         bool *overlapped = nullptr) {
    for (double margin = 3;; margin *= 4) {
      if (other) {
        const auto kernels = 2 + static_cast<unsigned long>(
                                     std::ceil(margin * alone_s / std::max(other_kernel_s, 1e-6)));
        launch(*other, k, sink_);
        first_.record(other->s);
        for (unsigned long i = 1; i < kernels; ++i)
          launch(*other, k, sink_);
        other_end_.record(other->s);
        x.s.wait(first_);
      }
      launch(x, k, sink_); // untimed
      start_.record(x.s);
      for (unsigned i = 0; i < repeats_; ++i)
        launch(x, k, sink_);
      end_.record(x.s);
      end_.synchronize();
      const bool shared = !other || !other_end_.ready();
      if (other)
        other_end_.synchronize();
      if (shared || margin >= 192) {
        if (overlapped && !shared)
          *overlapped = false;
        bandwidth_rate r;
        r.bytes = static_cast<double>(repeats_) * k.passes * bytes_per_pass(k.op, k.words);
        r.seconds = elapsed_ms(start_, end_) / 1e3;
        return r;
      }
    }
  }

private:
  unsigned repeats_;
  device_buffer sink_;
  event start_, end_, first_, other_end_;
};

} // namespace

void check_bandwidth_config(const bandwidth_config &cfg, const sm_resource &sms,
                            std::size_t l2_bytes) {
  if (cfg.ops.empty() || cfg.levels.empty())
    refuse("no memory operation or level to measure: give at least one of each");
  if (has_duplicates(cfg.ops) || has_duplicates(cfg.levels))
    refuse("an operation or a level is listed twice: name each once");
  if (cfg.repeats == 0)
    refuse("0 repeats: each measurement needs at least one timed kernel");
  if (cfg.dram_bytes < 4 * l2_bytes)
    refuse("a DRAM buffer of " + std::to_string(cfg.dram_bytes) + " bytes is less than 4x this " +
           "GPU's L2 (" + std::to_string(l2_bytes) + " bytes): part of it would be read from L2");
  const std::vector<unsigned> made = tune_candidates(sms);
  for (std::size_t i = 0; i < cfg.sizes.size(); ++i) {
    if (i > 0 && cfg.sizes[i] <= cfg.sizes[i - 1])
      refuse("the SM counts must increase: " + listed(cfg.sizes));
    if (std::find(made.begin(), made.end(), cfg.sizes[i]) == made.end())
      refuse(std::to_string(cfg.sizes[i]) + ",rest is not a split this GPU makes; these are: " +
             listed(made) + " (the whole device is measured too)");
  }
}

bandwidth_result measure_bandwidth(const device &dev, const bandwidth_config &cfg,
                                   const progress_fn &progress) {
  bandwidth_result out;
  out.cfg = cfg;
  out.device_sms = dev.sms().sm_count();
  out.l2_bytes = static_cast<std::size_t>(dev.attribute(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE));
  check_bandwidth_config(cfg, dev.sms(), out.l2_bytes);
  if (out.cfg.sizes.empty())
    out.cfg.sizes = tune_candidates(dev.sms());

  const auto buffers = [&] {
    return side_buffers{device_buffer(dev, cfg.dram_bytes), device_buffer(dev, cfg.dram_bytes)};
  };
  const side_buffers mine = buffers();
  const std::optional<side_buffers> theirs =
      cfg.beside ? std::optional<side_buffers>(buffers()) : std::nullopt;
  // Green contexts cost ~1.5 ms each and leak when destroyed (driver 580): one split per size,
  // kept for the whole measurement, with a stream on each piece and the SMs each piece holds.
  struct split {
    partition_set set;
    std::vector<stream> streams;
    std::vector<unsigned> sms;
  };
  std::map<unsigned, split> splits;
  for (unsigned n : out.cfg.sizes) {
    split sp{partition_set::create(dev, partition_request{{n}, true}), {}, {}};
    for (const partition &p : sp.set.parts()) {
      sp.streams.push_back(p.context.create_stream(stream_flags::non_blocking));
      sp.sms.push_back(p.obtained());
    }
    splits.emplace(n, std::move(sp));
  }
  const stream whole = dev.primary_context().create_stream(stream_flags::non_blocking);
  meter m(dev, cfg.repeats);

  for (memory_level level : cfg.levels) {
    const std::size_t footprint =
        level == memory_level::dram ? cfg.dram_bytes : out.l2_bytes / 4 / word * word;
    const unsigned passes =
        level == memory_level::dram ? 1 : static_cast<unsigned>(cfg.dram_bytes / footprint);
    for (memory_op op : cfg.ops) {
      if (progress)
        progress(std::string(name(level)) + " " + name(op) + ": " +
                 std::to_string(out.cfg.sizes.size() + 1) + " SM counts");
      const kernel_shape k{op, footprint / word, passes};
      bandwidth_point base;
      base.op = op;
      base.level = level;
      base.footprint = footprint;
      base.passes = passes;
      for (const auto &[n, sp] : splits) {
        bandwidth_point p = base;
        p.sms = n;
        const side here{sp.streams[0], sp.sms[0], &mine};
        p.alone = m.measure(here, k);
        p.rest_sms = sp.sms[1];
        if (theirs) {
          const side rest{sp.streams[1], p.rest_sms, &*theirs};
          p.rest_alone = m.measure(rest, k);
          const double rest_kernel = p.rest_alone->seconds / cfg.repeats;
          const double here_kernel = p.alone.seconds / cfg.repeats;
          p.beside = m.measure(here, k, &rest, rest_kernel, p.alone.seconds, &p.overlapped);
          p.rest_beside =
              m.measure(rest, k, &here, here_kernel, p.rest_alone->seconds, &p.overlapped);
        }
        out.points.push_back(std::move(p));
      }
      bandwidth_point all = base;
      all.sms = out.device_sms;
      all.whole_device = true;
      all.alone = m.measure(side{whole, out.device_sms, &mine}, k);
      out.points.push_back(std::move(all));
    }
  }
  return out;
}

} // namespace greenctx::measure
