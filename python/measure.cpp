// SPDX-License-Identifier: Apache-2.0
// Python bindings of the measurement layer (greenctx::measure): workloads that are Python
// callables or built-in ones, the contention measurement and tune, whose results are dicts; the
// adaptive and scaling measurements are in measure_runs.cpp.
#include "measure.hpp"

#include <greenctx/greenctx.hpp>

#include <nanobind/stl/function.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <chrono>

namespace nb = nanobind;
using namespace nb::literals;
using namespace greenctx;

namespace greenctx_py {

long long whole(double v, const char *what, long long least, const char *unit) {
  if (!(v >= static_cast<double>(least)) || v > 1e15 ||
      v != static_cast<double>(static_cast<long long>(v)))
    throw request_error(CUDA_ERROR_INVALID_VALUE, "greenctx.measure",
                        std::string(what) + " is a whole number of " + unit + ", at least " +
                            std::to_string(least) + ", not " + std::to_string(v));
  return static_cast<long long>(v);
}

std::chrono::microseconds whole_us(double v, const char *what, long long least) {
  return std::chrono::microseconds(whole(v, what, least, "microseconds"));
}

nb::dict summary_dict(const measure::summary &s) {
  nb::dict d;
  d["count"] = s.count;
  d["min"] = s.min;
  d["p50"] = s.p50;
  d["p90"] = s.p90;
  d["p99"] = s.p99;
  d["max"] = s.max;
  d["mean"] = s.mean;
  d["stdev"] = s.stdev;
  d["noise"] = s.noise;
  return d;
}

nb::dict rate_dict(const measure::background_rate &r, double unit_scale) {
  nb::dict d;
  d["work"] = r.work;
  d["seconds"] = r.seconds;
  d["rate"] = r.rate() / unit_scale; // in the workload's unit
  return d;
}

nb::dict critical_dict(const measure::critical_stats &c) {
  nb::dict d;
  d["host_us"] = c.host_us;
  d["gpu_us"] = c.gpu_us;
  d["start_delay_us"] = c.start_delay_us;
  d["host"] = summary_dict(c.host);
  d["gpu"] = summary_dict(c.gpu);
  d["start_delay"] = summary_dict(c.start_delay);
  return d;
}

} // namespace greenctx_py

