// SPDX-License-Identifier: Apache-2.0
#include "commands/verify/verify_record.hpp"

#include "report/json.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace greenctx::cli::verification {
namespace {

using report::cell;
using report::number_format;
using report::yes_no;

const number_format count{"", 0}, micros{"us", 1};

cell number(double v) {
  return v;
}

char letter(std::size_t i) {
  return static_cast<char>(i < 26 ? 'A' + i : 'a' + (i - 26) % 26);
}

std::string listed(const std::vector<unsigned> &sms) {
  std::string out;
  for (unsigned s : sms)
    out += (out.empty() ? "" : " ") + std::to_string(s);
  return out;
}

std::string device_of(const gpu_result &g) {
  const auto it = g.environment.find("device");
  return it == g.environment.end() ? std::string("?") : it->dump();
}

// The partitions of one GPU and its combined row ('!' where two partitions used one SM).
void add_rows(report::series &s, const gpu_result &g) {
  const verify_report &v = g.report;
  const cell device =
      g.environment.contains("device") ? g.environment["device"].get<double>() : cell{};
  std::string combined(v.sm_span, '.');
  for (std::size_t i = 0; i < v.parts.size(); ++i) {
    const partition_usage &u = v.parts[i];
    const std::string map = sm_map(u.sms, v.sm_span, letter(i));
    for (std::size_t c = 0; c < map.size() && c < combined.size(); ++c)
      if (map[c] != '.')
        combined[c] = combined[c] == '.' ? map[c] : '!';
    s.rows.push_back({device, number(static_cast<double>(i)), u.label,
                      u.requested ? number(u.requested) : cell{}, number(u.obtained),
                      number(static_cast<double>(u.sms.size())), map,
                      v.timed ? number(u.start_us) : cell{}, v.timed ? number(u.end_us) : cell{},
                      listed(u.sms), i < g.rounding.size() ? cell{g.rounding[i]} : cell{}});
  }
  s.rows.push_back(
      {device, cell{}, "all", cell{}, cell{}, cell{}, combined, cell{}, cell{}, cell{}, cell{}});
}

// What the text said of one GPU after its table: rounding, timing, notes, violations, verdict.
void add_notes(std::vector<std::string> &notes, const gpu_result &g, const std::string &prefix) {
  const verify_report &v = g.report;
  for (std::size_t i = 0; i < g.rounding.size() && i < v.parts.size(); ++i)
    if (!g.rounding[i].empty())
      notes.push_back(
          fmt::format("{}note: partition {} ({}): {}", prefix, i, v.parts[i].label, g.rounding[i]));
  if (v.timed && v.parts.size() > 1 && v.min_overlap_us > 0)
    notes.push_back(fmt::format("{}timing: the probes ran at the same time (shortest overlap "
                                "between two partitions: {:.1f} us)",
                                prefix, v.min_overlap_us));
  for (const auto &n : v.notes)
    notes.push_back(prefix + "note: " + n);
  for (const auto &x : v.violations)
    notes.push_back(prefix + "VIOLATION: " + x);
  if (v.ok())
    notes.push_back(prefix + "OK: every partition stayed within its SMs, and no SM was used by "
                             "two partitions");
  else
    notes.push_back(fmt::format("{}FAILED: {} violation{} ('!' in the map marks an SM used by two "
                                "partitions)",
                                prefix, v.violations.size(), v.violations.size() == 1 ? "" : "s"));
}

} // namespace

std::size_t results::passed() const {
  return static_cast<std::size_t>(
      std::count_if(gpus.begin(), gpus.end(), [](const gpu_result &g) { return g.report.ok(); }));
}

std::string plan_summary(const gpu_result &g) {
  if (g.groups == 0)
    return "no split: one partition over the whole device";
  std::string s = fmt::format("one split into {} group{} of {} SMs", g.groups,
                              g.groups == 1 ? "" : "s", g.piece_size);
  if (g.rest)
    s += ", the remainder as 'rest'";
  return s;
}

