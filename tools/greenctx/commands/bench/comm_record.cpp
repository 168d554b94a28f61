// SPDX-License-Identifier: Apache-2.0
// greenctx bench --comm: the record of recorded samples, and the files written before it (pure
// code).
#include "commands/bench/comm.hpp"
#include "report/json.hpp"
#include "report/stats.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace greenctx::cli::bench::comm {
namespace {

using report::cell;
using report::number_format;

const number_format count{"", 0}, us{"us", 1}, tflops{"TFLOP/s", 1};

std::string comm_sms_text(const point &p) {
  if (p.comm_sms.empty())
    return p.m.on_partition() ? "?" : "all";
  const auto [lo, hi] = std::minmax_element(p.comm_sms.begin(), p.comm_sms.end());
  return (*lo == *hi ? std::to_string(*lo) : fmt::format("{}-{}", *lo, *hi)) +
         (p.confined == false ? " (NOT confined)" : "");
}

// The environment's text field `key`, "?" where it is missing (or the environment is not an
// object).
std::string field(const nlohmann::json &env, const char *key) {
  return env.is_object() && env.contains(key) && env[key].is_string() ? env[key].get<std::string>()
                                                                      : "?";
}

bool one_gpu_test(const nlohmann::json &env) {
  return env.is_object() && env.contains("one_gpu_test") && env["one_gpu_test"].is_boolean() &&
         env["one_gpu_test"].get<bool>();
}

template <class T> std::string joined(const std::vector<T> &items, const char *sep = ",") {
  std::string out;
  for (const auto &x : items)
    out += (out.empty() ? "" : sep) + fmt::format("{}", x);
  return out;
}

} // namespace