namespace {

using namespace greenctx_py;

nb::dict result_dict(const measure::contention_result &r) {
  nb::dict d;
  d["critical"] = r.critical_name;
  d["background"] = r.background_name;
  d["device_sms"] = r.device_sms;
  d["critical_sms"] = r.critical_sms;
  d["background_sms"] = r.background_sms;
  d["background_unit"] = r.background_unit;
  d["background_full"] = rate_dict(r.background_full, r.background_unit_scale);
  d["background_share"] = rate_dict(r.background_share, r.background_unit_scale);
  d["background_shape"] = r.background_shape;
  d["background_launch_work"] = r.background_launch_work;
  nb::dict cfg;
  cfg["samples"] = r.cfg.samples;
  cfg["warmup"] = r.cfg.warmup;
  cfg["rounds"] = r.cfg.rounds;
  cfg["gap_us"] = r.cfg.gap.count();
  cfg["rate_window_ms"] = r.cfg.rate_window.count();
  cfg["hold_launch"] = r.cfg.hold_launch;
  cfg["background_depth"] = r.cfg.background_depth;
  cfg["background_thread"] = r.cfg.background_thread;
  d["config"] = cfg;
  nb::list placements;
  for (const auto &p : r.placements) {
    nb::dict pd;
    pd["name"] = p.name;
    pd["description"] = p.description;
    pd["trap"] = p.trap;
    pd["critical"] = p.critical ? nb::object(critical_dict(*p.critical)) : nb::none();
    pd["background"] =
        p.background ? nb::object(rate_dict(*p.background, r.background_unit_scale)) : nb::none();
    placements.append(pd);
  }
  d["placements"] = placements;
  return d;
}

nb::dict point_dict(const measure::tune_point &p, double unit_scale) {
  nb::dict d;
  d["critical_sms"] = p.critical_sms;
  d["background_sms"] = p.background_sms;
  d["critical"] = summary_dict(p.critical);
  d["p99_low"] = p.p99_interval ? nb::object(nb::float_(p.p99_interval->low)) : nb::none();
  d["p99_high"] = p.p99_interval ? nb::object(nb::float_(p.p99_interval->high)) : nb::none();
  d["background_rate"] = p.background_rate / unit_scale;
  d["seconds"] = p.seconds;
  return d;
}

nb::object answer_dict(const std::optional<measure::tune_answer> &a, double unit_scale) {
  if (!a)
    return nb::none();
  nb::dict d;
  d["chosen"] = a->chosen ? nb::object(nb::int_(*a->chosen)) : nb::none();
  d["closest"] = a->closest ? nb::object(nb::int_(*a->closest)) : nb::none();
  d["reason"] = a->reason;
  d["limit_us"] = a->limit_us;
  d["seconds"] = a->seconds;
  nb::list measured;
  for (const auto &p : a->measured)
    measured.append(point_dict(p, unit_scale));
  d["measured"] = measured;
  return d;
}

nb::dict tune_dict(const measure::tune_result &r) {
  nb::dict d;
  d["objective"] = r.cfg.objective.describe();
  d["critical"] = r.critical_name;
  d["background"] = r.background_name;
  d["background_unit"] = r.background_unit;
  d["device_sms"] = r.device_sms;
  d["candidates"] = r.candidates;
  d["alone"] = summary_dict(r.alone);
  d["guided"] = answer_dict(r.guided, r.background_unit_scale);
  d["exhaustive"] = answer_dict(r.exhaustive, r.background_unit_scale);
  nb::list curve;
  for (const auto &p : r.curve)
    curve.append(point_dict(p, r.background_unit_scale));
  d["curve"] = curve;
  d["pareto"] = r.pareto;
  d["split"] = r.split().empty() ? nb::none() : nb::object(nb::str(r.split().c_str()));
  d["reason"] = r.answer().reason;
  d["repeat"] = r.repeat ? nb::object(point_dict(*r.repeat, r.background_unit_scale)) : nb::none();
  d["repeat_meets"] = r.repeat_meets;
  d["hold_launch"] = r.cfg.hold_launch;
  return d;
}

measure::tune_objective objective_of(std::optional<double> p99_us,
                                     std::optional<double> p99_times_alone,
                                     std::optional<double> within_best) {
  const int given = p99_us.has_value() + p99_times_alone.has_value() + within_best.has_value();
  if (given != 1)
    throw request_error(CUDA_ERROR_INVALID_VALUE, "greenctx.tune",
                        "give one objective: p99_us (a bound in us), p99_times_alone (a factor "
                        "over the p99 alone) or within_best (a fraction of the best p99)");
  if (p99_us)
    return {measure::tune_goal::p99_at_most_us, *p99_us};
  if (p99_times_alone)
    return {measure::tune_goal::p99_at_most_times_alone, *p99_times_alone};
  return {measure::tune_goal::smallest_within_best, *within_best};
}

measure::tune_search search_of(const std::string &name) {
  if (name == "guided")
    return measure::tune_search::guided;
  if (name == "exhaustive")
    return measure::tune_search::exhaustive;
  if (name == "both")
    return measure::tune_search::both;
  throw request_error(CUDA_ERROR_INVALID_VALUE, "greenctx.tune",
                      "search is 'guided', 'exhaustive' or 'both', not '" + name + "'");
}

void bind_workloads(nb::module_ &m) {
  nb::class_<measure::critical_workload>(
      m, "CriticalWorkload",
      "Latency-critical work for a measurement: launch(stream) enqueues one instance on the "
      "StreamRef it is given (do not synchronize). execution_us(stream), optional, returns the "
      "instance's own execution time in us after it finished, so that start delays are reported.")
      .def(
          "__init__",
          [](measure::critical_workload *w, std::function<void(stream_ref)> launch,
             const std::string &name,
             std::function<std::optional<double>(stream_ref)> execution_us) {
            new (w) measure::critical_workload{name, std::move(launch), std::move(execution_us)};
          },
          "launch"_a, "name"_a = "critical", "execution_us"_a = nb::none())
      .def_ro("name", &measure::critical_workload::name);
  nb::class_<measure::background_workload>(
      m, "BackgroundWorkload",
      "Work that keeps its SMs busy: launch(stream) enqueues one unit on the StreamRef it is given "
      "and returns the work it does (a positive number: blocks, bytes, FLOPs); rates are work per "
      "second divided by unit_scale, shown in unit.")
      .def(
          "__init__",
          [](measure::background_workload *w, std::function<double(stream_ref)> launch,
             const std::string &name, const std::string &unit, double unit_scale) {
            if (!(unit_scale > 0))
              throw request_error(CUDA_ERROR_INVALID_VALUE, "greenctx.BackgroundWorkload",
                                  "unit_scale must be positive, not " + std::to_string(unit_scale));
            new (w) measure::background_workload{name, std::move(launch), unit, unit_scale, {}};
          },
          "launch"_a, "name"_a = "background", "unit"_a = "units/s", "unit_scale"_a = 1.0)
      .def_ro("name", &measure::background_workload::name)
      .def_ro("unit", &measure::background_workload::unit)
      .def_ro("unit_scale", &measure::background_workload::unit_scale);

  // The built-in workloads keep their device alive (keep_alive<0, 1>).
  m.def(
      "kernel_critical",
      [](const device &dev, unsigned blocks, double block_time_us) {
        return measure::kernel_critical(dev, blocks, whole_us(block_time_us, "block_time_us", 0));
      },
      "device"_a, "blocks"_a = 8, "block_time_us"_a = 20, nb::keep_alive<0, 1>(),
      "bench's kernel critical work: `blocks` blocks spinning block_time_us each, timed on the "
      "GPU.");
  m.def(
      "gemm_critical", &measure::gemm_critical, "device"_a, "n"_a = 256, nb::keep_alive<0, 1>(),
      "One square bf16 cuBLAS GEMM of size n as critical work (UnsupportedError without cuBLAS).");
  m.def(
      "spin_background",
      [](const device &dev, unsigned waves, double block_time_us) {
        return measure::spin_background(dev, waves, whole_us(block_time_us, "block_time_us"));
      },
      "device"_a, "waves"_a = 64, "block_time_us"_a = 200, nb::keep_alive<0, 1>(),
      "bench's spin background: `waves` full-GPU waves of blocks spinning block_time_us each, "
      "counted in blocks.");
  m.def("memory_background", &measure::memory_background, "device"_a, "bytes"_a = 1u << 30,
        nb::keep_alive<0, 1>(), "A device-to-device copy of `bytes` per launch, counted in GB/s.");
  m.def(
      "gemm_background", &measure::gemm_background, "device"_a, "n"_a = 8192,
      nb::keep_alive<0, 1>(),
      "Square bf16 cuBLAS GEMMs of size n, counted in TFLOP/s (UnsupportedError without cuBLAS).");
}

} // namespace

