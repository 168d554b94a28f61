// SPDX-License-Identifier: Apache-2.0
// Tables of the CLI's reports, the same way for every command: aligned text for the terminal,
// markdown, and CSV. A command turns its data into rows of cells; these functions lay them out.
#pragma once

#include <string>
#include <vector>

namespace greenctx::cli {

enum class align { left, right };

/// A column of a table: its header, its alignment, and for text its minimum width (0: the cell
/// as it is, unpadded; a longer cell is never cut) and the spaces before it (null: the table's).
struct column {
  std::string header;
  align side = align::right;
  std::size_t width = 0;
  const char *gap = nullptr;
};

using row = std::vector<std::string>;

/// `cell` padded to `width` on the side opposite its alignment.
std::string pad(const std::string &cell, std::size_t width, align side);

/// One line of a text table: each cell padded to its column, joined by `gap` (or the column's),
/// without trailing spaces, then a newline.
std::string text_row(const std::vector<column> &columns, const row &cells,
                     const std::string &gap = "  ");

/// The header line and one line per row, as text_row lays them out.
std::string text_table(const std::vector<column> &columns, const std::vector<row> &rows,
                       const std::string &gap = "  ");

/// A markdown table: header, alignment line (---, ---:) and rows. Widths are ignored.
std::string markdown_table(const std::vector<column> &columns, const std::vector<row> &rows);

/// One CSV line: cells joined by commas; a cell with a comma, quote or line break is quoted
/// (RFC 4180), with its quotes doubled.
std::string csv_line(const row &cells);

} // namespace greenctx::cli
