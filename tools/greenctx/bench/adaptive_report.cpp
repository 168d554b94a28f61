// greenctx bench --adaptive: options and reports (pure code); the policies, their schedule and
// the verdicts are the library's (greenctx/measure/adaptive.hpp).
#include "bench/adaptive.hpp"
#include "report/json.hpp"
#include "report/svg.hpp"
#include "report/table.hpp"
#include "sm_list_option.hpp"

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

std::string markdown(const results &r, const nlohmann::json &env) {
  const auto &c = r.cfg;
  std::string s = "## greenctx bench --adaptive: memory-bound background, partition shrunk "
                  "around critical work\n\n";
  s += fmt::format("{} ({} SMs), driver CUDA {}, {}; critical {} SMs, background {} SMs wide; "
                   "{} samples after {} warm-up per configuration in {} rounds; arrivals every "
                   "{} us (+-50%), lead {} us, chunks of {} MiB, queue depth {}\n\n",
                   env.value("gpu", "?"), r.device_sms, env.value("driver_version", "?"),
                   env.value("date", "?"), r.critical_sms_obtained, r.wide_sms_obtained, c.samples,
                   c.warmup, c.rounds, c.gap.count(), c.lead.count(), c.chunk_bytes >> 20,
                   c.queue_depth);
  s += "Critical partition: " + r.critical_sharing + ".\n\n";
  const auto verdicts = evaluate(r);
  std::vector<row> rows;
  for (const auto &cf : r.configurations) {
    const auto us = [](double v) { return fmt::format("{:.1f}", v); };
    std::string bg = "-", iso = "-", ratio = "-", met = "-", wait = "-";
    if (cf.background)
      bg = fmt::format("{:.1f}", cf.background->rate() / 1e9);
    for (const auto &v : verdicts)
      if (v.name == cf.name && v.available) {
        iso = fmt::format("{:.3f}", v.isolation);
        ratio = fmt::format("{:.3f}", v.background_ratio);
        met = v.met() ? "yes" : (v.isolation_met() ? "NO (background)" : "NO (isolation)");
      }
    if (!cf.wait_us.empty())
      wait = fmt::format("{:.1f}", summarize(cf.wait_us).p99);
    rows.push_back({cf.description, us(cf.critical.host.p50), us(cf.critical.host.p99),
                    us(cf.critical.gpu.p50), wait, iso, bg, ratio, met});
  }
  s += markdown_table({{"configuration", align::left},
                       {"host p50"},
                       {"p99"},
                       {"GPU p50"},
                       {"wait p99"},
                       {"isolation"},
                       {"background GB/s"},
                       {"of static"},
                       {"targets met", align::left}},
                      rows);
  s += fmt::format("\nLatencies in microseconds from each critical arrival to its completion "
                   "seen by the host (waits for wide chunks included). Isolation: p99 / p99 "
                   "alone on the same SMs (target <= {:.2f}); background: bytes read and "
                   "written per second, of the static rate (target >= {:.2f}).\n",
                   isolation_limit, background_limit);
  s += "Background alone:";
  for (const auto &a : r.alone)
    s += fmt::format(" {:.1f} GB/s on {} SMs;", a.rate.rate() / 1e9, a.sms);
  s += "\n";
  return s;
}

