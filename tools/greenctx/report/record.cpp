// SPDX-License-Identifier: Apache-2.0
// The record's text, markdown and CSV renderings.
#include "report/record.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace greenctx::cli::report {
namespace {

bool is_whole(double v) {
  return std::isfinite(v) && std::floor(v) == v && std::fabs(v) < 1e15;
}

// A number exactly, for CSV: the shortest text that reads back to the same double.
std::string exact(const cell &c) {
  if (const auto *v = std::get_if<double>(&c))
    return is_whole(*v) ? fmt::format("{:.0f}", *v) : fmt::format("{}", *v);
  if (const auto *s = std::get_if<std::string>(&c))
    return *s;
  return {};
}

std::string header_of(const field &f) {
  if (f.format.unit.empty())
    return f.header;
  return f.header.empty() ? f.format.unit : f.header + " " + f.format.unit;
}

// The columns of `s` for text (`widths`, detail fields left out) or markdown (every field).
std::vector<column> columns_of(const series &s, bool widths) {
  std::vector<column> out;
  for (const auto &f : s.fields) {
    if (widths && f.detail)
      continue;
    column c{header_of(f), f.side, 0};
    if (widths) {
      c.width = c.header.size();
      for (const auto &r : s.rows)
        c.width = std::max(c.width, show(r.at(&f - s.fields.data()), f.format, false).size());
    }
    out.push_back(c);
  }
  return out;
}

// The cells of `s` as columns_of lays them out.
std::vector<row> cells_of(const series &s, bool text) {
  std::vector<row> out;
  for (const auto &r : s.rows) {
    row cells;
    for (std::size_t i = 0; i < s.fields.size(); ++i)
      if (!text || !s.fields[i].detail)
        cells.push_back(show(r.at(i), s.fields[i].format, false));
    out.push_back(std::move(cells));
  }
  return out;
}

} // namespace

int decimals_for(double largest) {
  return largest > 0 ? std::clamp(3 - static_cast<int>(std::floor(std::log10(largest))), 0, 6) : 1;
}

std::string joined(const std::vector<quantity> &qs) {
  std::string out;
  for (const auto &q : qs)
    if (!q.detail)
      out += (out.empty() ? "" : ", ") + q.label + " " + show(q.value, q.format);
  return out;
}

std::size_t series::index(const std::string &name) const {
  for (std::size_t i = 0; i < fields.size(); ++i)
    if (fields[i].key == name)
      return i;
  throw std::out_of_range("the table '" + key + "' has no field '" + name + "'");
}

const quantity *record::find(const std::string &key) const {
  for (const auto *list : {&values, &config, &environment})
    for (const auto &q : *list)
      if (q.key == key)
        return &q;
  return nullptr;
}

bool record::says_no(const std::string &key) const {
  const quantity *q = find(key);
  return q && q->value == cell{"no"};
}

const series *record::table(const std::string &key) const {
  for (const auto &t : tables)
    if (t.key == key)
      return &t;
  return nullptr;
}

std::string show(const cell &c, const number_format &f, bool with_unit) {
  if (std::holds_alternative<std::monostate>(c))
    return "-";
  if (const auto *s = std::get_if<std::string>(&c))
    return *s;
  const double v = std::get<double>(c);
  std::string text = f.digits == 0 && is_whole(v) ? fmt::format("{:.0f}", v)
                     : std::isfinite(v)           ? fmt::format("{:.{}f}", v, std::max(0, f.digits))
                                                  : fmt::format("{}", v);
  if (with_unit && !f.unit.empty())
    text += " " + f.unit;
  return text;
}

