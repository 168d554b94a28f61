// SPDX-License-Identifier: Apache-2.0
// greenctx bench --adaptive: options, the record and the files written before it (pure code); the
// policies, their schedule and the verdicts are the library's (greenctx/measure/adaptive.hpp).
#include "commands/bench/adaptive.hpp"
#include "commands/bench/latency_record.hpp"
#include "report/json.hpp"
#include "common/sm_list_option.hpp"

#include <greenctx/plan/decimal.hpp>
#include <greenctx/plan/error.hpp>

#include <fmt/format.h>

#include <algorithm>

namespace greenctx::cli::bench::adaptive {
namespace {

[[noreturn]] void reject(const std::string &option, const std::string &message) {
  throw request_error(CUDA_ERROR_INVALID_VALUE, "greenctx bench --adaptive",
                      option + ": " + message);
}

} // namespace

std::vector<unsigned> parse_shrink_to(std::string_view text) {
  return parse_sm_list(text, {"greenctx bench --adaptive", "--shrink-to",
                              "e.g. --shrink-to 8,16,32,64 (SM counts of the narrow background "
                              "partition)",
                              4096, false});
}

std::vector<policy> parse_policies(std::string_view text) {
  return measure::parse_adaptive_policies(text, "--policies");
}

void validate(const config &cfg, unsigned device_sms) {
  measure::validate_adaptive(cfg, device_sms,
                             {"--critical-sms", "--shrink-to", "--policies", "--lead-us",
                              "--gap-us", "--queue-depth", "--samples"});
  const std::size_t least = measure::min_copy_chunk_bytes(device_sms);
  if (cfg.chunk_bytes < least)
    reject("--chunk-mib",
           fmt::format("{} bytes per chunk are fewer than one 16-byte word per copy thread ({} "
                       "blocks of 256 threads): give at least {} MiB",
                       cfg.chunk_bytes, least / (16 * 256), (least + (1 << 20) - 1) >> 20));
}

report::record adaptive_record(const results &r, const nlohmann::json &environment) {
  using report::cell;
  using report::number_format;
  const number_format count{"", 0}, us{"us", 1}, ratio{"", 3}, gbs{"GB/s", 1};
  const auto number = [](auto v) { return static_cast<double>(v); };
  const auto list = [](const auto &items, auto text) {
    std::string out;
    for (const auto &x : items)
      out += (out.empty() ? "" : ",") + text(x);
    return out;
  };
  const auto decimal = [](unsigned n) { return std::to_string(n); };
  const config &c = r.cfg;
  report::record rec;
  rec.kind = "bench-adaptive";
  rec.title = "greenctx bench adaptive: a memory-bound background shrunk around critical work";
  rec.environment = report::environment_of(environment);
  rec.config = {
      {"critical_sms", "critical SMs", number(c.critical_sms), count},
      {"shrink_to", "narrow background SMs (N)", list(c.shrink_to, decimal), {}},
      {"policies", "policies", list(c.policies, [](policy p) { return std::string(name(p)); }), {}},
      {"lead_us", "lead", number(c.lead.count()), {"us", 0}},
      {"chunk_bytes", "background chunk", number(c.chunk_bytes), {"B", 0}},
      {"queue_depth", "chunks queued at most", number(c.queue_depth), count},
      {"samples", "samples per configuration", number(c.samples), count},
      {"warmup", "warm-up samples", number(c.warmup), count},
      {"rounds", "rounds", number(c.rounds), count},
      {"gap_us", "mean gap between arrivals (+-50%)", number(c.gap.count()), {"us", 0}},
      {"critical_blocks", "critical blocks", number(c.critical_blocks), count},
      {"critical_block_us", "critical block", number(c.critical_block_time.count()), {"us", 0}},
      {"rate_window_ms",
       "background alone measured for",
       number(c.rate_window.count()),
       {"ms", 0}}};

  const auto verdicts = evaluate(r);
  std::string met_by;
  for (const auto &v : verdicts)
    if (v.name != "static" && v.met())
      met_by += (met_by.empty() ? "" : ", ") + v.name;
  rec.values = {
      {"device_sms", "SMs of the GPU", number(r.device_sms), count, true},
      {"critical_sms_obtained", "critical partition", number(r.critical_sms_obtained), {"SMs", 0}},
      {"wide_sms_obtained", "background wide", number(r.wide_sms_obtained), {"SMs", 0}},
      {"narrow_sms_obtained", "background narrow, per N", list(r.narrow_sms_obtained, decimal), {}},
      {"critical_shared",
       "critical partition one green context in every layout",
       report::yes_no(r.critical_shared),
       {},
       true},
      {"critical_sharing", "critical partition across layouts", r.critical_sharing, {}},
      {"isolation_limit",
       "isolation target: critical p99 / p99 alone at most",
       isolation_limit,
       {"", 2}},
      {"background_limit",
       "background target: of the static rate at least",
       background_limit,
       {"", 2}},
      {"targets_met",
       "an adaptive configuration meets both targets",
       report::yes_no(!met_by.empty()),
       {}},
      {"met_by", "met by", met_by.empty() ? cell{} : cell{met_by}, {}, met_by.empty()}};

  std::vector<std::pair<std::string, const critical_stats *>> samples;
  for (const auto &cf : r.configurations)
    samples.emplace_back(cf.name, &cf.critical);
  rec.tables.push_back(bench::samples_table("configuration", samples, false));

  report::series configurations{"configurations",
                                "critical latency from each arrival to its completion seen by the "
                                "host, and the background",
                                {{"name", "name", {}, align::left},
                                 {"description", "configuration", {}, align::left},
                                 {"shrink_to", "N", count},
                                 {"policy", "policy", {}, align::left},
                                 {"host_p50_us", "host p50", us},
                                 {"host_p99_us", "p99", us},
                                 {"gpu_p50_us", "GPU p50", us},
                                 {"wait_p99_us", "wait p99", us},
                                 {"isolation", "isolation", ratio},
                                 {"background_gbs", "background", gbs},
                                 {"of_static", "of static", ratio},
                                 {"met", "targets met", {}, align::left}},
                                {}};
  report::series wait_table{"waits",
                            "host waits for the wide layout's chunks",
                            {{"configuration", "configuration", {}, align::left},
                             {"sample", "sample", count},
                             {"wait_us", "wait", {"us", 3}}},
                            {}};
  wait_table.raw = true;
  report::series background{"background",
                            "the background's rates: bytes read and written over device seconds",
                            {{"measured", "measured", {}, align::left},
                             {"sms", "SMs", count},
                             {"bytes", "bytes", count},
                             {"seconds", "seconds", {"s", 4}},
                             {"rate_gbs", "rate", gbs}},
                            {}};
  background.detail = true;
  for (const auto &a : r.alone)
    background.rows.push_back(
        {std::string("alone"), number(a.sms), a.rate.work, a.rate.seconds, a.rate.rate() / 1e9});
  for (const auto &cf : r.configurations) {
    cell iso, of_static, met;
    for (const auto &v : verdicts)
      if (v.name == cf.name && v.available) {
        iso = v.isolation;
        of_static = v.background_ratio;
        met = std::string(v.met()             ? "yes"
                          : v.isolation_met() ? "NO (background)"
                                              : "NO (isolation)");
      }
    configurations.rows.push_back(
        {cf.name, cf.description, cf.shrink_to ? cell{number(cf.shrink_to)} : cell{},
         cf.policy.empty() ? cell{} : cell{cf.policy}, cf.critical.host.p50, cf.critical.host.p99,
         cf.critical.gpu.p50, cf.wait_us.empty() ? cell{} : cell{summarize(cf.wait_us).p99}, iso,
         cf.background ? cell{cf.background->rate() / 1e9} : cell{}, of_static, met});
    for (std::size_t i = 0; i < cf.wait_us.size(); ++i)
      wait_table.rows.push_back({cf.name, number(i), cf.wait_us[i]});
    if (cf.background)
      background.rows.push_back({cf.name, cell{}, cf.background->work, cf.background->seconds,
                                 cf.background->rate() / 1e9});
  }
  rec.tables.push_back(std::move(configurations));
  rec.tables.push_back(std::move(wait_table));
  rec.tables.push_back(std::move(background));

  rec.notes.push_back(fmt::format(
      "latencies in microseconds from each critical arrival to its completion seen by the host "
      "(waits for wide chunks included); isolation: p99 / p99 alone on the same SMs (target <= "
      "{:.2f}); background: bytes read and written per second, of the static rate (target >= "
      "{:.2f})",
      isolation_limit, background_limit));
  std::string alone;
  for (const auto &a : r.alone)
    alone += fmt::format("{}{:.1f} GB/s on {} SMs", alone.empty() ? "" : "; ", a.rate.rate() / 1e9,
                         a.sms);
  if (!alone.empty())
    rec.notes.push_back("background alone: " + alone);
  rec.notes.push_back(met_by.empty() ? "targets: no adaptive configuration meets both"
                                     : "targets: both met by " + met_by);

  rec.figures.push_back(
      {"Isolation: critical p99 / critical p99 alone",
       "configurations",
       "name",
       {"isolation"},
       "critical p99 / p99 alone",
       {{"isolation_limit", fmt::format("target {:.1f}", isolation_limit), isolation_limit, ratio}},
       std::nullopt,
       true,
       report::figure_style::bars});
  rec.figures.push_back({"Background throughput / static background throughput",
                         "configurations",
                         "name",
                         {"of_static"},
                         "background rate / static rate",
                         {{"background_limit", fmt::format("target {:.1f}", background_limit),
                           background_limit, ratio}},
                         std::nullopt,
                         true,
                         report::figure_style::bars});
  for (auto &f : rec.figures)
    f.verdict = "met"; // each bar coloured by whether its configuration meets both targets
  return rec;
}

} // namespace greenctx::cli::bench::adaptive
