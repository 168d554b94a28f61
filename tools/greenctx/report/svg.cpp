// SPDX-License-Identifier: Apache-2.0
#include "report/svg.hpp"

#include <fmt/format.h>

#include <cmath>

namespace greenctx::cli {

std::string xml_escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&quot;";
      break;
    default:
      out += c;
    }
  }
  return out;
}

double nice_step(double range, double ticks) {
  if (range <= 0)
    return 1;
  const double raw = range / ticks;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * magnitude >= raw)
      return m * magnitude;
  return 10 * magnitude;
}

namespace svg {

std::string number(double v) {
  std::string s = fmt::format("{:.1f}", v);
  if (s.size() > 2 && s.compare(s.size() - 2, 2, ".0") == 0)
    s.resize(s.size() - 2);
  return s == "-0" ? "0" : s;
}

document::document(double width, double height) {
  out_ = fmt::format("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" "
                     "viewBox=\"0 0 {0} {1}\" font-family=\"sans-serif\" font-size=\"13\">\n"
                     "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
                     number(width), number(height));
}

void document::text(double x, double y, std::string_view content, const text_style &style) {
  out_ += fmt::format("<text x=\"{}\" y=\"{}\"", number(x), number(y));
  if (style.size > 0)
    out_ += fmt::format(" font-size=\"{}\"", number(style.size));
  if (style.bold)
    out_ += " font-weight=\"bold\"";
  if (!style.anchor.empty())
    out_ += fmt::format(" text-anchor=\"{}\"", style.anchor);
  if (!style.fill.empty())
    out_ += fmt::format(" fill=\"{}\"", style.fill);
  out_ += fmt::format(">{}</text>\n", xml_escape(content));
}

void document::line(double x1, double x2, double y1, double y2, const stroke_style &stroke) {
  out_ += fmt::format("<line x1=\"{}\" x2=\"{}\" y1=\"{}\" y2=\"{}\" stroke=\"{}\"", number(x1),
                      number(x2), number(y1), number(y2), stroke.color);
  if (stroke.width > 0)
    out_ += fmt::format(" stroke-width=\"{}\"", number(stroke.width));
  if (!stroke.dash.empty())
    out_ += fmt::format(" stroke-dasharray=\"{}\"", stroke.dash);
  out_ += "/>\n";
}

void document::rect(double x, double y, double w, double h, std::string_view fill, double opacity,
                    std::string_view outline) {
  out_ += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"", number(x),
                      number(y), number(w), number(h), fill);
  if (opacity < 1)
    out_ += fmt::format(" fill-opacity=\"{:g}\"", opacity);
  if (!outline.empty())
    out_ += fmt::format(" stroke=\"{}\"", outline);
  out_ += "/>\n";
}

void document::polyline(const std::vector<std::pair<double, double>> &points,
                        std::string_view color, double width, std::string_view dash) {
  std::string list;
  for (const auto &[x, y] : points)
    list += (list.empty() ? "" : " ") + number(x) + "," + number(y);
  out_ += fmt::format("<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"{}\"",
                      list, color, number(width));
  if (!dash.empty())
    out_ += fmt::format(" stroke-dasharray=\"{}\"", dash);
  out_ += "/>\n";
}

void document::circle(double cx, double cy, double r, std::string_view fill) {
  out_ += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"{}\" fill=\"{}\"/>\n", number(cx),
                      number(cy), number(r), fill);
}

void document::heading(std::string_view title, const std::vector<std::string> &lines) {
  text(20, 28, title, {{}, {}, 17, true});
  double y = 50;
  for (const auto &l : lines) {
    text(20, y, l, {"#555"});
    y += 18;
  }
}

void document::panel_title(double y, std::string_view title) {
  text(20, y, title, {{}, {}, 15, true});
}

void document::x_tick(double x, double top, double bottom, double label_y, std::string_view label,
                      std::string_view grid) {
  line(x, x, top, bottom, {grid});
  text(x, label_y, label, {"#555", "middle"});
}

void document::y_tick(double left, double right, double y, std::string_view label) {
  line(left, right, y, y, {"#eee"});
  text(left - 8, y + 4, label, {"#555", "end"});
}

void document::series(const std::vector<std::pair<double, double>> &points, std::string_view color,
                      std::string_view dash) {
  if (points.empty())
    return;
  polyline(points, color, 2, dash);
  for (const auto &[x, y] : points)
    circle(x, y, 3.5, color);
}

std::string document::finish() {
  return out_ + "</svg>\n";
}

} // namespace svg
} // namespace greenctx::cli
