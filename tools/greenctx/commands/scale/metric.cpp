// SPDX-License-Identifier: Apache-2.0
#include "commands/scale/metric.hpp"

#include <greenctx/plan/error.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <charconv>
#include <cmath>
#include <regex>
#include <vector>

namespace greenctx::cli::scale {
namespace {

constexpr std::string_view regex_prefix = "regex:", json_prefix = "json:";
constexpr const char *kinds_hint =
    "use wall (the default: the whole program's wall time), gpu-time (first kernel launch to last "
    "synchronization), 'regex:took ([0-9.]+) s' (a number the program prints) or json:KEY (a "
    "number in a JSON line it prints, e.g. json:timing.seconds)";

[[noreturn]] void reject(const std::string &message) {
  throw request_error(CUDA_ERROR_INVALID_VALUE, "greenctx scale", message);
}

struct time_unit_entry {
  std::string_view name;
  double seconds;
};
constexpr time_unit_entry time_units[] = {{"s", 1}, {"ms", 1e-3}, {"us", 1e-6}, {"ns", 1e-9}};

double seconds_per(std::string_view unit) {
  for (const auto &u : time_units)
    if (u.name == unit)
      return u.seconds;
  return 0;
}

// `text` cut to `max` bytes with "..." when longer, for quoting program output in a message.
std::string quoted_excerpt(std::string_view text, std::size_t max = 80) {
  if (text.size() <= max)
    return "'" + std::string(text) + "'";
  return "'" + std::string(text.substr(0, max - 3)) + "...'";
}

// The lines of `out`, without their '\n' (and a '\r' before it).
std::vector<std::string_view> lines_of(std::string_view out) {
  std::vector<std::string_view> lines;
  std::size_t start = 0;
  while (start < out.size()) {
    std::size_t end = out.find('\n', start);
    if (end == std::string_view::npos)
      end = out.size();
    std::string_view line = out.substr(start, end - start);
    if (!line.empty() && line.back() == '\r')
      line.remove_suffix(1);
    lines.push_back(line);
    start = end + 1;
  }
  return lines;
}

// What the output held, for a message about a figure not found in it.
std::string output_note(const std::vector<std::string_view> &lines) {
  for (auto it = lines.rbegin(); it != lines.rend(); ++it)
    if (it->find_first_not_of(" \t") != std::string_view::npos)
      return fmt::format(" ({} line{} on stdout; the last: {})", lines.size(),
                         lines.size() == 1 ? "" : "s", quoted_excerpt(*it));
  return " (its stdout was empty)";
}

// A whole capture as a finite number; "+4" is read as 4.
std::optional<double> read_number(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t'))
    text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t'))
    text.remove_suffix(1);
  if (!text.empty() && text.front() == '+')
    text.remove_prefix(1);
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() ||
      !std::isfinite(value))
    return std::nullopt;
  return value;
}

std::vector<std::string> key_parts(std::string_view key) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (;;) {
    const std::size_t dot = key.find('.', start);
    parts.emplace_back(key.substr(start, dot == std::string_view::npos ? key.npos : dot - start));
    if (dot == std::string_view::npos)
      return parts;
    start = dot + 1;
  }
}

extracted from_regex(const metric &m, std::string_view out) {
  const std::regex re(m.source, std::regex::ECMAScript);
  const std::vector<std::string_view> lines = lines_of(out);
  std::optional<std::string> last, last_match;
  for (const std::string_view line : lines)
    for (std::cregex_iterator it(line.data(), line.data() + line.size(), re), end; it != end;
         ++it) {
      last = (*it)[1].matched ? std::optional<std::string>((*it)[1].str()) : std::nullopt;
      last_match = it->str();
    }
  if (!last_match)
    return {std::nullopt,
            fmt::format("printed nothing matching '{}'{}", m.source, output_note(lines))};
  if (!last)
    return {std::nullopt, fmt::format("printed {} (the last match of '{}'), whose capture group "
                                      "matched nothing",
                                      quoted_excerpt(*last_match), m.source)};
  const std::optional<double> value = read_number(*last);
  if (!value)
    return {std::nullopt,
            fmt::format("printed {} (the last match of '{}'), whose capture {} is not a finite "
                        "number: capture only the number, e.g. ([0-9.eE+-]+)",
                        quoted_excerpt(*last_match), m.source, quoted_excerpt(*last))};
  return {value, {}};
}

