// The SVG plot of `greenctx bench`: the critical latency distribution per placement (log scale)
// and the background's throughput.
#include "bench/report.hpp"
#include "report/svg.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace greenctx::cli::bench {

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
  svg::document doc(width, height);
  doc.heading(fmt::format("Critical {} latency under a {} background: {} ({} SMs), split {} + {}",
                          name(r.cfg.critical), name(r.cfg.background), env.value("gpu", "?"),
                          r.device_sms, r.critical_sms_obtained, r.background_sms_obtained),
              {"launch to completion on the host, microseconds, log scale; thin line min..max, "
               "box p50..p99, mark p90",
               fmt::format("{} samples per placement; driver CUDA {}; {}", r.cfg.samples,
                           env.value("driver_version", "?"), env.value("date", "?"))});
  for (double decade = log_lo; decade <= log_hi; ++decade)
    for (int m : {1, 2, 5}) {
      if (m != 1 && log_hi - log_lo > 3)
        continue; // wide ranges: decades only, so that labels do not collide
      const double v = m * std::pow(10.0, decade);
      if (std::log10(v) > log_hi + 1e-9)
        continue;
      doc.x_tick(x(v), top - 6, top + panel1_h, top + panel1_h + 16, fmt::format("{:g}", v),
                 "#ddd");
    }
  for (std::size_t i = 0; i < n; ++i) {
    const auto &p = r.placements[i];
    const auto &h = p.critical->host;
    const double y = top + row * i + row / 2;
    const char *color =
        p.trap ? "#c0392b" : (p.name.rfind("green", 0) == 0 ? "#27ae60" : "#2c3e50");
    doc.text(left - 10, y + 4, p.description, {color, "end"});
    doc.line(x(h.min), x(h.max), y, y, {color});
    doc.rect(x(h.p50), y - 7, std::max(1.0, x(h.p99) - x(h.p50)), 14, color, 0.35, color);
    doc.line(x(h.p90), x(h.p90), y - 7, y + 7, {color, 2});
    doc.text(std::min(x(h.max) + 6, width - right - 40), y + 4, fmt::format("p99 {:.0f}", h.p99),
             {"#333", {}, 11});
  }
  // Panel 2: background throughput as a fraction of its full-GPU rate.
  doc.panel_title(panel2_top - 24, fmt::format("Background throughput, fraction of its rate alone "
                                               "on all SMs (dashed: SM share {:.3f})",
                                               sm_share(r)));
  const auto bx = [&](double f) { return left + plot_w * std::clamp(f, 0.0, 1.2) / 1.2; };
  doc.line(bx(sm_share(r)), bx(sm_share(r)), panel2_top - 6, panel2_top + row * n,
           {"#888", 0, "4 3"});
  for (double f : {0.0, 0.25, 0.5, 0.75, 1.0})
    doc.text(bx(f), panel2_top + row * n + 16, fmt::format("{:g}", f), {"#555", "middle"});
  for (std::size_t i = 0; i < n; ++i) {
    const auto &p = r.placements[i];
    const double y = panel2_top + row * i + row / 2;
    doc.text(left - 10, y + 4, p.description, {{}, "end"});
    if (!p.background) {
      doc.text(left, y + 4, "no background", {"#888"});
      continue;
    }
    const double f = of_full(r, *p.background);
    doc.rect(left, y - 7, bx(f) - left, 14, "#2980b9", 0.6);
    doc.text(bx(f) + 6, y + 4, fmt::format("{:.3f}", f), {{}, {}, 11});
  }
  return doc.finish();
}

} // namespace greenctx::cli::bench