report::record verify_record(const results &r, const nlohmann::json &environment) {
  report::record rec;
  rec.kind = "verify";
  const bool one = r.gpus.size() == 1;
  std::string ordinals;
  for (const auto &g : r.gpus)
    ordinals += (ordinals.empty() ? "" : ",") + device_of(g);
  rec.title = one ? fmt::format("greenctx verify {} on {}", r.split,
                                report::gpu_described(r.gpus.front().environment))
                  : fmt::format("greenctx verify {} on GPUs {}", r.split, ordinals);
  rec.environment = report::environment_of(environment);
  rec.config = {{"split", "split", r.split, {}},
                {"ignore_coscheduling", "ignore co-scheduling", yes_no(r.ignore_coscheduling), {}}};
  rec.config.push_back({"blocks_per_sm", "probe blocks per SM",
                        number(static_cast<double>(r.blocks_per_sm)), count});
  if (one)
    rec.values.push_back({"plan", "plan", plan_summary(r.gpus.front()), {}});
  rec.values.push_back({"ok", "ok", yes_no(r.ok()), {}});
  rec.values.push_back(
      {"gpus_passed", "GPUs passed", number(static_cast<double>(r.passed())), count, one});

  unsigned span = 0;
  for (const auto &g : r.gpus)
    span = std::max(span, g.report.sm_span);
  report::series parts{
      "partitions",
      "Partitions",
      {{"device", "GPU", count, align::right, one},
       {"partition", "#", count},
       {"label", "partition", {}, align::left},
       {"requested", "requested", count},
       {"obtained", "obtained", count},
       {"used", "used", count},
       {"map",
        span ? fmt::format("SM map (one character per SM id, 0..{})", span - 1) : "SM map",
        {},
        align::left},
       {"start_us", "start", micros, align::right, true},
       {"end_us", "end", micros, align::right, true},
       {"sms", "SM ids used", {}, align::left, true},
       {"rounding", "rounding", {}, align::left, true}},
      {}};
  report::series gpus{"gpus",
                      "GPUs",
                      {{"device", "GPU", count},
                       {"gpu", "name", {}, align::left},
                       {"sm_count", "SMs", count},
                       {"plan", "plan", {}, align::left},
                       {"piece_size", "piece", count},
                       {"groups", "groups", count},
                       {"timed", "timed", {}, align::left},
                       {"min_overlap_us", "shortest overlap", micros},
                       {"violations", "violations", count},
                       {"ok", "ok", {}, align::left}},
                      {}};
  gpus.detail = true;
  for (const auto &g : r.gpus) {
    add_rows(parts, g);
    const auto env = [&](const char *key) -> cell {
      const auto it = g.environment.find(key);
      if (it == g.environment.end() || it->is_null())
        return {};
      return it->is_number() ? cell{it->get<double>()} : cell{it->get<std::string>()};
    };
    const verify_report &v = g.report;
    gpus.rows.push_back({env("device"), env("gpu"), env("sm_count"), plan_summary(g),
                         number(g.piece_size), number(g.groups), yes_no(v.timed),
                         v.timed && v.parts.size() > 1 ? number(v.min_overlap_us) : cell{},
                         number(static_cast<double>(v.violations.size())), yes_no(v.ok())});
    add_notes(rec.notes, g, one ? "" : "GPU " + device_of(g) + ": ");
  }
  rec.tables.push_back(std::move(parts));
  rec.tables.push_back(std::move(gpus));
  if (!one)
    rec.notes.push_back(fmt::format("{}: {} of {} GPUs ({}) passed", r.ok() ? "OK" : "FAILED",
                                    r.passed(), r.gpus.size(), ordinals));
  return rec;
}

} // namespace greenctx::cli::verification

