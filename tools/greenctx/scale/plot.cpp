// The SVG plot of `greenctx scale`: the median figure against SM count, and the speed-up.
#include "report/svg.hpp"
#include "scale/report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace greenctx::cli::scale {

namespace {

// Characters of a line of `font_px` text that fit in `width_px`: the average advance of sans-serif
// text is about 0.55 em (0.6 em bold); command lines are mostly narrow lower-case letters, so
// this errs on the side of cutting.
std::size_t fitting_chars(double width_px, double font_px, bool bold) {
  return static_cast<std::size_t>(width_px / (font_px * (bold ? 0.6 : 0.55)));
}

} // namespace

std::string to_svg(const results &r, const nlohmann::json &env) {
  const auto sums = summarize(r);
  const figure_unit unit = unit_for(r.measure, largest_figure(sums));
  const double width = 820, left = 90, right = 190, plot_w = width - left - right;
  const std::string warning = startup_warning(r, sums);
  const double top1 = 118, h1 = 300, top2 = top1 + h1 + 90, h2 = 240;
  const double height = top2 + h2 + (warning.empty() ? 60 : 84);
  const double x_max = std::max(1u, r.device_sms);
  const auto x = [&](double sms) { return left + plot_w * sms / x_max; };
  const svg::text_style orange{"#e67e22"};
  const svg::stroke_style orange_dashed{"#e67e22", 0, "6 4"};

  // The heading's text starts 20 px in (svg::document::heading), at 17 px bold and 13 px.
  const double text_w = width - 40;
  const auto fit = [&](const std::string &text) {
    return elide(text, fitting_chars(text_w, 13, false));
  };
  svg::document doc(width, height);
  doc.heading(
      elide("greenctx scale: " + program_text(r.program), fitting_chars(text_w, 17, true)),
      {fit(fmt::format("{} ({} SMs), driver CUDA {}, {}", env.value("gpu", "?"), r.device_sms,
                       env.value("driver_version", "?"), env.value("date", "?"))),
       fit(fmt::format("{}, {}, {} is better; median of {} run{}, whiskers min..max",
                       r.measure.description(), unit.name,
                       r.measure.direction == better::lower ? "lower" : "higher", r.repeat,
                       r.repeat == 1 ? "" : "s"))});
  doc.text(20, 86, fit(sm_count_note(r)), {"#555"}); // a third line under the heading's two

  // The SM axis, under both panels.
  const double x_step = nice_step(x_max, 8);
  const auto sm_axis = [&](double top, double h) {
    for (double v = 0; v <= x_max + 1e-9; v += x_step)
      doc.x_tick(x(v), top, top + h, top + h + 16, fmt::format("{:g}", v));
    if (std::fmod(x_max, x_step) > x_step / 4) // the device's SM count, unless next to a tick
      doc.text(x(x_max), top + h + 16, fmt::format("{:g}", x_max), {"#555", "middle"});
    doc.line(left, left + plot_w, top + h, top + h, {"#888"});
    doc.text(left + plot_w / 2, top + h + 34, "SMs", {"#333", "middle"});
  };

  // Panel 1: the median figure.
  const double t_max = largest_figure(sums);
  if (t_max <= 0) {
    doc.text(left, top1 + 20, "no run succeeded: nothing to plot", {"#c0392b"});
    return doc.finish();
  }
  const double t_step = nice_step(t_max * unit.per_figure, 5);
  const double t_top = std::ceil(t_max * unit.per_figure * 1.05 / t_step) * t_step;
  const auto yt = [&](double figure) { return top1 + h1 * (1 - figure * unit.per_figure / t_top); };
  doc.panel_title(top1 - 12, elide(fmt::format("Median {} ({})", r.measure.short_name(), unit.name),
                                   fitting_chars(text_w, 15, true)));
  for (double v = 0; v <= t_top + 1e-9; v += t_step)
    doc.y_tick(left, left + plot_w, yt(v / unit.per_figure), fmt::format("{:g}", v));
  sm_axis(top1, h1);
  const point *base = baseline_point(r);
  const std::size_t base_index = base ? static_cast<std::size_t>(base - r.points.data()) : 0;
  if (base && sums[base_index].figure.count) {
    const auto &b = sums[base_index].figure;
    doc.rect(left, yt(b.max), plot_w, std::max(1.0, yt(b.min) - yt(b.max)), "#e67e22", 0.12);
    doc.line(left, left + plot_w, yt(b.p50), yt(b.p50), orange_dashed);
    doc.text(left + plot_w + 8, yt(b.p50) + 4,
             fmt::format("unconfined: {} {}", unit(b.p50), unit.name), orange);
  }
  std::vector<std::pair<double, double>> medians;
  for (std::size_t i = 0; i < r.points.size(); ++i) {
    const auto &t = sums[i].figure;
    if (r.points[i].baseline || t.count == 0)
      continue;
    const double px = x(r.points[i].sms);
    medians.emplace_back(px, yt(t.p50));
    doc.line(px, px, yt(t.min), yt(t.max), {"#2c3e50"}); // whisker with caps
    doc.line(px - 3, px + 3, yt(t.min), yt(t.min), {"#2c3e50"});
    doc.line(px - 3, px + 3, yt(t.max), yt(t.max), {"#2c3e50"});
  }
  doc.series(medians, "#2980b9");

  // Panel 2: speed-up against the smallest count, with the ideal (linear in SMs).
  const point *smallest = smallest_confined(r);
  double s_max = 1;
  for (const auto &p : sums)
    if (p.vs_smallest)
      s_max = std::max(s_max, *p.vs_smallest);
  const double s_step = nice_step(s_max * 1.15, 5);
  const double s_top = std::ceil(s_max * 1.15 / s_step) * s_step;
  const auto ys = [&](double v) { return top2 + h2 * (1 - v / s_top); };
  doc.panel_title(top2 - 12, fmt::format("Speed-up against {} (dashed grey: linear in SMs)",
                                         smallest ? fmt::format("{} SMs", smallest->sms)
                                                  : std::string("the fewest SMs")));
  for (double v = 0; v <= s_top + 1e-9; v += s_step)
    doc.y_tick(left, left + plot_w, ys(v), fmt::format("{:g}", v));
  sm_axis(top2, h2);
  if (smallest && smallest->sms > 0) {
    const double n0 = smallest->sms;
    const double end = std::min(x_max, n0 * s_top); // the ideal line leaves the panel there
    doc.line(x(n0), x(end), ys(1), ys(end / n0), {"#999", 0, "4 3"});
  }
  if (base && sums[base_index].vs_smallest) {
    const double v = *sums[base_index].vs_smallest;
    doc.line(left, left + plot_w, ys(v), ys(v), orange_dashed);
    doc.text(left + plot_w + 8, ys(v) + 4, fmt::format("unconfined: {:.2f}x", v), orange);
  }
  std::vector<std::pair<double, double>> speedups;
  for (std::size_t i = 0; i < r.points.size(); ++i)
    if (!r.points[i].baseline && sums[i].vs_smallest)
      speedups.emplace_back(x(r.points[i].sms), ys(*sums[i].vs_smallest));
  doc.series(speedups, "#27ae60");
  if (!warning.empty())
    doc.text(20, height - 32, fit("warning: " + warning), {"#e67e22"});
  if (!r.complete())
    doc.text(20, height - 14, fit("FAILED: " + r.failure), {"#c0392b"});
  return doc.finish();
}

} // namespace greenctx::cli::scale
