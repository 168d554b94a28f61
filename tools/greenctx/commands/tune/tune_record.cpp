// SPDX-License-Identifier: Apache-2.0
#include "commands/tune/tune_record.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace greenctx::cli {
namespace {

using report::cell;
using report::field;
using report::number_format;
using report::quantity;

const number_format us{"us", 1}, count{"", 0}, seconds{"s", 2}, share{"", 3};

cell maybe(const std::optional<unsigned> &v) {
  return v ? cell{static_cast<double>(*v)} : cell{};
}

// Enough decimals for about four significant digits of the largest rate.
int rate_digits(const std::vector<measure::tune_point> &curve, double scale) {
  double most = 0;
  for (const auto &p : curve)
    most = std::max(most, p.background_rate / scale);
  return report::decimals_for(most);
}

const measure::tune_point *point_of(const measure::tune_result &r, std::optional<unsigned> sms) {
  for (const auto &p : r.curve)
    if (sms && p.critical_sms == *sms)
      return &p;
  return nullptr;
}

cell interval_end(const measure::tune_point &p, bool high) {
  if (!p.p99_interval)
    return {};
  return high ? p.p99_interval->high : p.p99_interval->low;
}

report::series measurements(const char *key, const char *title, const measure::tune_result &r,
                            const measure::tune_answer &a, const number_format &rate) {
  report::series s{key,
                   title,
                   {{"order", "#", count},
                    {"critical_sms", "critical SMs", count},
                    {"samples", "samples", count},
                    {"p50_us", "p50", us},
                    {"p99_us", "p99", us},
                    {"background_rate", "background", rate},
                    {"seconds", "took", seconds}},
                   {}};
  s.detail = true;
  for (std::size_t i = 0; i < a.measured.size(); ++i) {
    const auto &p = a.measured[i];
    s.rows.push_back({static_cast<double>(i + 1), static_cast<double>(p.critical_sms),
                      static_cast<double>(p.critical.count), p.critical.p50, p.critical.p99,
                      p.background_rate / r.background_unit_scale, p.seconds});
  }
  return s;
}

void add_answer(report::record &rec, const char *name, const measure::tune_answer &a) {
  const std::string n(name);
  // The note below says these to people: detail.
  rec.values.push_back(
      {n + "_chosen_sms", n + " search's choice (critical SMs)", maybe(a.chosen), count, true});
  rec.values.push_back({n + "_measurements", n + " search's measurements",
                        static_cast<double>(a.measured.size()), count, true});
  rec.values.push_back({n + "_seconds", n + " search's time", a.seconds, seconds, true});
  rec.notes.push_back(fmt::format("{} search: {} measurement{}, {:.1f} s: {}", n, a.measured.size(),
                                  a.measured.size() == 1 ? "" : "s", a.seconds, a.reason));
}

} // namespace