namespace greenctx::cli::verification {
namespace {

double median(std::vector<double> v) {
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

} // namespace

report::record processes_record(const process_results &r, const nlohmann::json &environment) {
  report::record rec;
  rec.kind = "verify-processes";
  rec.title = fmt::format("greenctx verify {} --processes on {}: one process per piece (greenctx "
                          "run --split {} --piece I)",
                          r.split, report::gpu_described(environment), r.split);
  rec.environment = report::environment_of(environment);
  const number_format millis{"ms", 1};
  rec.config = {{"split", "split", r.split, {}},
                {"ignore_coscheduling", "ignore co-scheduling", yes_no(r.ignore_coscheduling), {}},
                {"spin_ms", "fill wave", number(r.spin_ms), {"ms", 0}},
                {"waves", "waves a fill", number(r.waves), count},
                {"rounds", "rounds", number(r.rounds), count}};
  rec.values = {{"mps_active",
                 "MPS",
                 !r.mps_active ? cell{"unknown"} : cell{*r.mps_active ? "active" : "not active"},
                 {}},
                {"expected_ms", "a fill on exactly its piece", number(r.expected_ns / 1e6), millis},
                {"work_iterations", "work: multiply-adds a thread",
                 number(static_cast<double>(r.iterations)), count},
                {"overlap",
                 "work of the pieces at the same time (median of the rounds)",
                 r.pieces.size() > 1 ? number(std::max(0.0, r.report.overlap)) : cell{},
                 {"", 2}},
                {"ok", "ok", yes_no(r.report.ok()), {}}};
  report::series pieces{"pieces",
                        "Pieces",
                        {{"piece", "#", count},
                         {"label", "piece", {}, align::left},
                         {"sms", "SMs", count},
                         {"told", "told", count},
                         {"used", "used", count},
                         {"pid", "pid", count, align::right, true},
                         {"alone_ms", "fill alone", millis},
                         {"alone_ratio", "fill / expected", {"", 2}, align::right, true},
                         {"work_alone_ms", "work alone", millis},
                         {"work_beside_ms", "work beside the others", millis},
                         {"slowdown", "slowdown", {"x", 2}}},
                        {}};
  report::series rounds{"rounds",
                        "Each piece's work in each round (the GPU's timer)",
                        {{"piece", "#", count},
                         {"round", "round", count},
                         {"start_ns", "start", {"ns", 0}},
                         {"end_ns", "end", {"ns", 0}}},
                        {}};
  rounds.detail = true;
  for (std::size_t i = 0; i < r.pieces.size(); ++i) {
    const piece_measurement &m = r.pieces[i];
    std::vector<double> beside;
    for (std::size_t k = 0; k < m.together.size(); ++k) {
      beside.push_back(m.together[k].length_ns());
      rounds.rows.push_back({number(static_cast<double>(i)), number(static_cast<double>(k + 1)),
                             number(m.together[k].start_ns), number(m.together[k].end_ns)});
    }
    const auto at = [](const std::vector<double> &v, std::size_t i) {
      return i < v.size() ? cell{v[i]} : cell{};
    };
    pieces.rows.push_back(
        {number(static_cast<double>(i)), m.label, number(m.planned), number(m.told), number(m.used),
         i < r.pids.size() ? number(static_cast<double>(r.pids[i])) : cell{},
         number(m.alone.length_ns() / 1e6), at(r.report.alone_ratio, i),
         number(m.work_alone.length_ns() / 1e6),
         beside.empty() ? cell{} : number(median(beside) / 1e6), at(r.report.slowdown, i)});
  }
  rec.tables.push_back(std::move(pieces));
  rec.tables.push_back(std::move(rounds));
  rec.notes.push_back(fmt::format(
      "fill: {} waves of blocks that hold their SMs {} ms each, {:.1f} ms on exactly a piece's "
      "SMs; work: {} multiply-adds a thread in the same blocks",
      r.waves, r.spin_ms, r.expected_ns / 1e6, r.iterations));
  if (r.mps_active == false)
    rec.notes.push_back("MPS: not active: the processes take turns on the GPU and this check "
                        "fails; start MPS with greenctx mps start");
  else if (!r.mps_active)
    rec.notes.push_back("MPS: unknown: this driver does not say whether the processes are MPS "
                        "clients");
  for (const auto &n : r.report.notes)
    rec.notes.push_back("note: " + n);
  for (const auto &v : r.report.violations)
    rec.notes.push_back("VIOLATION: " + v);
  rec.notes.push_back(r.report.ok()
                          ? "OK: each process was told its piece's SMs, stayed on them, "
                            "and the pieces ran side by side"
                          : fmt::format("FAILED: {} violation{}", r.report.violations.size(),
                                        r.report.violations.size() == 1 ? "" : "s"));
  return rec;
}

} // namespace greenctx::cli::verification
