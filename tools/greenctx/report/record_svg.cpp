// SPDX-License-Identifier: Apache-2.0
// The record's SVG: one chart per figure (lines, bars or boxes), stacked under the title and the
// environment.
#include "report/record.hpp"
#include "report/svg.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <set>

namespace greenctx::cli::report {
namespace {

constexpr const char *palette[] = {"#2c3e50", "#c0392b", "#2980b9", "#27ae60",
                                   "#8e44ad", "#d35400", "#16a085", "#7f8c8d",
                                   "#e84393", "#34495e", "#f39c12", "#1abc9c"};
// A line past the palette's colours is told apart by its dash.
constexpr const char *dashes[] = {"", "7 4", "2 3"};
constexpr double min_width = 820, left = 90, right = 200, panel_h = 240, panel_gap = 100;
constexpr double row_h = 30;            // of a bar or box
constexpr double legend_h = 18;         // of a line's label at the right
constexpr double char_w = 6.9;          // of 13 px sans-serif, about
constexpr std::size_t label_chars = 64; // of a bar's or box's label
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

const double *number(const cell &c) {
  const auto *v = std::get_if<double>(&c);
  return v && std::isfinite(*v) ? v : nullptr;
}

// An axis from lo to hi, linear or logarithmic, mapped onto 0..1.
struct axis {
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  bool log = false;

