// SPDX-License-Identifier: Apache-2.0
// Python bindings of the adaptive and scaling measurements (greenctx::measure), over Python
// callables or built-in workloads, and of the bandwidth curve; their results are dicts. The GIL
// is released while they measure and taken back for each call of a Python callable; its
// exceptions come back as they were raised.
#include "measure.hpp"

#include <greenctx/greenctx.hpp>
#include <greenctx/plan/names.hpp>

#include <nanobind/stl/function.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>

namespace nb = nanobind;
using namespace nb::literals;
using namespace greenctx;
using namespace greenctx_py;

namespace {

nb::dict adaptive_dict(const measure::adaptive_result &r) {
  const double scale = r.background_unit_scale;
  nb::dict d;
  d["critical"] = r.critical_name;
  d["background"] = r.background_name;
  d["background_unit"] = r.background_unit;
  d["device_sms"] = r.device_sms;
  d["critical_sms"] = r.critical_sms_obtained;
  d["wide_sms"] = r.wide_sms_obtained;
  d["narrow_sms"] = r.narrow_sms_obtained;
  d["critical_shared"] = r.critical_shared;
  d["critical_sharing"] = r.critical_sharing;
  nb::list alone;
  for (const auto &a : r.alone) {
    nb::dict ad;
    ad["sms"] = a.sms;
    ad["rate"] = rate_dict(a.rate, scale);
    alone.append(ad);
  }
  d["alone"] = alone;
  nb::list configurations;
  for (const auto &c : r.configurations) {
    nb::dict cd;
    cd["name"] = c.name;
    cd["description"] = c.description;
    cd["shrink_to"] = c.shrink_to;
    cd["policy"] = c.policy;
    cd["critical"] = critical_dict(c.critical);
    cd["background"] = c.background ? nb::object(rate_dict(*c.background, scale)) : nb::none();
    cd["wait_us"] = c.wait_us;
    configurations.append(cd);
  }
  d["configurations"] = configurations;
  nb::list verdicts;
  for (const auto &v : measure::adaptive_verdicts(r)) {
    nb::dict vd;
    vd["name"] = v.name;
    vd["available"] = v.available;
    vd["isolation"] = v.available ? nb::object(nb::float_(v.isolation)) : nb::none();
    vd["background_ratio"] = v.available ? nb::object(nb::float_(v.background_ratio)) : nb::none();
    vd["isolation_met"] = v.isolation_met();
    vd["background_met"] = v.background_met();
    vd["met"] = v.met();
    verdicts.append(vd);
  }
  d["verdicts"] = verdicts;
  d["isolation_limit"] = measure::adaptive_isolation_limit;
  d["background_limit"] = measure::adaptive_background_limit;
  return d;
}

nb::dict scaling_dict(const measure::scaling_result &r) {
  nb::dict d;
  d["workload"] = r.workload_name;
  d["device_sms"] = r.device_sms;
  d["reference_sms"] = r.reference_sms;
  nb::list points;
  for (const auto &p : r.points) {
    nb::dict pd;
    pd["requested"] = p.requested;
    pd["sms"] = p.sms;
    pd["rounding"] = p.rounding;
    pd["time"] = critical_dict(p.time);
    pd["speedup"] = p.speedup;
    pd["ideal"] = p.ideal;
    pd["efficiency"] = p.efficiency;
    points.append(pd);
  }
  d["points"] = points;
  return d;
}

nb::dict bandwidth_rate_dict(const measure::bandwidth_rate &r) {
  nb::dict d;
  d["bytes"] = r.bytes;
  d["seconds"] = r.seconds;
  d["gbs"] = r.gbs();
  return d;
}

nb::object rate_or_none_dict(const std::optional<measure::bandwidth_rate> &r) {
  return r ? nb::object(bandwidth_rate_dict(*r)) : nb::none();
}

nb::dict bandwidth_dict(const measure::bandwidth_result &r) {
  nb::dict d;
  d["device_sms"] = r.device_sms;
  d["l2_bytes"] = r.l2_bytes;
  d["sizes"] = r.cfg.sizes;
  d["buffer_bytes"] = r.cfg.dram_bytes;
  d["repeats"] = r.cfg.repeats;
  nb::list points;
  for (const auto &p : r.points) {
    nb::dict pd;
    pd["sms"] = p.sms;
    pd["whole_device"] = p.whole_device;
    pd["op"] = measure::name(p.op);
    pd["level"] = measure::name(p.level);
    pd["footprint"] = p.footprint;
    pd["passes"] = p.passes;
    pd["alone"] = bandwidth_rate_dict(p.alone);
    pd["rest_sms"] = p.rest_sms;
    pd["beside"] = rate_or_none_dict(p.beside);
    pd["rest_alone"] = rate_or_none_dict(p.rest_alone);
    pd["rest_beside"] = rate_or_none_dict(p.rest_beside);
    pd["overlapped"] = p.overlapped;
    points.append(pd);
  }
  d["points"] = points;
  return d;
}

// Ops or levels by their names (measure::name), each entry one, each once.
template <class Value, std::size_t N>
std::vector<Value> by_name(const std::vector<std::string> &names, const Value (&all)[N],
                           const char *what) {
  return pick_by_name(names, "greenctx.measure_bandwidth", what, all,
                      [](Value v) { return measure::name(v); });
}

// Policy names as Python gives them, one list entry each (checked by name here, for duplicates
// by validate_adaptive).
std::vector<measure::adaptive_policy> policies_of(const std::vector<std::string> &names) {
  std::vector<measure::adaptive_policy> out;
  for (const auto &n : names)
    out.push_back(measure::parse_adaptive_policies(n, "policies").front());
  return out;
}

} // namespace