nlohmann::json to_json(const results &r, const nlohmann::json &env) {
  const auto &c = r.cfg;
  nlohmann::json j;
  j["environment"] = env;
  std::vector<std::string> policies;
  for (policy p : c.policies)
    policies.push_back(name(p));
  j["config"] = {{"mode", "adaptive"},
                 {"critical_sms", c.critical_sms},
                 {"shrink_to", c.shrink_to},
                 {"policies", policies},
                 {"lead_us", c.lead.count()},
                 {"chunk_bytes", c.chunk_bytes},
                 {"queue_depth", c.queue_depth},
                 {"samples", c.samples},
                 {"warmup", c.warmup},
                 {"rounds", c.rounds},
                 {"gap_us", c.gap.count()},
                 {"critical_blocks", c.critical_blocks},
                 {"critical_block_us", c.critical_block_time.count()},
                 {"rate_window_ms", c.rate_window.count()}};
  j["split"] = {{"device_sms", r.device_sms},           {"critical_sms", r.critical_sms_obtained},
                {"wide_sms", r.wide_sms_obtained},      {"narrow_sms", r.narrow_sms_obtained},
                {"critical_shared", r.critical_shared}, {"critical_sharing", r.critical_sharing}};
  const auto rate_json = [](const background_rate &b) {
    return nlohmann::json{{"bytes", b.work}, {"seconds", b.seconds}, {"bytes_per_s", b.rate()}};
  };
  j["background_alone"] = nlohmann::json::array();
  for (const auto &a : r.alone)
    j["background_alone"].push_back({{"sms", a.sms}, {"rate", rate_json(a.rate)}});
  for (const auto &cf : r.configurations) {
    nlohmann::json cj{{"name", cf.name},
                      {"description", cf.description},
                      {"shrink_to", cf.shrink_to},
                      {"policy", cf.policy}};
    cj["critical"] = {
        {"host_us", summary_json(cf.critical.host)},
        {"gpu_us", summary_json(cf.critical.gpu)},
        {"samples", {{"host_us", cf.critical.host_us}, {"gpu_us", cf.critical.gpu_us}}}};
    if (cf.background)
      cj["background"] = rate_json(*cf.background);
    cj["wait_us"] = cf.wait_us;
    j["configurations"].push_back(cj);
  }
  j["targets"] = nlohmann::json::array();
  for (const auto &v : evaluate(r))
    j["targets"].push_back(
        {{"name", v.name},
         {"isolation", v.available ? nlohmann::json(v.isolation) : nlohmann::json()},
         {"isolation_limit", isolation_limit},
         {"background_of_static",
          v.available ? nlohmann::json(v.background_ratio) : nlohmann::json()},
         {"background_limit", background_limit},
         {"met", v.met()}});
  return j;
}

results from_json(const nlohmann::json &j) {
  results r;
  const auto &c = j.at("config");
  (void)c.at("mode"); // only --adaptive writes it: other files are refused (json::out_of_range)
  read_to(c, "critical_sms", r.cfg.critical_sms);
  read_to(c, "shrink_to", r.cfg.shrink_to);
  r.cfg.policies.clear();
  for (const auto &p : c.at("policies"))
    r.cfg.policies.push_back(parse_policies(p.get<std::string>()).front());
  r.cfg.lead = std::chrono::microseconds(whole<long long>(c.at("lead_us")));
  read_to(c, "chunk_bytes", r.cfg.chunk_bytes);
  read_to(c, "queue_depth", r.cfg.queue_depth);
  read_to(c, "samples", r.cfg.samples);
  read_to(c, "warmup", r.cfg.warmup);
  read_to(c, "rounds", r.cfg.rounds);
  r.cfg.gap = std::chrono::microseconds(whole<long long>(c.at("gap_us")));
  read_to(c, "critical_blocks", r.cfg.critical_blocks);
  r.cfg.critical_block_time =
      std::chrono::microseconds(whole<long long>(c.at("critical_block_us")));
  r.cfg.rate_window = std::chrono::milliseconds(whole<long long>(c.at("rate_window_ms")));
  const auto &split = j.at("split");
  read_to(split, "device_sms", r.device_sms);
  read_to(split, "critical_sms", r.critical_sms_obtained);
  read_to(split, "wide_sms", r.wide_sms_obtained);
  read_to(split, "narrow_sms", r.narrow_sms_obtained);
  r.critical_shared = split.at("critical_shared");
  r.critical_sharing = split.at("critical_sharing");
  const auto rate = [](const nlohmann::json &x) {
    return background_rate{x.at("bytes").get<double>(), x.at("seconds").get<double>()};
  };
  for (const auto &a : j.at("background_alone"))
    r.alone.push_back({whole<unsigned>(a.at("sms")), rate(a.at("rate"))});
  for (const auto &cj : j.at("configurations")) {
    configuration cf{cj.at("name"),
                     cj.at("description"),
                     whole<unsigned>(cj.at("shrink_to")),
                     cj.at("policy"),
                     {},
                     std::nullopt,
                     {}};
    const auto &samples = cj.at("critical").at("samples");
    cf.critical.host_us = samples.at("host_us").get<std::vector<double>>();
    cf.critical.gpu_us = samples.at("gpu_us").get<std::vector<double>>();
    cf.critical.host = summarize(cf.critical.host_us);
    cf.critical.gpu = summarize(cf.critical.gpu_us);
    if (cj.contains("background"))
      cf.background = rate(cj.at("background"));
    cf.wait_us = cj.at("wait_us").get<std::vector<double>>();
    r.configurations.push_back(std::move(cf));
  }
  return r;
}

