// SPDX-License-Identifier: Apache-2.0
// The one SVG writer of the CLI's plots (bench and scale): a document of text, lines, rectangles,
// polylines and circles, with the pieces both plots draw (heading, axis ticks, a series of
// points). Text is escaped here; coordinates are written with one decimal.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace greenctx::cli {

/// `s` with &, <, > and " escaped, for SVG text and attributes.
std::string xml_escape(std::string_view s);

/// A round step (1, 2 or 5 times a power of ten) that cuts `range` into about `ticks` parts.
double nice_step(double range, double ticks);

namespace svg {

/// How text is drawn; empty or zero fields are left to the document's defaults (13 px, black).
struct text_style {
  text_style(std::string_view fill = {}, std::string_view anchor = {}, double size = 0,
             bool bold = false)
      : fill(fill), anchor(anchor), size(size), bold(bold) {}
  std::string_view fill;
  std::string_view anchor; ///< "middle" or "end"; empty: start
  double size;
  bool bold;
};

/// How a line or a shape's outline is drawn.
struct stroke_style {
  stroke_style(std::string_view color, double width = 0, std::string_view dash = {})
      : color(color), width(width), dash(dash) {}
  std::string_view color;
  double width;          ///< 0: 1 px
  std::string_view dash; ///< stroke-dasharray, e.g. "4 3"
};

/// "12.5"; "90" for 90.0.
std::string number(double v);

class document {
public:
  /// A white page of `width` x `height` px, sans-serif 13 px.
  document(double width, double height);

  void text(double x, double y, std::string_view content, const text_style &style = {});
  void line(double x1, double x2, double y1, double y2, const stroke_style &stroke);
  /// A rectangle filled with `fill` at `opacity` (1: opaque), with an optional outline.
  void rect(double x, double y, double w, double h, std::string_view fill, double opacity = 1,
            std::string_view outline = {});
  void polyline(const std::vector<std::pair<double, double>> &points, std::string_view color,
                double width, std::string_view dash = {});
  void circle(double cx, double cy, double r, std::string_view fill);

  /// The title (17 px bold) at the top and up to two grey lines under it.
  void heading(std::string_view title, const std::vector<std::string> &lines);
  /// A panel's title (15 px bold) at the left margin.
  void panel_title(double y, std::string_view title);
  /// A vertical grid line from `top` to `bottom` at `x`, labelled under `label_y`.
  void x_tick(double x, double top, double bottom, double label_y, std::string_view label,
              std::string_view grid = "#eee");
  /// A horizontal grid line from `left` to `right` at `y`, labelled left of `left`.
  void y_tick(double left, double right, double y, std::string_view label);
  /// A line through `points` (2 px, dashed by `dash` when given) with a dot on each.
  void series(const std::vector<std::pair<double, double>> &points, std::string_view color,
              std::string_view dash = {});

  /// The document, closed.
  std::string finish();

private:
  std::string out_;
};

} // namespace svg
} // namespace greenctx::cli