extracted from_json_lines(const metric &m, std::string_view out) {
  const std::vector<std::string> parts = key_parts(m.source);
  unsigned objects = 0;
  std::optional<nlohmann::json> found;
  for (std::string_view line : lines_of(out)) {
    const std::size_t first = line.find_first_not_of(" \t");
    if (first == std::string_view::npos || line[first] != '{')
      continue; // cheap: most lines of most programs are no JSON
    const auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object())
      continue;
    ++objects;
    const nlohmann::json *at = &j;
    for (const auto &part : parts) {
      const auto it = at->is_object() ? at->find(part) : at->end();
      if (!at->is_object() || it == at->end()) {
        at = nullptr;
        break;
      }
      at = &*it;
    }
    if (at)
      found = *at;
  }
  if (!found)
    return {std::nullopt,
            fmt::format("printed no JSON object with the key '{}' on a line of its own ({} "
                        "line{} held a JSON object)",
                        m.source, objects, objects == 1 ? "" : "s")};
  if (!found->is_number())
    return {std::nullopt, fmt::format("printed '{}' as {} ({}) on its last JSON line with that "
                                      "key: it must be a number",
                                      m.source, quoted_excerpt(found->dump()), found->type_name())};
  const double value = found->get<double>();
  if (!std::isfinite(value))
    return {std::nullopt,
            fmt::format("printed '{}' as {}, which is no finite number", m.source, found->dump())};
  return {value, {}};
}

} // namespace

bool metric::reads_stdout() const {
  return kind == metric_kind::regex || kind == metric_kind::json;
}

bool metric::reads_report() const {
  return kind == metric_kind::gpu_time;
}

bool metric::is_time() const {
  return seconds_per(unit) > 0;
}

double metric::seconds_per_unit() const {
  return seconds_per(unit);
}

std::string metric::spec() const {
  switch (kind) {
  case metric_kind::wall:
    return "wall";
  case metric_kind::gpu_time:
    return "gpu-time";
  case metric_kind::regex:
    return std::string(regex_prefix) + source;
  case metric_kind::json:
    return std::string(json_prefix) + source;
  }
  return {};
}

std::string metric::description() const {
  switch (kind) {
  case metric_kind::wall:
    return "wall time of the whole program (start-up included)";
  case metric_kind::gpu_time:
    return "GPU phase (first kernel launch to last synchronization)";
  case metric_kind::regex:
    return fmt::format("printed number '{}'", source);
  case metric_kind::json:
    return fmt::format("printed JSON key '{}'", source);
  }
  return {};
}

std::string metric::short_name() const {
  switch (kind) {
  case metric_kind::wall:
    return "wall time";
  case metric_kind::gpu_time:
    return "GPU phase";
  case metric_kind::regex:
    return "printed number";
  case metric_kind::json:
    return source;
  }
  return {};
}