std::string to_csv(const results &r) {
  std::string s = csv_line({"configuration", "sample", "host_us", "gpu_us"});
  for (const auto &cf : r.configurations)
    for (std::size_t i = 0; i < cf.critical.host_us.size(); ++i)
      s += csv_line(
          {cf.name, std::to_string(i), fmt::format("{:.3f}", cf.critical.host_us[i]),
           i < cf.critical.gpu_us.size() ? fmt::format("{:.3f}", cf.critical.gpu_us[i]) : ""});
  return s;
}

std::string to_svg(const results &r, const nlohmann::json &env) {
  const auto verdicts = evaluate(r);
  std::size_t longest = 0;
  for (const auto &v : verdicts)
    longest = std::max(longest, v.name.size());
  const double left = std::max(220.0, 40 + 6.9 * static_cast<double>(longest));
  const double right = 60, row = 26, top = 116, width = left + 560, plot_w = width - left - right;
  const std::size_t n = verdicts.size();
  const double panel2_top = top + row * n + 80, height = panel2_top + row * n + 50;
  svg::document doc(width, height);
  doc.heading(fmt::format("Adaptive background partition: {} ({} SMs), critical {} SMs, "
                          "memory-bound background {} SMs wide",
                          env.value("gpu", "?"), r.device_sms, r.critical_sms_obtained,
                          r.wide_sms_obtained),
              {fmt::format("isolation: critical p99 / p99 alone (target <= {:.1f}); background: "
                           "rate / static rate (target >= {:.1f})",
                           isolation_limit, background_limit),
               fmt::format("{} samples per configuration; driver CUDA {}; {}", r.cfg.samples,
                           env.value("driver_version", "?"), env.value("date", "?"))});
  double iso_hi = 2 * isolation_limit;
  for (const auto &v : verdicts)
    iso_hi = std::max(iso_hi, v.isolation);
  const auto panel = [&](double y0, double hi, double limit, bool at_most, auto value) {
    const auto x = [&](double f) { return left + plot_w * std::clamp(f, 0.0, hi) / hi; };
    doc.line(x(limit), x(limit), y0 - 6, y0 + row * n, {"#c0392b", 1, "4 3"});
    const double step = nice_step(hi, 5);
    for (double f = 0; f <= hi + 1e-9; f += step)
      doc.text(x(f), y0 + row * n + 16, fmt::format("{:g}", f), {"#555", "middle"});
    for (std::size_t i = 0; i < n; ++i) {
      const auto &v = verdicts[i];
      const double y = y0 + row * i + row / 2;
      doc.text(left - 10, y + 4, v.name, {{}, "end"});
      if (!v.available) {
        doc.text(left, y + 4, "n/a", {"#888"});
        continue;
      }
      const double f = value(v);
      const bool ok = at_most ? f <= limit : f >= limit;
      const char *color = ok ? "#27ae60" : "#c0392b";
      doc.rect(left, y - 7, std::max(1.0, x(f) - left), 14, color, 0.6);
      doc.text(std::min(x(f) + 6, width - right), y + 4, fmt::format("{:.3f}", f), {{}, {}, 11});
    }
  };
  doc.panel_title(top - 24, "Isolation: critical p99 / critical p99 alone");
  panel(top, iso_hi, isolation_limit, true, [](const verdict &v) { return v.isolation; });
  doc.panel_title(panel2_top - 24, "Background throughput / static background throughput");
  panel(panel2_top, 1.2, background_limit, false,
        [](const verdict &v) { return v.background_ratio; });
  return doc.finish();
}

} // namespace greenctx::cli::bench::adaptive
