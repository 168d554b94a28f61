#include "report.hpp"
#include "../report_text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace greenctx::bench {
namespace {

using cli::summary_json;
using cli::xml_escape;

const placement_result *find(const results &r, const std::string &name) {
  for (const auto &p : r.placements)
    if (p.name == name)
      return &p;
  return nullptr;
}

double share(const results &r) {
  return static_cast<double>(r.background_sms_obtained) / r.device_sms;
}

// Background rate as a fraction of the full-GPU rate.
double of_full(const results &r, const background_rate &b) {
  return r.background_full.rate() > 0 ? b.rate() / r.background_full.rate() : 0;
}

} // namespace

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
    bg.value = of_full(r, *green->background) / share(r);
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
  s += "| placement | host p50 | p90 | p99 | max | noise | GPU p50 | start delay p50 / p99 | "
       "background rate | of full GPU | of SM share |\n";
  s += "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
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
      sm = fmt::format("{:.3f}", of_full(r, *p.background) / share(r));
    }
    s += fmt::format("| {}{} | {:.1f} | {:.1f} | {:.1f} | {:.1f} | {:.1f}% | {:.1f} | {} | {} | {} "
                     "| {} |\n",
                     p.trap ? "**" : "", p.description + (p.trap ? "**" : ""), c.host.p50,
                     c.host.p90, c.host.p99, c.host.max, 100 * c.host.noise, c.gpu.p50, delay, bg,
                     full, sm);
  }
  s += fmt::format("\nLatencies in microseconds. Background alone: {:.4g} {} on all {} SMs, "
                   "{:.4g} {} on its {} SMs ({:.3f} of full, SM share {:.3f}).\n",
                   r.background_full.rate() / r.background_unit_scale, r.background_unit,
                   r.device_sms, r.background_share.rate() / r.background_unit_scale,
                   r.background_unit, r.background_sms_obtained, of_full(r, r.background_share),
                   share(r));
  s += "Wave quantization: " + r.quantization + ".\n\n";
  s += "| target | rule | value | limit | met |\n|---|---|---:|---:|---|\n";
  for (const auto &t : evaluate_targets(r))
    s += fmt::format("| {} | {} | {} | {} {:.2f} | {} |\n", t.name, t.rule,
                     t.available ? fmt::format("{:.3f}", t.value) : "n/a",
                     t.at_most ? "<=" : ">=", t.limit,
                     t.available ? (t.met() ? "yes" : "NO") : "n/a");
  return s;
}

nlohmann::json to_json(const results &r, const nlohmann::json &env) {
  nlohmann::json j;
  j["environment"] = env;
  const auto &c = r.cfg;
  j["config"] = {{"background", name(c.background)},
                 {"critical", name(c.critical)},
                 {"critical_sms", c.critical_sms},
                 {"samples", c.samples},
                 {"warmup", c.warmup},
                 {"rounds", c.rounds},
                 {"gap_us", c.gap.count()},
                 {"critical_blocks", c.critical_blocks},
                 {"critical_block_us", c.critical_block_time.count()},
                 {"critical_gemm_n", c.critical_gemm_n},
                 {"background_block_us", c.background_block_time.count()},
                 {"background_waves", c.background_waves},
                 {"memory_bytes", c.memory_bytes},
                 {"gemm_n", c.gemm_n},
                 {"rate_window_ms", c.rate_window.count()}};
  j["split"] = {{"device_sms", r.device_sms},
                {"critical_sms", r.critical_sms_obtained},
                {"background_sms", r.background_sms_obtained}};
  const auto rate_json = [&](const background_rate &b) {
    return nlohmann::json{
        {"work", b.work},           {"seconds", b.seconds},
        {"rate", b.rate()},         {"rate_display", b.rate() / r.background_unit_scale},
        {"of_full", of_full(r, b)}, {"of_sm_share", of_full(r, b) / share(r)}};
  };
  j["background"] = {{"unit", r.background_unit},
                     {"unit_scale", r.background_unit_scale},
                     {"alone_full", rate_json(r.background_full)},
                     {"alone_share", rate_json(r.background_share)},
                     {"sm_share", share(r)},
                     {"quantization", r.quantization}};
  for (const auto &p : r.placements) {
    nlohmann::json pj{{"name", p.name}, {"description", p.description}, {"trap", p.trap}};
    pj["critical"] = {{"host_us", summary_json(p.critical->host)},
                      {"gpu_us", summary_json(p.critical->gpu)},
                      {"start_delay_us", summary_json(p.critical->start_delay)},
                      {"samples",
                       {{"host_us", p.critical->host_us},
                        {"gpu_us", p.critical->gpu_us},
                        {"start_delay_us", p.critical->start_delay_us}}}};
    if (p.background)
      pj["background"] = rate_json(*p.background);
    j["placements"].push_back(pj);
  }
  for (const auto &t : evaluate_targets(r))
    j["targets"].push_back({{"name", t.name},
                            {"rule", t.rule},
                            {"value", t.available ? nlohmann::json(t.value) : nlohmann::json()},
                            {"limit", t.limit},
                            {"at_most", t.at_most},
                            {"met", t.met()}});
  return j;
}

