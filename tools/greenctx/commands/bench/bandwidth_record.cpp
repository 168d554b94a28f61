// SPDX-License-Identifier: Apache-2.0
#include "commands/bench/bandwidth.hpp"
#include "common/cli_common.hpp"

#include <greenctx/plan/decimal.hpp>
#include <greenctx/plan/error.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <iterator>

namespace greenctx::cli::bench::bandwidth {
namespace {

using measure::memory_level;
using measure::memory_op;
using report::cell;
using report::number_format;

constexpr const char *api = "greenctx bench bandwidth";

// The items as text separated by commas: "8,16,32", "read,copy".
std::string joined(const auto &items, const auto &text) {
  std::string out;
  for (const auto &x : items)
    out += (out.empty() ? "" : ",") + std::string(text(x));
  return out;
}

const measure::bandwidth_point *whole_device(const measure::bandwidth_result &r, memory_level level,
                                             memory_op op) {
  for (const auto &p : r.points)
    if (p.whole_device && p.level == level && p.op == op)
      return &p;
  return nullptr;
}

cell gbs_of(const std::optional<measure::bandwidth_rate> &rate) {
  return rate ? cell{rate->gbs()} : cell{};
}

} // namespace

std::vector<memory_op> parse_ops(std::string_view text) {
  return parse_names(text, api, "--ops", measure::memory_ops,
                     [](memory_op x) { return measure::name(x); });
}

std::vector<memory_level> parse_levels(std::string_view text) {
  return parse_names(text, api, "--levels", measure::memory_levels,
                     [](memory_level x) { return measure::name(x); });
}

std::vector<unsigned> quick_sizes(const std::vector<unsigned> &made) {
  std::vector<unsigned> out;
  if (made.empty())
    return out;
  for (std::size_t at : {std::size_t{0}, made.size() / 3, 2 * made.size() / 3, made.size() - 1})
    if (out.empty() || made[at] > out.back())
      out.push_back(made[at]);
  return out;
}

unsigned sms_reaching(const measure::bandwidth_result &r, memory_level level, memory_op op,
                      double share) {
  const auto *all = whole_device(r, level, op);
  if (!all)
    return 0;
  for (const auto &p : r.points)
    if (p.level == level && p.op == op && p.alone.gbs() >= share * all->alone.gbs())
      return p.sms;
  return 0;
}

report::record bandwidth_record(const measure::bandwidth_result &r,
                                const nlohmann::json &environment) {
  const number_format count{"", 0}, gbs{"GB/s", 1}, mib{"MiB", 1};
  const auto number = [](auto v) { return static_cast<double>(v); };
  report::record rec;
  rec.kind = "bench-bandwidth";
  rec.schema = 1;
  rec.title = "greenctx bench bandwidth: memory bandwidth against a green context's SMs";
  rec.environment = report::environment_of(environment);
  const auto named = [](auto x) { return measure::name(x); };
  rec.config = {{"sms",
                 "SM counts (N of N,rest; then the whole device)",
                 joined(r.cfg.sizes, [](unsigned n) { return std::to_string(n); }),
                 {}},
                {"ops", "operations", joined(r.cfg.ops, named), {}},
                {"levels", "levels", joined(r.cfg.levels, named), {}},
                {"dram_buffer_mib", "DRAM buffer", number(r.cfg.dram_bytes) / (1 << 20), mib},
                {"repeats", "timed kernels per measurement", number(r.cfg.repeats), count},
                {"beside", "beside the rest doing the same", report::yes_no(r.cfg.beside), {}}};
  rec.values = {{"device_sms", "device SMs", number(r.device_sms), count},
                {"l2_mib", "L2", number(r.l2_bytes) / (1 << 20), mib}};

  report::series curve{"curve",
                       "GB/s against SMs: alone, and beside the rest of the GPU doing the same",
                       {{"line", "level op", {}, align::left},
                        {"sms", "SMs", count},
                        {"alone_gbs", "alone", gbs},
                        {"beside_gbs", "beside", gbs},
                        {"rest_sms", "rest SMs", count},
                        {"rest_alone_gbs", "rest alone", gbs},
                        {"rest_beside_gbs", "rest beside", gbs},
                        {"together_gbs", "together", gbs},
                        {"overlapped", "overlapped", {}, align::left},
                        {"footprint_mib", "footprint", mib, align::right, true},
                        {"passes", "passes", count, align::right, true}},
                       {}};
  for (const auto &p : r.points) {
    const bool beside = p.beside && p.rest_beside;
    curve.rows.push_back({fmt::format("{} {}", measure::name(p.level), measure::name(p.op)),
                          number(p.sms), p.alone.gbs(), gbs_of(p.beside),
                          p.whole_device ? cell{} : cell{number(p.rest_sms)}, gbs_of(p.rest_alone),
                          gbs_of(p.rest_beside),
                          beside ? cell{p.beside->gbs() + p.rest_beside->gbs()} : cell{},
                          beside ? cell{report::yes_no(p.overlapped)} : cell{},
                          number(p.footprint) / (1 << 20), number(p.passes)});
  }
  rec.tables.push_back(std::move(curve));

  for (memory_level level : r.cfg.levels)
    for (memory_op op : r.cfg.ops) {
      const auto *all = whole_device(r, level, op);
      if (!all)
        continue;
      const std::string key = fmt::format("{}_{}", measure::name(level), measure::name(op));
      const unsigned reach = sms_reaching(r, level, op, 0.9);
      rec.values.push_back({key + "_all_gbs",
                            fmt::format("{} {} on all {} SMs", measure::name(level),
                                        measure::name(op), r.device_sms),
                            all->alone.gbs(), gbs});
      rec.values.push_back({key + "_sms_90", "SMs reaching 90% of it", number(reach), count, true});
      std::string note = fmt::format("{} {}: {:.1f} GB/s on all {} SMs; 90% of it from {} SMs",
                                     measure::name(level), measure::name(op), all->alone.gbs(),
                                     r.device_sms, reach);
      for (const auto &p : r.points)
        if (p.level == level && p.op == op && p.beside && p.rest_beside) {
          note += fmt::format("; {} SMs get {:.1f} GB/s beside their rest doing the same (alone "
                              "{:.1f}), the two together {:.1f}{}",
                              p.sms, p.beside->gbs(), p.alone.gbs(),
                              p.beside->gbs() + p.rest_beside->gbs(),
                              p.overlapped ? "" : " (not wholly overlapped)");
          break; // the fewest SMs
        }
      rec.notes.push_back(std::move(note));
    }

  report::figure alone{"Bandwidth alone on N SMs", "curve", "sms", {"alone_gbs"}, "GB/s", {}};
  alone.group = "line";
  alone.log_y = true;
  alone.y_from_zero = false;
  report::figure beside = alone;
  beside.title = "Bandwidth on N SMs beside the rest of the GPU doing the same";
  beside.y = {"beside_gbs"};
  rec.figures.push_back(std::move(alone));
  if (r.cfg.beside)
    rec.figures.push_back(std::move(beside));
  return rec;
}

} // namespace greenctx::cli::bench::bandwidth