  // Whether v can be drawn on it (a log axis has no place for 0 and below).
  bool takes(double v) const { return std::isfinite(v) && (!log || v > 0); }
  void add(double v) {
    if (takes(v))
      lo = std::min(lo, v), hi = std::max(hi, v);
  }
  bool empty() const { return !(hi >= lo); }
  // Whole decades on a log axis (within the doubles); a range around a lone value.
  void finish(bool from_zero) {
    if (log) {
      lo = std::pow(10, std::floor(std::log10(lo)));
      hi = std::min(std::numeric_limits<double>::max(),
                    std::max(lo * 10, std::pow(10, std::ceil(std::log10(hi)))));
      return;
    }
    if (from_zero)
      lo = std::min(lo, 0.0), hi = std::max(hi, 0.0);
    if (hi == lo)
      hi = lo + std::max(1.0, std::fabs(lo) * 0.1);
  }
  double at(double v) const {
    return log ? (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo))
               : (v - lo) / (hi - lo);
  }
  // Where the ticks go: round steps, or on a log axis 1, 2 and 5 times each power of ten (only
  // the powers over more than three decades, so that labels do not collide). At most max_ticks:
  // a step lost in the rounding of large numbers would never end the loop.
  std::vector<double> ticks(double count) const {
    constexpr std::size_t max_ticks = 64;
    std::vector<double> out;
    if (log) {
      const bool fine = std::log10(hi) - std::log10(lo) <= 3;
      for (double d = std::log10(lo); d <= std::log10(hi) + 1e-9 && out.size() < max_ticks; ++d)
        for (double m : {1.0, 2.0, 5.0})
          if ((m == 1 || fine) && m * std::pow(10, d) <= hi * (1 + 1e-9))
            out.push_back(m * std::pow(10, d));
      return out;
    }
    const double step = nice_step(hi - lo, count);
    for (double v = std::ceil(lo / step) * step; v <= hi + 1e-9 && out.size() < max_ticks;
         v += step)
      out.push_back(v);
    return out;
  }
};

// A cell as the label of a row, a line or a tick.
std::string label_of(const cell &c) {
  if (const auto *v = std::get_if<double>(&c))
    return fmt::format("{:g}", *v);
  if (const auto *s = std::get_if<std::string>(&c))
    return *s;
  return "-";
}

// What a figure needs: its height, and for bars and boxes the room for the rows' labels.
double height_of(const record &r, const figure &f) {
  const series &s = *r.table(f.series);
  if (f.style != figure_style::lines)
    return std::max(2.0, static_cast<double>(s.rows.size())) * row_h;
  std::size_t lines = f.y.size();
  if (!f.group.empty()) {
    std::set<std::string> groups;
    for (const auto &row : s.rows)
      groups.insert(label_of(row.at(s.index(f.group))));
    lines *= std::max<std::size_t>(1, groups.size());
  }
  return std::max(panel_h, legend_h * static_cast<double>(lines) + 20);
}

double labels_width(const record &r, const figure &f) {
  if (f.style == figure_style::lines)
    return left;
  const series &s = *r.table(f.series);
  std::size_t longest = 0;
  for (const auto &row : s.rows)
    longest = std::max(longest, fitted(label_of(row.at(s.index(f.x))), label_chars).size());
  return std::max(160.0, 30 + char_w * static_cast<double>(longest));
}

void rules_on(svg::document &doc, const figure &f, const axis &v, bool vertical, double from,
              double to, const std::function<double(double)> &place) {
  for (const auto &rule : f.rules)
    if (const double *x = number(rule.value); x && v.takes(*x) && *x >= v.lo && *x <= v.hi) {
      if (vertical) {
        doc.line(place(*x), place(*x), from - 6, to, {"#e67e22", 1, "6 4"});
        doc.text(place(*x) + 4, from - 8, rule.label, {"#e67e22", {}, 11});
      } else {
        // Inside the plot at its right end, above the line: the lines' legend is at the right.
        doc.line(from, to, place(*x), place(*x), {"#e67e22", 0, "6 4"});
        doc.text(to - 4, place(*x) - 5, rule.label, {"#e67e22", "end", 11});
      }
    }
}

// Lines: each y field (and each group) against x.
void draw_lines(svg::document &doc, const record &r, const figure &f, double y0, double h,
                double width) {
  const series &s = *r.table(f.series);
  const std::size_t xi = s.index(f.x);
  axis xa, ya;
  xa.log = f.log_x, ya.log = f.log_y;
  struct line {
    std::string label;
    points at;
  };
  std::vector<line> lines;
  std::map<std::string, std::size_t> line_of;
  std::map<double, std::string> x_names;
  for (const auto &key : f.y) {
    const std::size_t yi = s.index(key);
    for (const auto &row : s.rows) {
      std::string label = s.fields[yi].header, group;
      if (!f.group.empty()) {
        group = label_of(row.at(s.index(f.group)));
        label = f.y.size() == 1 ? group : group + " " + label;
      }
      const auto [it, added] = line_of.emplace(group + '\x1f' + key, lines.size());
      if (added)
        lines.push_back({label, {}});
      const double *x = number(row.at(xi)), *y = number(row.at(yi));
      if (!x || !y || !xa.takes(*x) || !ya.takes(*y))
        continue;
      lines[it->second].at.emplace_back(*x, *y);
      xa.add(*x), ya.add(*y);
      if (!f.x_labels.empty())
        if (const auto *name = std::get_if<std::string>(&row.at(s.index(f.x_labels))))
          x_names.emplace(*x, *name);
    }
  }
  for (const auto &rule : f.rules)
    if (const double *v = number(rule.value))
      ya.add(*v);
  doc.panel_title(y0 - 24, fitted(f.title, panel_title_chars));
  if (xa.empty() || ya.empty()) {
    doc.text(left, y0 + h / 2, "nothing measured to draw", {"#888"});
    return;
  }
  if (!xa.log && xa.hi == xa.lo)
    xa.lo -= 1, xa.hi += 1;
  xa.finish(false);
  ya.finish(f.y_from_zero);
  const double plot_w = width - left - right;
  const auto px = [&](double x) { return left + plot_w * xa.at(x); };
  const auto py = [&](double y) { return y0 + h - h * ya.at(y); };
  if (!x_names.empty())
    for (const auto &[x, name] : x_names)
      doc.x_tick(px(x), y0, y0 + h, y0 + h + 16, name);
  else
    for (double v : xa.ticks(8))
      doc.x_tick(px(v), y0, y0 + h, y0 + h + 16, fmt::format("{:g}", v));
  for (double v : ya.ticks(5))
    doc.y_tick(left, left + plot_w, py(v), fmt::format("{:g}", v));
  const field &xf = s.fields[xi];
  doc.text(left + plot_w / 2, y0 + h + 34,
           xf.header + (xf.format.unit.empty() ? "" : " (" + xf.format.unit + ")") +
               (xa.log ? ", log scale" : ""),
           {"#333", "middle"});
  doc.text(20, y0 - 6, f.y_label + (ya.log ? " (log scale)" : ""), {"#555"});
  if (f.mark && xa.takes(*f.mark))
    doc.line(px(*f.mark), px(*f.mark), y0, y0 + h, {"#27ae60", 2, "6 4"});
  rules_on(doc, f, ya, false, left, left + plot_w, py);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const char *color = palette[i % std::size(palette)];
    const char *dash = dashes[(i / std::size(palette)) % std::size(dashes)];
    auto &pts = lines[i].at;
    std::sort(pts.begin(), pts.end());
    points at;
    for (const auto &[x, y] : pts)
      at.emplace_back(px(x), py(y));
    doc.series(at, color, dash);
    const double ly = y0 + 14 + legend_h * static_cast<double>(i);
    if (*dash) // a sample of the dash before the label
      doc.line(left + plot_w + 8, left + plot_w + 26, ly - 4, ly - 4, {color, 2, dash});
    doc.text(left + plot_w + (*dash ? 32 : 8), ly, fitted(lines[i].label, 24), {color});
  }
}