report::record tune_record(const measure::tune_result &r, std::vector<quantity> environment,
                           const std::string &objective) {
  report::record rec;
  rec.kind = "tune";
  rec.title = fmt::format("greenctx tune: {} critical work, {} background", r.critical_name,
                          r.background_name);
  rec.environment = std::move(environment);
  std::string sizes;
  for (unsigned n : r.candidates)
    sizes += (sizes.empty() ? "" : ",") + std::to_string(n);
  const char *search = r.guided && r.exhaustive ? "both" : r.exhaustive ? "exhaustive" : "guided";
  rec.config = {
      {"objective", "objective", objective, {}},
      {"search", "search", search, {}},
      {"samples", "samples while searching", static_cast<double>(r.cfg.samples), count},
      {"confirm_samples", "samples confirming", static_cast<double>(r.cfg.confirm_samples), count},
      {"rounds", "rounds", static_cast<double>(r.cfg.rounds), count},
      {"gap_us", "gap", static_cast<double>(r.cfg.gap.count()), {"us", 0}},
      {"hold_launch",
       "each sample held until enqueued",
       std::string(r.cfg.hold_launch ? "yes" : "no"),
       {}},
      {"sizes", "critical sizes", sizes, {}}};

  const auto &answer = r.answer();
  const number_format rate{r.background_unit, rate_digits(r.curve, r.background_unit_scale)};
  const std::string split = r.split();
  rec.values = {
      {"split", "split to use", split.empty() ? cell{} : cell{split}, {}, true},
      {"chosen_sms", "chosen critical SMs", maybe(answer.chosen), count, true},
      {"closest_sms", "closest critical SMs (none met the objective)", maybe(answer.closest), count,
       !answer.closest},
      {"alone_p50_us", "critical p50 alone on the whole GPU", r.alone.p50, us},
      {"alone_p99_us", "critical p99 alone on the whole GPU", r.alone.p99, us},
      {"alone_samples", "samples alone", static_cast<double>(r.alone.count), count, true},
      {"limit_us", "the objective's p99 bound", answer.limit_us, us},
  };

  report::series curve{
      "curve",
      "measured curve (the best-sampled measurement of each size; p99 low..high: its 95% "
      "interval)",
      {{"critical_sms", "critical SMs", count},
       {"background_sms", "bg SMs", count},
       {"p50_us", "p50", us},
       {"p99_us", "p99", us},
       {"p99_low_us", "p99 low", us},
       {"p99_high_us", "p99 high", us},
       {"background_rate", "background", rate},
       {"samples", "samples", count},
       {"meets", "meets", {}, align::left},
       {"pareto", "pareto", {}, align::left},
       {"chosen", "", {}, align::left}},
      {}};
  for (const auto &p : r.curve) {
    const bool pareto =
        std::find(r.pareto.begin(), r.pareto.end(), p.critical_sms) != r.pareto.end();
    curve.rows.push_back(
        {static_cast<double>(p.critical_sms), static_cast<double>(p.background_sms), p.critical.p50,
         p.critical.p99, interval_end(p, false), interval_end(p, true),
         p.background_rate / r.background_unit_scale, static_cast<double>(p.critical.count),
         std::string(p.critical.p99 <= answer.limit_us ? "yes" : "no"),
         std::string(pareto ? "yes" : ""),
         std::string(answer.chosen == p.critical_sms ? "<- chosen" : "")});
  }
  rec.tables.push_back(std::move(curve));

  if (r.guided) {
    add_answer(rec, "guided", *r.guided);
    rec.tables.push_back(
        measurements("guided", "the guided search's measurements", r, *r.guided, rate));
  }
  if (r.exhaustive) {
    add_answer(rec, "exhaustive", *r.exhaustive);
    rec.tables.push_back(
        measurements("exhaustive", "the exhaustive search's measurements", r, *r.exhaustive, rate));
  }
  if (r.guided && r.exhaustive) {
    const auto *g = point_of(r, r.guided->chosen), *e = point_of(r, r.exhaustive->chosen);
    if (g && e && e->background_rate > 0 && r.exhaustive->seconds > 0) {
      const double rate_share = g->background_rate / e->background_rate,
                   time_share = r.guided->seconds / r.exhaustive->seconds;
      rec.values.push_back({"rate_share", "guided choice's background rate over exhaustive's",
                            rate_share, share, true});
      rec.values.push_back(
          {"time_share", "guided search's time over exhaustive's", time_share, {"", 2}, true});
      rec.notes.push_back(
          fmt::format("guided against exhaustive: {} SMs against {}, background rate {:.3f} of the "
                      "exhaustive choice's, in {:.2f} of its time",
                      g->critical_sms, e->critical_sms, rate_share, time_share));
    }
  }
  if (r.repeat) {
    const auto &p = *r.repeat;
    for (quantity q : std::initializer_list<quantity>{
             {"repeat_p99_us", "the choice measured again: p99", p.critical.p99, us},
             {"repeat_p99_low_us", "the choice measured again: p99 low", interval_end(p, false),
              us},
             {"repeat_p99_high_us", "the choice measured again: p99 high", interval_end(p, true),
              us},
             {"repeat_background_rate", "the choice measured again: background",
              p.background_rate / r.background_unit_scale, rate},
             {"repeat_meets",
              "the choice measured again meets the bound",
              std::string(r.repeat_meets ? "yes" : "no"),
              {}}}) {
      q.detail = true; // the note says it
      rec.values.push_back(std::move(q));
    }
    rec.notes.push_back(fmt::format(
        "measured again: {} SMs, p99 {:.1f} us ({} the bound {:.1f} us), background {}",
        p.critical_sms, p.critical.p99, r.repeat_meets ? "within" : "OVER", answer.limit_us,
        report::show(p.background_rate / r.background_unit_scale, rate)));
  }
  rec.notes.push_back(split.empty() ? std::string("no split to use: none met the objective")
                                    : fmt::format("use: {} (greenctx split/PartitionSet, bench "
                                                  "--critical-sms {})",
                                                  split, split.substr(0, split.find(','))));

  const std::optional<double> mark =
      answer.chosen ? std::optional<double>(*answer.chosen) : std::nullopt;
  rec.figures.push_back({"Critical latency (GPU time) by the critical partition's SMs",
                         "curve",
                         "critical_sms",
                         {"p99_us", "p50_us"},
                         "us",
                         {{"limit_us", "the bound", answer.limit_us, us}},
                         mark});
  rec.figures.push_back({"Background throughput on the rest",
                         "curve",
                         "critical_sms",
                         {"background_rate"},
                         r.background_unit,
                         {},
                         mark});
  return rec;
}

} // namespace greenctx::cli
