// The record's SVG: one line chart per figure, stacked under the title and the environment.
#include "report/record.hpp"
#include "report/svg.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace greenctx::cli::report {
namespace {

constexpr const char *palette[] = {"#2c3e50", "#c0392b", "#2980b9",
                                   "#27ae60", "#8e44ad", "#d35400"};
constexpr double width = 820, left = 90, right = 200, panel_h = 240, panel_gap = 100;
constexpr std::size_t line_chars =
    108; // of the heading's 13 px text across the width (0.55 em each)
constexpr std::size_t title_chars = 76; // of its 17 px bold title

constexpr std::size_t panel_title_chars = 86; // of a panel's 15 px bold title (0.6 em each)

using points = std::vector<std::pair<double, double>>;

// `text` cut to at most `chars` characters (UTF-8 code points), ending in an ellipsis when cut.
std::string fitted(const std::string &text, std::size_t chars) {
  const auto starts_char = [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; };
  std::size_t seen = 0, keep = 0; // keep: the bytes of the first chars - 1 characters
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (!starts_char(text[i]))
      continue;
    if (seen + 1 == chars)
      keep = i;
    if (++seen > chars)
      return text.substr(0, keep) + "\u2026";
  }
  return text;
}

// `text` in lines of at most `chars`, broken after ", " or at a space where it can be.
void wrap(const std::string &text, std::vector<std::string> &out, std::size_t chars = line_chars) {
  std::size_t at = 0;
  while (text.size() - at > chars) {
    std::size_t cut = text.rfind(", ", at + chars);
    if (cut == std::string::npos || cut <= at)
      cut = text.rfind(' ', at + chars);
    if (cut == std::string::npos || cut <= at)
      cut = at + chars;
    out.push_back(text.substr(at, cut - at + (text.compare(cut, 2, ", ") == 0 ? 1 : 0)));
    at = cut + (text.compare(cut, 2, ", ") == 0 ? 2 : text[cut] == ' ' ? 1 : 0);
  }
  out.push_back(text.substr(at));
}

// The rows of `s` where both x and y are numbers, by x.
points numbers_of(const series &s, std::size_t x, std::size_t y) {
  points out;
  for (const auto &r : s.rows) {
    const auto *vx = std::get_if<double>(&r.at(x));
    const auto *vy = std::get_if<double>(&r.at(y));
    if (vx && vy && std::isfinite(*vx) && std::isfinite(*vy))
      out.emplace_back(*vx, *vy);
  }
  std::sort(out.begin(), out.end());
  return out;
}

void draw(svg::document &doc, const record &r, const figure &f, double y0) {
  const series &s = *r.table(f.series);
  const std::size_t xi = s.index(f.x);
  std::vector<points> lines;
  double x_lo = std::numeric_limits<double>::infinity(), x_hi = -x_lo;
  double y_lo = f.y_from_zero ? 0 : x_lo, y_hi = -x_lo;
  for (const auto &key : f.y) {
    lines.push_back(numbers_of(s, xi, s.index(key)));
    for (const auto &[x, y] : lines.back()) {
      x_lo = std::min(x_lo, x), x_hi = std::max(x_hi, x);
      y_lo = std::min(y_lo, y), y_hi = std::max(y_hi, y);
    }
  }
  for (const auto &rule : f.rules)
    if (const auto *v = std::get_if<double>(&rule.value); v && std::isfinite(*v))
      y_lo = std::min(y_lo, *v), y_hi = std::max(y_hi, *v);
  doc.panel_title(y0 - 24, fitted(f.title, panel_title_chars));
  if (!(x_hi >= x_lo) || !(y_hi >= y_lo)) {
    doc.text(left, y0 + panel_h / 2, "nothing measured to draw", {"#888"});
    return;
  }
  if (x_hi == x_lo)
    x_lo -= 1, x_hi += 1;
  if (y_hi == y_lo)
    y_hi = y_lo + std::max(1.0, std::fabs(y_lo) * 0.1);
  const double plot_w = width - left - right;
  const auto px = [&](double x) { return left + plot_w * (x - x_lo) / (x_hi - x_lo); };
  const auto py = [&](double y) { return y0 + panel_h - panel_h * (y - y_lo) / (y_hi - y_lo); };
  const double x_step = nice_step(x_hi - x_lo, 8), y_step = nice_step(y_hi - y_lo, 5);
  for (double v = std::ceil(x_lo / x_step) * x_step; v <= x_hi + 1e-9; v += x_step)
    doc.x_tick(px(v), y0, y0 + panel_h, y0 + panel_h + 16, fmt::format("{:g}", v));
  for (double v = std::ceil(y_lo / y_step) * y_step; v <= y_hi + 1e-9; v += y_step)
    doc.y_tick(left, left + plot_w, py(v), fmt::format("{:g}", v));
  const field &xf = s.fields[xi];
  doc.text(left + plot_w / 2, y0 + panel_h + 34,
           xf.header + (xf.format.unit.empty() ? "" : " (" + xf.format.unit + ")"),
           {"#333", "middle"});
  doc.text(20, y0 - 6, f.y_label, {"#555"});
  if (f.mark)
    doc.line(px(*f.mark), px(*f.mark), y0, y0 + panel_h, {"#27ae60", 2, "6 4"});
  for (const auto &rule : f.rules)
    if (const auto *v = std::get_if<double>(&rule.value); v && std::isfinite(*v)) {
      doc.line(left, left + plot_w, py(*v), py(*v), {"#e67e22", 0, "6 4"});
      doc.text(left + plot_w + 8, py(*v) + 4, rule.label, {"#e67e22", {}, 11});
    }
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const char *color = palette[i % std::size(palette)];
    points at;
    for (const auto &[x, y] : lines[i])
      at.emplace_back(px(x), py(y));
    doc.series(at, color);
    const field &yf = s.fields[s.index(f.y[i])];
    doc.text(left + plot_w + 8, y0 + 14 + 18 * static_cast<double>(i), yf.header, {color});
  }
}

} // namespace

std::string to_svg(const record &r) {
  std::vector<std::string> title, lines;
  wrap(r.title, title, title_chars); // what does not fit the title's line goes under it
  lines.assign(title.begin() + 1, title.end());
  wrap(joined(r.environment), lines);
  if (!r.notes.empty())
    wrap(r.notes.back(), lines); // the conclusion (tune: the split to use)
  const double top = 60 + 18 * static_cast<double>(lines.size());
  const double n = static_cast<double>(std::max<std::size_t>(1, r.figures.size()));
  svg::document doc(width, top + n * (panel_h + panel_gap));
  doc.heading(title.front(), lines);
  double y = top + 24;
  for (const auto &f : r.figures) {
    draw(doc, r, f, y);
    y += panel_h + panel_gap;
  }
  return doc.finish();
}

} // namespace greenctx::cli::report