std::vector<quantity> environment_of(const nlohmann::json &env) {
  static const std::pair<const char *, const char *> known[] = {
      {"gpu", "GPU"},
      {"device", "device"},
      {"sm_count", "SMs"},
      {"compute_capability", "compute capability"},
      {"min_partition", "minimum partition"},
      {"coscheduled_alignment", "alignment"},
      {"driver_version", "driver CUDA"},
      {"toolkit_version", "toolkit CUDA"},
      {"clocks", "clocks"},
      {"clocks_before", "clocks before"},
      {"clocks_after", "clocks after"},
      {"pci_bus_id", "PCI bus"},
      {"max_connections", "CUDA_DEVICE_MAX_CONNECTIONS"},
      {"cublas", "GEMM library"},
      {"devices", "devices"},
      {"nccl_version", "NCCL"},
      {"nccl_library", "NCCL library"},
      {"one_gpu_test", "one-GPU test run"},
      {"one_gpu_test_operation", "its operation"},
      {"env", "environment variables"},
      {"commit", "greenctx"},
      {"date", "date"},
  };
  const auto value_of = [](const nlohmann::json &v) -> cell {
    if (v.is_number())
      return v.get<double>();
    if (v.is_string())
      return v.get<std::string>();
    if (v.is_boolean())
      return std::string(v.get<bool>() ? "yes" : "no");
    if (v.is_object() && v.contains("available")) { // read_clocks
      if (!v.value("available", false))
        return "unknown (" + v.value("reason", std::string("?")) + ")";
      return fmt::format("SM {} MHz (max {}), memory {} MHz (max {})", v.value("sm_mhz", 0),
                         v.value("sm_max_mhz", 0), v.value("mem_mhz", 0),
                         v.value("mem_max_mhz", 0));
    }
    return v.is_null() ? cell{} : cell{v.dump()};
  };
  std::vector<quantity> out;
  if (!env.is_object())
    return out;
  for (const auto &[key, label] : known)
    if (const auto it = env.find(key); it != env.end())
      out.push_back({key, label, value_of(*it), {"", 0}});
  for (const auto &item : env.items()) {
    const std::string &key = item.key();
    if (key != "command" && std::none_of(std::begin(known), std::end(known),
                                         [&](const auto &k) { return key == k.first; }))
      out.push_back({key, key, value_of(item.value()), {"", 0}});
  }
  // The command line is long and the terminal has just shown it: in the files only.
  if (const auto it = env.find("command"); it != env.end())
    out.push_back({"command", "command", value_of(*it), {"", 0}, true});
  return out;
}

std::string gpu_described(const nlohmann::json &env) {
  const auto text = [&](const char *key) -> std::string {
    const auto it = env.is_object() ? env.find(key) : env.end();
    if (it == env.end() || it->is_null())
      return {};
    return it->is_string() ? it->get<std::string>() : it->dump();
  };
  std::string out = "GPU " + (text("device").empty() ? std::string("?") : text("device"));
  std::string inside = text("gpu");
  if (const std::string sms = text("sm_count"); !sms.empty())
    inside += (inside.empty() ? "" : ", ") + sms + " SMs";
  if (const std::string cc = text("compute_capability"); !cc.empty())
    inside += (inside.empty() ? "" : ", ") + std::string("CC ") + cc;
  return inside.empty() ? out : out + " (" + inside + ")";
}

std::string to_text(const record &r) {
  std::string out = r.title + "\n";
  if (!r.environment.empty())
    out += joined(r.environment) + "\n";
  if (!r.config.empty())
    out += "asked: " + joined(r.config) + "\n";
  for (const auto &q : r.values)
    if (!q.detail)
      out += q.label + ": " + show(q.value, q.format) + "\n";
  for (const auto &t : r.tables) {
    if (t.detail || t.raw)
      continue;
    out += "\n" + (t.title.empty() ? "" : t.title + ":\n");
    out += text_table(columns_of(t, true), cells_of(t, true));
  }
  if (!r.notes.empty())
    out += "\n";
  for (const auto &n : r.notes)
    out += n + "\n";
  return out;
}

std::string to_markdown(const record &r) {
  std::string out = "# " + r.title + "\n\n";
  const auto list = [&](const char *heading, const std::vector<quantity> &qs) {
    if (qs.empty())
      return;
    out += fmt::format("## {}\n\n", heading);
    for (const auto &q : qs)
      out += "- " + q.label + ": " + show(q.value, q.format) + "\n";
    out += "\n";
  };
  list("Environment", r.environment);
  list("Configuration", r.config);
  list("Results", r.values);
  for (const auto &t : r.tables)
    out += "## " + (t.title.empty() ? t.key : t.title) + "\n\n" +
           (t.raw ? fmt::format("{} rows ({}), in the JSON file{}: not listed here.\n",
                                t.rows.size(), t.key, &t == &r.tables.front() ? " and the CSV" : "")
                  : markdown_table(columns_of(t, false), cells_of(t, false))) +
           "\n";
  for (const auto &n : r.notes)
    out += n + "\n\n";
  return out;
}

std::string to_csv(const record &r) {
  if (r.tables.empty())
    return {};
  const series &t = r.tables.front();
  row keys;
  for (const auto &f : t.fields)
    keys.push_back(f.key);
  std::string out = csv_line(keys);
  for (const auto &cells : t.rows) {
    row line;
    for (const auto &c : cells)
      line.push_back(exact(c));
    out += csv_line(line);
  }
  return out;
}

} // namespace greenctx::cli::report
