#include "bench/report.hpp"

#include "report/table.hpp"

#include <fmt/format.h>

namespace greenctx::cli::bench {
namespace {

const placement_result *find(const results &r, const std::string &name) {
  for (const auto &p : r.placements)
    if (p.name == name)
      return &p;
  return nullptr;
}

} // namespace

double sm_share(const results &r) {
  return static_cast<double>(r.background_sms_obtained) / r.device_sms;
}

double of_full(const results &r, const background_rate &b) {
  return r.background_full.rate() > 0 ? b.rate() / r.background_full.rate() : 0;
}

std::vector<target> evaluate_targets(const results &r) {
  std::vector<target> t;
  const auto *alone_green = find(r, "alone_green"), *green = find(r, "green"),
             *priority = find(r, "priority");
  target iso{"isolation",
             "critical p99, background in the complementary green context / "
             "critical p99 alone in the same green context",
             0,
             1.05,
             true,
             false};
  if (green && alone_green && alone_green->critical->host.p99 > 0) {
    iso.value = green->critical->host.p99 / alone_green->critical->host.p99;
    iso.available = true;
  }
  t.push_back(iso);
  target prio{"green_vs_priority",
              "critical p99 with a high-priority stream / critical p99 with "
              "green contexts",
              0,
              3.0,
              false,
              false};
  if (green && priority && green->critical->host.p99 > 0) {
    prio.value = priority->critical->host.p99 / green->critical->host.p99;
    prio.available = true;
  }
  t.push_back(prio);
  target bg{"background_share",
            "background rate in the green placement / (full-GPU rate x its "
            "SM share)",
            0,
            0.95,
            false,
            false};
  if (green && green->background && r.background_full.rate() > 0) {
    bg.value = of_full(r, *green->background) / sm_share(r);
    bg.available = true;
  }
  t.push_back(bg);
  return t;
}

std::string markdown(const results &r, const nlohmann::json &env) {
  std::string s;
  s += fmt::format("## greenctx bench: {} critical, {} background\n\n", name(r.cfg.critical),
                   name(r.cfg.background));
  s += fmt::format("{} ({} SMs), driver CUDA {}, {}; split {} + {} SMs; {} samples after {} "
                   "warm-up per placement, taken in {} round{} over all placements\n\n",
                   env.value("gpu", "?"), r.device_sms, env.value("driver_version", "?"),
                   env.value("date", "?"), r.critical_sms_obtained, r.background_sms_obtained,
                   r.cfg.samples, r.cfg.warmup, r.cfg.rounds, r.cfg.rounds == 1 ? "" : "s");
  const std::vector<column> columns = {{"placement", align::left},
                                       {"host p50"},
                                       {"p90"},
                                       {"p99"},
                                       {"max"},
                                       {"noise"},
                                       {"GPU p50"},
                                       {"start delay p50 / p99"},
                                       {"background rate"},
                                       {"of full GPU"},
                                       {"of SM share"}};
  std::vector<row> rows;
  for (const auto &p : r.placements) {
    const auto &c = *p.critical;
    std::string delay = c.start_delay.count
                            ? fmt::format("{:.1f} / {:.1f}", c.start_delay.p50, c.start_delay.p99)
                            : "-";
    std::string bg = "-", full = "-", sm = "-";
    if (p.background) {
      bg = fmt::format("{:.4g} {}", p.background->rate() / r.background_unit_scale,
                       r.background_unit);
      full = fmt::format("{:.3f}", of_full(r, *p.background));
      sm = fmt::format("{:.3f}", of_full(r, *p.background) / sm_share(r));
    }
    const auto us = [](double v) { return fmt::format("{:.1f}", v); };
    rows.push_back({p.trap ? "**" + p.description + "**" : p.description, us(c.host.p50),
                    us(c.host.p90), us(c.host.p99), us(c.host.max),
                    fmt::format("{:.1f}%", 100 * c.host.noise), us(c.gpu.p50), delay, bg, full,
                    sm});
  }
  s += markdown_table(columns, rows);
  s += fmt::format("\nLatencies in microseconds. Background alone: {:.4g} {} on all {} SMs, "
                   "{:.4g} {} on its {} SMs ({:.3f} of full, SM share {:.3f}).\n",
                   r.background_full.rate() / r.background_unit_scale, r.background_unit,
                   r.device_sms, r.background_share.rate() / r.background_unit_scale,
                   r.background_unit, r.background_sms_obtained, of_full(r, r.background_share),
                   sm_share(r));
  s += "Wave quantization: " + r.quantization + ".\n\n";
  std::vector<row> target_rows;
  for (const auto &t : evaluate_targets(r))
    target_rows.push_back({t.name, t.rule, t.available ? fmt::format("{:.3f}", t.value) : "n/a",
                           fmt::format("{} {:.2f}", t.at_most ? "<=" : ">=", t.limit),
                           t.available ? (t.met() ? "yes" : "NO") : "n/a"});
  s += markdown_table(
      {{"target", align::left}, {"rule", align::left}, {"value"}, {"limit"}, {"met", align::left}},
      target_rows);
  return s;
}

std::string to_csv(const results &r) {
  std::string s = csv_line({"placement", "sample", "host_us", "gpu_us", "start_delay_us"});
  for (const auto &p : r.placements) {
    const auto &c = *p.critical;
    for (std::size_t i = 0; i < c.host_us.size(); ++i)
      s +=
          csv_line({p.name, std::to_string(i), fmt::format("{:.3f}", c.host_us[i]),
                    fmt::format("{:.3f}", c.gpu_us[i]),
                    i < c.start_delay_us.size() ? fmt::format("{:.3f}", c.start_delay_us[i]) : ""});
  }
  return s;
}

} // namespace greenctx::cli::bench