results from_json(const nlohmann::json &j) {
  results r;
  const auto &c = j.at("config");
  const std::string bg = c.at("background"), crit = c.at("critical");
  r.cfg.background = bg == "memory" ? background_kind::memory
                     : bg == "gemm" ? background_kind::gemm
                                    : background_kind::spin;
  r.cfg.critical = crit == "gemm" ? critical_kind::gemm : critical_kind::kernel;
  r.cfg.critical_sms = c.at("critical_sms");
  r.cfg.samples = c.at("samples");
  r.cfg.warmup = c.at("warmup");
  r.cfg.rounds = c.value("rounds", 1u); // runs saved before rounds existed took one
  r.cfg.gap = std::chrono::microseconds(c.at("gap_us").get<long long>());
  r.cfg.critical_blocks = c.at("critical_blocks");
  r.cfg.critical_block_time = std::chrono::microseconds(c.at("critical_block_us").get<long long>());
  r.cfg.critical_gemm_n = c.at("critical_gemm_n");
  r.cfg.background_block_time =
      std::chrono::microseconds(c.at("background_block_us").get<long long>());
  r.cfg.background_waves = c.at("background_waves");
  r.cfg.memory_bytes = c.at("memory_bytes");
  r.cfg.gemm_n = c.at("gemm_n");
  r.cfg.rate_window = std::chrono::milliseconds(c.at("rate_window_ms").get<long long>());
  const auto &split = j.at("split");
  r.device_sms = split.at("device_sms");
  r.critical_sms_obtained = split.at("critical_sms");
  r.background_sms_obtained = split.at("background_sms");
  const auto &b = j.at("background");
  r.background_unit = b.at("unit");
  r.background_unit_scale = b.at("unit_scale");
  r.quantization = b.at("quantization");
  const auto rate = [](const nlohmann::json &x) {
    return background_rate{x.at("work").get<double>(), x.at("seconds").get<double>()};
  };
  r.background_full = rate(b.at("alone_full"));
  r.background_share = rate(b.at("alone_share"));
  for (const auto &p : j.at("placements")) {
    placement_result pr{p.at("name"), p.at("description"), p.at("trap"), critical_stats{},
                        std::nullopt};
    const auto &samples = p.at("critical").at("samples");
    auto &cs = *pr.critical;
    cs.host_us = samples.at("host_us").get<std::vector<double>>();
    cs.gpu_us = samples.at("gpu_us").get<std::vector<double>>();
    cs.start_delay_us = samples.at("start_delay_us").get<std::vector<double>>();
    cs.host = cli::summarize(cs.host_us);
    cs.gpu = cli::summarize(cs.gpu_us);
    cs.start_delay = cli::summarize(cs.start_delay_us);
    if (p.contains("background"))
      pr.background = rate(p.at("background"));
    r.placements.push_back(std::move(pr));
  }
  return r;
}

std::string to_csv(const results &r) {
  std::string s = "placement,sample,host_us,gpu_us,start_delay_us\n";
  for (const auto &p : r.placements) {
    const auto &c = *p.critical;
    for (std::size_t i = 0; i < c.host_us.size(); ++i)
      s += fmt::format("{},{},{:.3f},{:.3f},{}\n", p.name, i, c.host_us[i], c.gpu_us[i],
                       i < c.start_delay_us.size() ? fmt::format("{:.3f}", c.start_delay_us[i])
                                                   : "");
  }
  return s;
}