report::record comm_record(const results &r, const nlohmann::json &env) {
  const auto number = [](auto v) { return static_cast<double>(v); };
  const bool test = one_gpu_test(env);
  report::record rec;
  rec.kind = "bench-comm";
  rec.title = test ? "greenctx bench comm: ONE-GPU TEST RUN, these numbers answer nothing"
                   : "greenctx bench comm: NCCL all-reduce next to a GEMM loop";
  rec.environment = report::environment_of(env);
  std::vector<std::string> sizes;
  for (const std::size_t b : r.sizes)
    sizes.push_back(format_bytes(b));
  rec.config = {
      {"ks", "k (SMs of the all-reduce's partition, CTA limits)", joined(r.ks), {}},
      {"sizes", "message sizes", joined(sizes, ", "), {}},
      {"iterations", "timed all-reduces per point, at least", number(r.iterations), count},
      {"warmup", "warm-up all-reduces", number(r.warmup), count},
      {"gemm_n", "GEMM n (bf16)", number(r.gemm_n), count},
      {"tolerance_percent", "tolerance of the answer", r.tolerance_percent, {"%", 0}}};
  rec.values = {
      {"gpus", "GPUs", number(r.gpus), count},
      {"devices", "devices", joined(r.devices), {}},
      {"gemm_alone_tflops", "GEMM alone on all SMs, per GPU", r.gemm_alone_tflops, tflops}};

  report::series points{"points",
                        "the all-reduce (time: the slowest GPU's) next to the GEMM loop",
                        {{"size", "size", {}, align::left},
                         {"bytes", "bytes", count, align::right, true},
                         {"mode", "mode", {}, align::left},
                         {"comm_sms", "all-reduce SMs", {}, align::left},
                         {"samples", "samples", count},
                         {"p50_us", "p50", us},
                         {"p99_us", "p99", us},
                         {"busbw_gbs", "busbw", {"GB/s", 1}},
                         {"gemm_tflops", "GEMM", tflops},
                         {"gemm_kept", "GEMM kept", {"%", 0}},
                         {"confined", "confined", {}, align::left},
                         {"failure", "failed", {}, align::left}},
                        {}};
  report::series samples{"samples",
                         "every timed all-reduce",
                         {{"bytes", "bytes", count},
                          {"mode", "mode", {}, align::left},
                          {"sample", "sample", count},
                          {"allreduce_us", "all-reduce", {"us", 3}}},
                         {}};
  samples.raw = true;
  report::series partitions{"partitions",
                            "the SMs each GPU's partition obtained",
                            {{"bytes", "bytes", count},
                             {"mode", "mode", {}, align::left},
                             {"gpu", "GPU", count},
                             {"sms", "SMs", count}},
                            {}};
  partitions.raw = true;
  for (const auto &p : r.points) {
    const bool any = !p.allreduce_us.empty();
    const summary s = summarize(p.allreduce_us);
    const bool gemm = p.m.kind != mode_kind::alone && any;
    points.rows.push_back(
        {format_bytes(p.bytes), number(p.bytes), p.m.name(), comm_sms_text(p),
         number(p.allreduce_us.size()), any ? cell{s.p50} : cell{}, any ? cell{s.p99} : cell{},
         any ? cell{bus_bandwidth_gbs(p.bytes, s.p50, r.gpus)} : cell{},
         gemm ? cell{p.gemm_tflops} : cell{},
         gemm && r.gemm_alone_tflops > 0 ? cell{100 * p.gemm_tflops / r.gemm_alone_tflops} : cell{},
         p.confined ? cell{std::string(*p.confined ? "yes" : "no")} : cell{},
         p.failure.empty() ? cell{} : cell{p.failure}});
    for (std::size_t i = 0; i < p.allreduce_us.size(); ++i)
      samples.rows.push_back({number(p.bytes), p.m.name(), number(i), p.allreduce_us[i]});
    for (std::size_t i = 0; i < p.comm_sms.size(); ++i)
      partitions.rows.push_back({number(p.bytes), p.m.name(),
                                 i < r.devices.size() ? cell{number(r.devices[i])} : cell{},
                                 number(p.comm_sms[i])});
  }
  rec.tables.push_back(std::move(points));
  rec.tables.push_back(std::move(samples));
  rec.tables.push_back(std::move(partitions));

  report::series confinement{"confinement",
                             "does the all-reduce stay on its k SMs? (each partition filled by a "
                             "spin kernel, then one all-reduce launched on its stream)",
                             {{"mode", "mode", {}, align::left},
                              {"confined", "confined", {}, align::left},
                              {"seen", "what was seen", {}, align::left}},
                             {}};
  for (const mode &m : all_modes(r.ks))
    for (const auto &p : r.points)
      if (p.m == m && !p.confinement.empty()) {
        confinement.rows.push_back(
            {p.m.name(), p.confined ? cell{std::string(*p.confined ? "yes" : "no")} : cell{},
             p.confinement});
        break;
      }
  if (!confinement.rows.empty())
    rec.tables.push_back(std::move(confinement));

  report::series answer_table{"answers",
                              "how many SMs the all-reduce needs",
                              {{"size", "size", {}, align::left},
                               {"bytes", "bytes", count},
                               {"k", "k", {"SMs", 0}},
                               {"k_mode", "at k", {}, align::left},
                               {"k_p50_us", "p50 at k", us},
                               {"best_mode", "best mode", {}, align::left},
                               {"best_p50_us", "best p50", us},
                               {"gemm_fraction", "GEMM kept", {"", 3}},
                               {"answer", "answer", {}, align::left}},
                              {}};
  answer_table.detail = true;
  if (test)
    rec.notes.push_back(fmt::format(
        "One-GPU test run (GREENCTX_COMM_ONE_GPU_TEST): a one-rank NCCL operation stands in for "
        "the all-reduce and communicates nothing, so these numbers check the tool and answer "
        "nothing (operation: {})",
        field(env, "one_gpu_test_operation")));
  rec.notes.push_back("bus bandwidth = size / time * 2(n-1)/n; GEMM kept: its TFLOP/s of its "
                      "TFLOP/s alone on all SMs");
  rec.notes.push_back(fmt::format("How many SMs the all-reduce needs: the smallest k whose p50 is "
                                  "within {:g}% of the best p50 of any mode with the GEMM "
                                  "running:",
                                  r.tolerance_percent));
  std::string summary;
  for (const auto &a : answers(r)) {
    const bool has_best = !a.best_mode.empty();
    answer_table.rows.push_back(
        {format_bytes(a.bytes), number(a.bytes), a.k ? cell{number(*a.k)} : cell{},
         a.k_mode.empty() ? cell{} : cell{a.k_mode}, a.k ? cell{a.k_p50_us} : cell{},
         has_best ? cell{a.best_mode} : cell{}, has_best ? cell{a.best_p50_us} : cell{},
         a.k && a.gemm_fraction > 0 ? cell{a.gemm_fraction} : cell{}, a.text});
    rec.notes.push_back("- " + a.text);
    summary += fmt::format("{}{}: {}", summary.empty() ? "" : ", ", format_bytes(a.bytes),
                           a.k ? fmt::format("{} SMs", *a.k) : std::string("none"));
  }
  rec.tables.push_back(std::move(answer_table));
  if (!summary.empty())
    rec.notes.push_back("answers: " + summary);

  rec.figures.push_back(
      {fmt::format("All-reduce p50 of at least {} iterations, by message size", r.iterations),
       "points",
       "bytes",
       {"p50_us"},
       "us",
       {},
       std::nullopt,
       false,
       report::figure_style::lines,
       "mode",
       "size",
       true,
       true});
  std::vector<report::quantity> alone;
  if (r.gemm_alone_tflops > 0)
    alone.push_back({"gemm_alone_tflops", "GEMM alone", r.gemm_alone_tflops, tflops});
  rec.figures.push_back({"GEMM TFLOP/s per GPU next to the all-reduce, by message size",
                         "points",
                         "bytes",
                         {"gemm_tflops"},
                         "TFLOP/s",
                         alone,
                         std::nullopt,
                         true,
                         report::figure_style::lines,
                         "mode",
                         "size",
                         true});
  return rec;
}

point point_from_json(const nlohmann::json &q) {
  point p;
  const auto m = mode::from_name(q.at("mode").get<std::string>());
  if (!m)
    throw nlohmann::json::other_error::create(
        501, "unknown mode '" + q.at("mode").get<std::string>() + "'", &q);
  p.m = *m;
  read_to(q, "bytes", p.bytes);
  p.gemm_tflops = q.at("gemm_tflops").get<double>();
  read_to(q, "comm_sms", p.comm_sms);
  if (q.contains("confined") && !q["confined"].is_null())
    p.confined = q["confined"].get<bool>();
  p.confinement = q.value("confinement", std::string());
  p.failure = q.at("failure").get<std::string>();
  p.allreduce_us = q.at("allreduce_us").get<std::vector<double>>();
  return p;
}

} // namespace greenctx::cli::bench::comm