metric parse_metric(std::string_view spec, const std::optional<std::string> &unit,
                    std::optional<better> direction) {
  metric m;
  if (spec == "wall" || spec == "gpu-time") {
    m.kind = spec == "wall" ? metric_kind::wall : metric_kind::gpu_time;
    const char *what = spec == "wall" ? "the wall time" : "the GPU phase";
    if (unit)
      reject(fmt::format("--metric-unit is for a printed number (--metric regex:... or "
                         "json:...): with --metric {}, {} is in seconds",
                         spec, what));
    if (direction)
      reject(fmt::format("--higher-is-better and --lower-is-better are for a printed number "
                         "(--metric regex:... or json:...): with --metric {}, {} is a time, "
                         "better lower",
                         spec, what));
    return m;
  }
  if (spec.starts_with(regex_prefix)) {
    m.kind = metric_kind::regex;
    m.source = spec.substr(regex_prefix.size());
    if (m.source.empty())
      reject("--metric regex: needs an expression with one capture group around the number, e.g. "
             "--metric 'regex:took ([0-9.]+) s'");
    std::regex re;
    try {
      re.assign(m.source, std::regex::ECMAScript);
    } catch (const std::regex_error &e) {
      reject(fmt::format("--metric 'regex:{}': the regular expression does not compile ({}); it "
                         "is ECMAScript, as in JavaScript: e.g. 'regex:took ([0-9.]+) s'",
                         m.source, e.what()));
    }
    if (re.mark_count() != 1)
      reject(fmt::format("--metric 'regex:{}' has {} capture groups: give exactly one, around "
                         "the number (e.g. 'regex:took ([0-9.]+) s'), and write other groups as "
                         "(?:...)",
                         m.source, re.mark_count()));
  } else if (spec.starts_with(json_prefix)) {
    m.kind = metric_kind::json;
    m.source = spec.substr(json_prefix.size());
    if (m.source.empty())
      reject("--metric json: needs a key, e.g. --metric json:seconds, or json:timing.seconds for "
             "{\"timing\": {\"seconds\": 1.5}}");
    for (const auto &part : key_parts(m.source))
      if (part.empty())
        reject(fmt::format("--metric 'json:{}' has an empty part: dots separate nested keys, "
                           "e.g. json:timing.seconds",
                           m.source));
  } else {
    reject(fmt::format("--metric '{}' is not a figure greenctx scale knows: {}", spec, kinds_hint));
  }
  if (unit) {
    if (unit->empty() || unit->find_first_of("\t\r\n") != std::string::npos)
      reject(fmt::format("--metric-unit '{}': give the unit the program prints its number in, "
                         "e.g. s, ms, us, ns, tokens/s or GB/s",
                         *unit));
    m.unit = *unit;
  }
  if (direction)
    m.direction = *direction;
  else if (m.is_time())
    m.direction = better::lower;
  else if (m.unit.size() > 2 && m.unit.ends_with("/s"))
    m.direction = better::higher;
  else
    reject(fmt::format("--metric-unit '{}' is neither a time (s, ms, us, ns: lower is better) nor "
                       "a rate per second (ending in /s: higher is better): say which way the "
                       "number improves with --higher-is-better or --lower-is-better",
                       m.unit));
  return m;
}

extracted figure_from_stdout(const metric &m, std::string_view out) {
  if (m.kind == metric_kind::regex)
    return from_regex(m, out);
  if (m.kind == metric_kind::json)
    return from_json_lines(m, out);
  return {std::nullopt, fmt::format("--metric {} is not read from stdout", m.spec())};
}

extracted gpu_phase_figure(unsigned processes, std::uint64_t first_work_ns,
                           std::uint64_t last_sync_ns) {
  if (processes == 0)
    return {std::nullopt, "left no report of the preload library, so its GPU phase is unknown "
                          "(is libgreenctx_preload.so older than greenctx? --metric gpu-time "
                          "needs one that times the GPU work)"};
  if (first_work_ns == 0)
    return {std::nullopt,
            fmt::format("launched no kernel that the preload library saw ({} process{} "
                        "reported), so there is no GPU phase to time",
                        processes, processes == 1 ? "" : "es")};
  if (last_sync_ns == 0)
    return {std::nullopt, "launched kernels but never waited for them (no stream, event or "
                          "context synchronization, no synchronous copy), so its GPU phase has "
                          "no end: use --metric wall, or a number it prints"};
  if (last_sync_ns <= first_work_ns)
    return {
        std::nullopt,
        fmt::format("last synchronized with the GPU {:.6f} s before its first kernel launch, so "
                    "its GPU phase has no end: use --metric wall, or a number it prints",
                    static_cast<double>(first_work_ns - last_sync_ns) * 1e-9)};
  return {static_cast<double>(last_sync_ns - first_work_ns) * 1e-9, {}};
}

double speedup(better direction, double reference, double here) {
  return direction == better::lower ? reference / here : here / reference;
}

} // namespace greenctx::cli::scale