std::string to_svg(const results &r, const nlohmann::json &env) {
  std::size_t longest = 0;
  for (const auto &p : r.placements)
    longest = std::max(longest, p.description.size());
  // Room for the longest label at about 6.9 px a character (13 px sans-serif).
  const double left = std::max(300.0, 40 + 6.9 * static_cast<double>(longest));
  const double right = 60, row = 34, top = 86, width = left + 580;
  const double plot_w = width - left - right;
  const std::size_t n = r.placements.size();
  double lo = 1e9, hi = 0;
  for (const auto &p : r.placements) {
    lo = std::min(lo, p.critical->host.min);
    hi = std::max(hi, p.critical->host.max);
  }
  const double log_lo = std::floor(std::log10(std::max(lo, 1e-3))),
               log_hi = std::ceil(std::log10(std::max(hi, lo * 10)));
  const auto x = [&](double us) {
    return left + plot_w * (std::log10(std::max(us, 1e-3)) - log_lo) / (log_hi - log_lo);
  };
  const double panel1_h = row * n, panel2_top = top + panel1_h + 90;
  const double height = panel2_top + row * n + 60;
  std::string s = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} "
      "{1}\" font-family=\"sans-serif\" font-size=\"13\">\n<rect width=\"100%\" height=\"100%\" "
      "fill=\"white\"/>\n",
      width, height);
  s += fmt::format("<text x=\"20\" y=\"28\" font-size=\"17\" font-weight=\"bold\">Critical "
                   "{} latency under a {} background: {} ({} SMs), split {} + {}</text>\n",
                   name(r.cfg.critical), name(r.cfg.background), xml_escape(env.value("gpu", "?")),
                   r.device_sms, r.critical_sms_obtained, r.background_sms_obtained);
  s += fmt::format("<text x=\"20\" y=\"50\" fill=\"#555\">launch to completion on the host, "
                   "microseconds, log scale; thin line min..max, box p50..p99, mark p90</text>\n"
                   "<text x=\"20\" y=\"68\" fill=\"#555\">{} samples per placement; driver "
                   "CUDA {}; {}</text>\n",
                   r.cfg.samples, xml_escape(env.value("driver_version", "?")),
                   xml_escape(env.value("date", "?")));
  for (double decade = log_lo; decade <= log_hi; ++decade)
    for (int m : {1, 2, 5}) {
      if (m != 1 && log_hi - log_lo > 3)
        continue; // wide ranges: decades only, so that labels do not collide
      const double v = m * std::pow(10.0, decade);
      if (std::log10(v) > log_hi + 1e-9)
        continue;
      s += fmt::format("<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1}\" y2=\"{2}\" "
                       "stroke=\"#ddd\"/>\n<text x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\" "
                       "fill=\"#555\">{4:g}</text>\n",
                       x(v), top - 6, top + panel1_h, top + panel1_h + 16, v);
    }
  for (std::size_t i = 0; i < n; ++i) {
    const auto &p = r.placements[i];
    const auto &h = p.critical->host;
    const double y = top + row * i + row / 2;
    const char *color =
        p.trap ? "#c0392b" : (p.name.rfind("green", 0) == 0 ? "#27ae60" : "#2c3e50");
    s += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\" fill=\"{}\">{}</text>\n",
                     left - 10, y + 4, color, xml_escape(p.description));
    s += fmt::format(
        "<line x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\"/>\n", x(h.min),
        x(h.max), y, y, color);
    s += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"14\" fill=\"{}\" "
                     "fill-opacity=\"0.35\" stroke=\"{}\"/>\n",
                     x(h.p50), y - 7, std::max(1.0, x(h.p99) - x(h.p50)), color, color);
    s += fmt::format("<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1:.1f}\" y2=\"{2:.1f}\" "
                     "stroke=\"{3}\" stroke-width=\"2\"/>\n",
                     x(h.p90), y - 7, y + 7, color);
    s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" fill=\"#333\" font-size=\"11\">p99 "
                     "{:.0f}</text>\n",
                     std::min(x(h.max) + 6, width - right - 40), y + 4, h.p99);
  }
  // Panel 2: background throughput as a fraction of its full-GPU rate.
  s += fmt::format("<text x=\"20\" y=\"{:.1f}\" font-size=\"15\" font-weight=\"bold\">Background "
                   "throughput, fraction of its rate alone on all SMs (dashed: SM share "
                   "{:.3f})</text>\n",
                   panel2_top - 24, share(r));
  const auto bx = [&](double f) { return left + plot_w * std::clamp(f, 0.0, 1.2) / 1.2; };
  s += fmt::format("<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1:.1f}\" y2=\"{2:.1f}\" "
                   "stroke=\"#888\" stroke-dasharray=\"4 3\"/>\n",
                   bx(share(r)), panel2_top - 6, panel2_top + row * n);
  for (double f : {0.0, 0.25, 0.5, 0.75, 1.0})
    s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" fill=\"#555\">{:g}"
                     "</text>\n",
                     bx(f), panel2_top + row * n + 16, f);
  for (std::size_t i = 0; i < n; ++i) {
    const auto &p = r.placements[i];
    const double y = panel2_top + row * i + row / 2;
    s += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n", left - 10,
                     y + 4, xml_escape(p.description));
    if (!p.background) {
      s += fmt::format("<text x=\"{}\" y=\"{:.1f}\" fill=\"#888\">no background</text>\n", left,
                       y + 4);
      continue;
    }
    const double f = of_full(r, *p.background);
    s += fmt::format("<rect x=\"{}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"14\" fill=\"#2980b9\" "
                     "fill-opacity=\"0.6\"/>\n<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\">"
                     "{:.3f}</text>\n",
                     left, y - 7, bx(f) - left, bx(f) + 6, y + 4, f);
  }
  s += "</svg>\n";
  return s;
}

} // namespace greenctx::bench
