// SPDX-License-Identifier: Apache-2.0
// The record's JSON, and the one reader of it (--from).
#include "report/record.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace greenctx::cli::report {
namespace {

using ojson = nlohmann::ordered_json;
constexpr const char *kind_prefix = "greenctx.";
constexpr int max_digits = 17;

[[noreturn]] void refuse(int id, const std::string &why, const ojson &at) {
  throw nlohmann::json::out_of_range::create(id, why, &at);
}

ojson cell_json(const cell &c, const number_format &f) {
  if (const auto *v = std::get_if<double>(&c)) {
    if (f.digits == 0 && std::isfinite(*v) && std::floor(*v) == *v && std::fabs(*v) < 9e15)
      return static_cast<std::int64_t>(*v);
    return std::isfinite(*v) ? ojson(*v) : ojson(nullptr); // JSON has no infinity
  }
  if (const auto *s = std::get_if<std::string>(&c))
    return *s;
  return nullptr;
}

cell read_cell(const ojson &j) {
  if (j.is_null())
    return std::monostate{};
  if (j.is_number())
    return j.get<double>();
  if (j.is_string())
    return j.get<std::string>();
  throw nlohmann::json::type_error::create(
      302, std::string("a number, text or null was expected, not ") + j.type_name(), &j);
}

void put_format(ojson &j, const number_format &f) {
  if (!f.unit.empty())
    j["unit"] = f.unit;
  j["digits"] = f.digits;
}

number_format read_format(const ojson &j) {
  number_format f;
  f.unit = j.value("unit", std::string());
  if (const auto it = j.find("digits"); it != j.end()) {
    if (!it->is_number_integer() || it->get<std::int64_t>() < 0 ||
        it->get<std::int64_t>() > max_digits)
      refuse(406, "digits are a whole number from 0 to 17", *it);
    f.digits = it->get<int>();
  }
  return f;
}

ojson quantities_json(const std::vector<quantity> &qs) {
  ojson out = ojson::object();
  for (const auto &q : qs) {
    ojson j = {{"label", q.label}, {"value", cell_json(q.value, q.format)}};
    put_format(j, q.format);
    if (q.detail)
      j["detail"] = true;
    out[q.key] = std::move(j);
  }
  return out;
}

std::vector<quantity> read_quantities(const ojson &j) {
  std::vector<quantity> out;
  for (const auto &[key, q] : j.items())
    out.push_back({key, q.at("label").get<std::string>(), read_cell(q.at("value")), read_format(q),
                   q.value("detail", false)});
  return out;
}

ojson series_json(const series &s) {
  ojson fields = ojson::object(), rows = ojson::array();
  for (const auto &f : s.fields) {
    ojson j = {{"header", f.header}};
    put_format(j, f.format);
    j["align"] = f.side == align::left ? "left" : "right";
    if (f.detail)
      j["detail"] = true;
    fields[f.key] = std::move(j);
  }
  for (const auto &cells : s.rows) {
    ojson row = ojson::object();
    for (std::size_t i = 0; i < s.fields.size(); ++i)
      row[s.fields[i].key] = cell_json(cells.at(i), s.fields[i].format);
    rows.push_back(std::move(row));
  }
  ojson out = {{"title", s.title}, {"detail", s.detail}};
  if (s.raw)
    out["raw"] = true;
  out["fields"] = std::move(fields);
  out["rows"] = std::move(rows);
  return out;
}

series read_series(const std::string &key, const ojson &j) {
  series s;
  s.key = key;
  s.title = j.at("title").get<std::string>();
  s.detail = j.value("detail", false);
  s.raw = j.value("raw", false);
  for (const auto &[name, f] : j.at("fields").items()) {
    const std::string side = f.value("align", std::string("right"));
    if (side != "left" && side != "right")
      refuse(406, "align is left or right, not " + side, f);
    s.fields.push_back({name, f.at("header").get<std::string>(), read_format(f),
                        side == "left" ? align::left : align::right, f.value("detail", false)});
  }
  for (const auto &row : j.at("rows")) {
    if (!row.is_object())
      throw nlohmann::json::type_error::create(
          302, std::string("a row is an object, not ") + row.type_name(), &row);
    std::vector<cell> cells;
    for (const auto &f : s.fields) {
      const auto it = row.find(f.key);
      cells.push_back(it == row.end() ? cell{} : read_cell(*it));
    }
    s.rows.push_back(std::move(cells));
  }
  return s;
}

constexpr std::pair<figure_style, const char *> style_names[] = {
    {figure_style::lines, "lines"}, {figure_style::bars, "bars"}, {figure_style::boxes, "boxes"}};

ojson figure_json(const figure &f) {
  ojson out = {{"title", f.title},
               {"series", f.series},
               {"x", f.x},
               {"y", f.y},
               {"y_label", f.y_label},
               {"rules", quantities_json(f.rules)},
               {"mark", f.mark ? ojson(*f.mark) : ojson(nullptr)},
               {"y_from_zero", f.y_from_zero}};
  // Written only where they are not the defaults: the records of tune and scale stay as they were.
  if (f.style != figure_style::lines)
    for (const auto &[style, name] : style_names)
      if (style == f.style)
        out["style"] = name;
  if (!f.group.empty())
    out["group"] = f.group;
  if (!f.x_labels.empty())
    out["x_labels"] = f.x_labels;
  if (f.log_x)
    out["log_x"] = true;
  if (f.log_y)
    out["log_y"] = true;
  if (!f.verdict.empty())
    out["verdict"] = f.verdict;
  return out;
}

figure read_figure(const ojson &j, const record &r) {
  figure f;
  f.title = j.at("title").get<std::string>();
  f.series = j.at("series").get<std::string>();
  f.x = j.at("x").get<std::string>();
  f.y = j.at("y").get<std::vector<std::string>>();
  f.y_label = j.value("y_label", std::string());
  f.rules = read_quantities(j.value("rules", ojson::object()));
  if (const auto it = j.find("mark"); it != j.end() && !it->is_null())
    f.mark = it->get<double>();
  f.y_from_zero = j.value("y_from_zero", true);
  const std::string style = j.value("style", std::string("lines"));
  const auto named = std::find_if(std::begin(style_names), std::end(style_names),
                                  [&](const auto &n) { return style == n.second; });
  if (named == std::end(style_names))
    refuse(406, "a figure's style is lines, bars or boxes, not " + style, j);
  f.style = named->first;
  f.group = j.value("group", std::string());
  f.x_labels = j.value("x_labels", std::string());
  f.log_x = j.value("log_x", false);
  f.log_y = j.value("log_y", false);
  f.verdict = j.value("verdict", std::string());
  if ((f.style == figure_style::bars && f.y.size() != 1) ||
      (f.style == figure_style::boxes && f.y.size() != 5))
    refuse(406,
           style + " draw " + (f.style == figure_style::bars ? "one field" : "five fields") +
               ", not " + std::to_string(f.y.size()),
           j);
  const series *s = r.table(f.series);
  if (!s)
    refuse(403, "a figure draws the table '" + f.series + "', which is not there", j);
  const auto check = [&](const std::string &field) {
    if (std::none_of(s->fields.begin(), s->fields.end(),
                     [&](const auto &x) { return x.key == field; }))
      refuse(403,
             "a figure draws the field '" + field + "', which the table '" + f.series +
                 "' does not have",
             j);
  };
  check(f.x);
  for (const auto &y : f.y)
    check(y);
  for (const auto *by : {&f.group, &f.x_labels, &f.verdict})
    if (!by->empty())
      check(*by);
  return f;
}

} // namespace