constexpr const char *met_color = "#27ae60", *missed_color = "#c0392b";

// A row's colour by its verdict: met, missed, or the plain colour when it has none.
const char *row_color(const cell &verdict) {
  const auto *text = std::get_if<std::string>(&verdict);
  if (text && text->starts_with("yes"))
    return met_color;
  if (text && text->starts_with("NO"))
    return missed_color;
  return palette[2];
}

// Bars and boxes: a row of the chart per row of the table, the values along x.
void draw_rows(svg::document &doc, const record &r, const figure &f, double y0, double h,
               double width) {
  const series &s = *r.table(f.series);
  const std::size_t li = s.index(f.x);
  std::vector<std::size_t> yi;
  for (const auto &key : f.y)
    yi.push_back(s.index(key));
  axis va;
  va.log = f.log_y;
  for (const auto &row : s.rows)
    for (std::size_t i : yi)
      if (const double *v = number(row.at(i)))
        va.add(*v);
  for (const auto &rule : f.rules)
    if (const double *v = number(rule.value))
      va.add(*v);
  doc.panel_title(y0 - 24, fitted(f.title, panel_title_chars));
  if (va.empty()) {
    doc.text(left, y0 + h / 2, "nothing measured to draw", {"#888"});
    return;
  }
  va.finish(f.y_from_zero || f.style == figure_style::bars);
  const double x0 = labels_width(r, f), plot_w = width - x0 - 80;
  const auto px = [&](double v) { return x0 + plot_w * va.at(v); };
  for (double v : va.ticks(6))
    doc.x_tick(px(v), y0, y0 + h, y0 + h + 16, fmt::format("{:g}", v), "#ddd");
  doc.text(x0 + plot_w / 2, y0 + h + 34, f.y_label + (va.log ? " (log scale)" : ""),
           {"#333", "middle"});
  const std::size_t verdict = f.verdict.empty() ? s.fields.size() : s.index(f.verdict);
  if (verdict < s.fields.size()) {
    doc.text(width - 20, y0 - 24, "a target missed", {missed_color, "end", 11});
    doc.text(width - 130, y0 - 24, "every target met", {met_color, "end", 11});
  }
  for (std::size_t row = 0; row < s.rows.size(); ++row) {
    const auto &cells = s.rows[row];
    const char *color = verdict < s.fields.size() ? row_color(cells.at(verdict)) : palette[2];
    const double y = y0 + row_h * static_cast<double>(row) + row_h / 2;
    doc.text(x0 - 10, y + 4, fitted(label_of(cells.at(li)), label_chars), {{}, "end"});
    std::vector<double> v;
    for (std::size_t i : yi)
      if (const double *x = number(cells.at(i)); x && va.takes(*x))
        v.push_back(*x);
    if (v.size() != yi.size()) {
      doc.text(x0, y + 4, "-", {"#888"});
      continue;
    }
    const field &last = s.fields[f.style == figure_style::bars ? yi[0] : yi[3]];
    const double shown = f.style == figure_style::bars ? v[0] : v[3];
    if (f.style == figure_style::bars) {
      doc.rect(x0, y - 7, std::max(1.0, px(v[0]) - x0), 14, color, 0.6);
    } else {
      doc.line(px(v[0]), px(v[4]), y, y, {color});
      doc.rect(px(v[1]), y - 7, std::max(1.0, px(v[3]) - px(v[1])), 14, color, 0.35, color);
      doc.line(px(v[2]), px(v[2]), y - 7, y + 7, {color, 2});
    }
    const double end = f.style == figure_style::bars ? px(v[0]) : px(v[4]);
    doc.text(std::min(end + 6, width - 70), y + 4,
             (f.style == figure_style::boxes ? last.header + " " : std::string()) +
                 show(shown, last.format, false),
             {"#333", {}, 11});
  }
  rules_on(doc, f, va, true, y0, y0 + h, px);
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
  double width = min_width, height = top;
  for (const auto &f : r.figures) {
    width = std::max(width, labels_width(r, f) + 560);
    height += height_of(r, f) + panel_gap;
  }
  if (r.figures.empty())
    height += panel_h + panel_gap;
  svg::document doc(width, height);
  doc.heading(title.front(), lines);
  double y = top + 24;
  for (const auto &f : r.figures) {
    const double h = height_of(r, f);
    if (f.style == figure_style::lines)
      draw_lines(doc, r, f, y, h, width);
    else
      draw_rows(doc, r, f, y, h, width);
    y += h + panel_gap;
  }
  return doc.finish();
}

} // namespace greenctx::cli::report