void bind_measure_runs(nb::module_ &m) {
  m.def(
      "copy_chunks",
      [](const device &dev, std::size_t chunk_bytes) {
        return measure::copy_chunks(dev, chunk_bytes);
      },
      "device"_a, "chunk_bytes"_a = std::size_t{64} << 20, nb::keep_alive<0, 1>(),
      "The adaptive measurement's default background: a device-to-device copy of chunk_bytes per "
      "launch in 8 blocks of 256 threads per SM, counted in GB/s.");
  m.def(
      "measure_adaptive",
      [](const device &dev, const measure::critical_workload &critical,
         const measure::background_workload &background, unsigned critical_sms,
         std::vector<unsigned> shrink_to, std::vector<std::string> policies, double lead_us,
         unsigned queue_depth, unsigned samples, unsigned warmup, unsigned rounds, double gap_us,
         double rate_window_ms, measure::progress_fn progress) {
        measure::adaptive_config cfg;
        cfg.critical_sms = critical_sms;
        cfg.shrink_to = std::move(shrink_to);
        cfg.policies = policies_of(policies);
        cfg.lead = whole_us(lead_us, "lead_us", 0);
        cfg.queue_depth = queue_depth;
        set_sampling(cfg, samples, warmup, rounds, gap_us, rate_window_ms);
        // Said with the keywords' names before the library checks it again under its own.
        measure::validate_adaptive(cfg, dev.sms().sm_count(),
                                   {"critical_sms", "shrink_to", "policies", "lead_us", "gap_us",
                                    "queue_depth", "samples"});
        measure::adaptive_result r;
        {
          nb::gil_scoped_release release;
          r = measure::measure_adaptive(dev, critical, background, cfg, progress);
        }
        return adaptive_dict(r);
      },
      "device"_a, "critical"_a, "background"_a, nb::kw_only(), "critical_sms"_a = 16,
      "shrink_to"_a = std::vector<unsigned>{8, 16, 32, 64},
      "policies"_a =
          std::vector<std::string>{"lead", "lead-wait", "reactive", "reactive-wait", "narrow"},
      "lead_us"_a = 100, "queue_depth"_a = 2, "samples"_a = 1000, "warmup"_a = 50, "rounds"_a = 10,
      "gap_us"_a = 300, "rate_window_ms"_a = 300, "progress"_a = nb::none(),
      "The adaptive measurement on workload objects (greenctx.measure_adaptive wraps callables).");
  m.def(
      "measure_bandwidth",
      [](const device &dev, std::vector<unsigned> sizes, std::vector<std::string> ops,
         std::vector<std::string> levels, std::size_t buffer_bytes, unsigned repeats, bool beside,
         measure::progress_fn progress) {
        measure::bandwidth_config cfg;
        cfg.sizes = std::move(sizes);
        cfg.ops = by_name(ops, measure::memory_ops, "ops");
        cfg.levels = by_name(levels, measure::memory_levels, "levels");
        cfg.dram_bytes = buffer_bytes;
        cfg.repeats = repeats;
        cfg.beside = beside;
        measure::bandwidth_result r;
        {
          nb::gil_scoped_release release;
          r = measure::measure_bandwidth(dev, cfg, progress);
        }
        return bandwidth_dict(r);
      },
      "device"_a, nb::kw_only(), "sizes"_a = std::vector<unsigned>{},
      "ops"_a = std::vector<std::string>{"read", "write", "copy"},
      "levels"_a = std::vector<std::string>{"dram", "l2"}, "buffer_bytes"_a = std::size_t{1} << 30,
      "repeats"_a = 10, "beside"_a = true, "progress"_a = nb::none(),
      "The bandwidth curve (greenctx bench bandwidth): DRAM and L2 read, write and copy GB/s on N "
      "SMs of each N,rest split (sizes; empty: every N this GPU makes) and on the whole device, "
      "alone and, with beside, while the rest does the same; a dict.");
  m.def(
      "plan_scaling",
      [](std::vector<unsigned> sm_counts, unsigned device_sms, const granularity &grain,
         bool round_counts) {
        nb::list out;
        for (const auto &c : measure::plan_scaling(sm_counts, device_sms, grain, round_counts)) {
          nb::dict d;
          d["requested"] = c.requested;
          d["sms"] = c.sms;
          d["rounding"] = c.rounding;
          out.append(d);
        }
        return out;
      },
      "sm_counts"_a, "device_sms"_a, "granularity"_a, "round_counts"_a = false,
      "The SM counts a scaling run measures, ascending, as dicts (requested, sms, rounding): "
      "every size a green context has exactly when sm_counts is empty. Raises RequestError for a "
      "count no green context has (unless round_counts: then rounded, and the rounding says "
      "why), one named twice or above device_sms. Pure: no GPU.");
  m.def(
      "scaling",
      [](const device &dev, const measure::critical_workload &workload,
         std::vector<unsigned> sm_counts, unsigned samples, unsigned warmup, unsigned rounds,
         double gap_us, bool round_counts, bool hold_launch, measure::progress_fn progress) {
        measure::scaling_config cfg;
        cfg.samples = samples;
        cfg.warmup = warmup;
        cfg.rounds = rounds;
        cfg.gap = whole_us(gap_us, "gap_us", 0);
        cfg.round_counts = round_counts;
        cfg.hold_launch = hold_launch;
        measure::scaling_result r;
        {
          nb::gil_scoped_release release;
          r = measure::scaling(dev, workload, sm_counts, cfg, progress);
        }
        return scaling_dict(r);
      },
      "device"_a, "workload"_a, "sm_counts"_a = std::vector<unsigned>{}, nb::kw_only(),
      "samples"_a = 100, "warmup"_a = 10, "rounds"_a = 5, "gap_us"_a = 0, "round_counts"_a = false,
      "hold_launch"_a = true, "progress"_a = nb::none(),
      "The scaling measurement on a workload object (greenctx.scaling wraps callables).");
}