void bind_measure(nb::module_ &m) {
  bind_workloads(m);
  bind_measure_runs(m);
  m.def(
      "measure_contention",
      [](const device &dev, const partition_set &set, const measure::critical_workload &critical,
         const measure::background_workload &background, unsigned samples, unsigned warmup,
         unsigned rounds, double gap_us, double rate_window_ms, std::vector<std::string> placements,
         bool hold_launch, unsigned background_depth, bool background_thread,
         measure::progress_fn progress) {
        measure::contention_config cfg;
        set_sampling(cfg, samples, warmup, rounds, gap_us, rate_window_ms);
        cfg.placements = std::move(placements);
        cfg.hold_launch = hold_launch;
        cfg.background_depth = background_depth;
        cfg.background_thread = background_thread;
        measure::contention_result r;
        {
          // The workloads' and progress's Python calls take the GIL back while they run.
          nb::gil_scoped_release release;
          r = measure::measure_contention(dev, set, critical, background, cfg, progress);
        }
        return result_dict(r);
      },
      "device"_a, "partitions"_a, "critical"_a, "background"_a, nb::kw_only(), "samples"_a = 1000,
      "warmup"_a = 50, "rounds"_a = 10, "gap_us"_a = 300, "rate_window_ms"_a = 300,
      "placements"_a = std::vector<std::string>{}, "hold_launch"_a = false,
      "background_depth"_a = 2, "background_thread"_a = false, "progress"_a = nb::none(),
      "Measures the critical work's latency beside the background under each placement (alone, "
      "shared, priority, green contexts, the trap), with the critical work on partitions[0] and "
      "the background on partitions[1]; returns a dict of distributions (us) and rates. "
      "hold_launch: each critical sample starts once the callable has enqueued all of it (its "
      "launch time on the host not counted). background_depth: background launches kept queued. "
      "background_thread: the background fed from a thread of its own.");
  m.def(
      "tune",
      [](const device &dev, const measure::critical_workload &critical,
         const measure::background_workload &background, std::optional<double> p99_us,
         std::optional<double> p99_times_alone, std::optional<double> within_best,
         const std::string &search, unsigned samples, unsigned confirm_samples, unsigned rounds,
         double gap_us, std::vector<unsigned> sizes, bool repeat, bool hold_launch,
         measure::progress_fn progress) {
        measure::tune_config cfg;
        cfg.objective = objective_of(p99_us, p99_times_alone, within_best);
        cfg.search = search_of(search);
        cfg.samples = samples;
        cfg.confirm_samples = confirm_samples;
        cfg.rounds = rounds;
        cfg.gap = whole_us(gap_us, "gap_us", 0);
        cfg.sizes = std::move(sizes);
        cfg.repeat = repeat;
        cfg.hold_launch = hold_launch;
        measure::tune_result r;
        {
          nb::gil_scoped_release release;
          r = measure::tune(dev, critical, background, cfg, progress);
        }
        return tune_dict(r);
      },
      "device"_a, "critical"_a, "background"_a, nb::kw_only(), "p99_us"_a = nb::none(),
      "p99_times_alone"_a = nb::none(), "within_best"_a = nb::none(), "search"_a = "guided",
      "samples"_a = 300, "confirm_samples"_a = 1000, "rounds"_a = 2, "gap_us"_a = 100,
      "sizes"_a = std::vector<unsigned>{}, "repeat"_a = true, "hold_launch"_a = true,
      "progress"_a = nb::none(),
      "Chooses the split by measurement: the critical work on N SMs, the background on the rest, "
      "for each N this GPU makes, and the N that meets the objective with the most background "
      "throughput. Returns a dict: split ('24,rest' or None), reason, curve (each point with its "
      "p99's 95% interval, p99_low..p99_high), pareto, each search's answer, and repeat: the "
      "chosen split measured once more (repeat_meets: whether it meets the bound again). "
      "hold_launch: each critical sample starts once the callable has enqueued all of it, so "
      "that Python's launch time is not counted (False: counted, as a program sees it).");
}
