// SPDX-License-Identifier: Apache-2.0
#include "report/table.hpp"

namespace greenctx::cli {

std::string pad(const std::string &cell, std::size_t width, align side) {
  if (cell.size() >= width)
    return cell;
  const std::string fill(width - cell.size(), ' ');
  return side == align::left ? cell + fill : fill + cell;
}

std::string text_row(const std::vector<column> &columns, const row &cells, const std::string &gap) {
  std::string line;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const column c = i < columns.size() ? columns[i] : column{};
    line += (i ? (c.gap ? std::string(c.gap) : gap) : "") + pad(cells[i], c.width, c.side);
  }
  line.erase(line.find_last_not_of(' ') + 1);
  return line + "\n";
}

std::string text_table(const std::vector<column> &columns, const std::vector<row> &rows,
                       const std::string &gap) {
  row headers;
  for (const auto &c : columns)
    headers.push_back(c.header);
  std::string s = text_row(columns, headers, gap);
  for (const auto &r : rows)
    s += text_row(columns, r, gap);
  return s;
}

std::string markdown_table(const std::vector<column> &columns, const std::vector<row> &rows) {
  const auto line = [](const row &cells) {
    std::string s = "|";
    for (const auto &cell : cells)
      s += " " + cell + " |";
    return s + "\n";
  };
  row headers;
  std::string rule = "|";
  for (const auto &c : columns) {
    headers.push_back(c.header);
    rule += c.side == align::right ? "---:|" : "---|";
  }
  std::string s = line(headers) + rule + "\n";
  for (const auto &r : rows)
    s += line(r);
  return s;
}

std::string csv_line(const row &cells) {
  std::string s;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const std::string &cell = cells[i];
    if (i)
      s += ',';
    if (cell.find_first_of(",\"\r\n") == std::string::npos) {
      s += cell;
      continue;
    }
    s += '"';
    for (char ch : cell)
      s += ch == '"' ? std::string("\"\"") : std::string(1, ch);
    s += '"';
  }
  return s + "\n";
}

} // namespace greenctx::cli