ojson to_json(const record &r) {
  ojson tables = ojson::object(), figures = ojson::array();
  for (const auto &t : r.tables)
    tables[t.key] = series_json(t);
  for (const auto &f : r.figures)
    figures.push_back(figure_json(f));
  return {{"kind", kind_prefix + r.kind},
          {"schema", r.schema},
          {"title", r.title},
          {"environment", quantities_json(r.environment)},
          {"config", quantities_json(r.config)},
          {"values", quantities_json(r.values)},
          {"tables", tables},
          {"notes", r.notes},
          {"figures", figures}};
}

record from_json(const ojson &j) {
  record r;
  const std::string kind = j.at("kind").get<std::string>();
  if (kind.rfind(kind_prefix, 0) != 0)
    refuse(406, "'" + kind + "' is not a greenctx kind", j.at("kind"));
  r.kind = kind.substr(std::string(kind_prefix).size());
  const ojson &schema = j.at("schema");
  if (!schema.is_number_integer() || schema.get<std::int64_t>() < 1 ||
      schema.get<std::int64_t>() > 1000)
    refuse(406, "the schema is a whole number from 1", schema);
  r.schema = schema.get<int>();
  r.title = j.at("title").get<std::string>();
  r.environment = read_quantities(j.at("environment"));
  r.config = read_quantities(j.at("config"));
  r.values = read_quantities(j.at("values"));
  for (const auto &[key, t] : j.at("tables").items())
    r.tables.push_back(read_series(key, t));
  r.notes = j.at("notes").get<std::vector<std::string>>();
  for (const auto &f : j.at("figures"))
    r.figures.push_back(read_figure(f, r));
  return r;
}

} // namespace greenctx::cli::report
