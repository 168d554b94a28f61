// greenctx tune: choose the split by measurement (greenctx::measure::tune) for bench's built-in
// workloads, and print the curve, the choice and the --sms/split string to use.
#include "bench/workload_options.hpp"
#include "cli_common.hpp"
#include "commands.hpp"
#include "report/json.hpp"
#include "report/output.hpp"
#include "report/table.hpp"
#include "sm_list_option.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <optional>

namespace greenctx::cli {
namespace {

constexpr const char *api = "greenctx tune";

struct tune_options {
  int device = 0;
  bench::workload_options work;
  bench::config cfg;
  std::optional<double> p99_us, p99_times_alone, within_best;
  std::string search = "guided", sizes, json;
  bool exhaustive = false, quiet = false;
  unsigned samples = 300, confirm_samples = 1000, rounds = 2, gap_us = 100;
};

// A number as people type it: decimal digits with at most one decimal point ("1.5", "40").
CLI::Validator decimal_fraction() {
  return CLI::Validator(
      [](std::string &text) -> std::string {
        const auto point = text.find('.');
        const std::string whole = text.substr(0, point);
        const std::string part = point == std::string::npos ? "" : text.substr(point + 1);
        const bool digits = !whole.empty() && read_decimal(whole).has_value() &&
                            (point == std::string::npos || read_decimal(part).has_value());
        if (!digits || whole.size() > 9)
          return "'" + text + "' is not a decimal number such as 40 or 1.5";
        return {};
      },
      "NUMBER");
}

std::string rate_text(const measure::tune_result &r, double rate) {
  return fmt::format("{:.4g} {}", rate / r.background_unit_scale, r.background_unit);
}

std::string answer_line(const char *search, const measure::tune_answer &a) {
  return fmt::format("{} search: {} measurement{}, {:.1f} s: {}\n", search, a.measured.size(),
                     a.measured.size() == 1 ? "" : "s", a.seconds, a.reason);
}

const measure::tune_point *point_of(const measure::tune_result &r, std::optional<unsigned> sms) {
  for (const auto &p : r.curve)
    if (sms && p.critical_sms == *sms)
      return &p;
  return nullptr;
}

std::string text(const measure::tune_result &r, const device &dev) {
  std::string out = fmt::format(
      "greenctx tune: {} critical, {} background on GPU {} ({}, {} SMs)\nobjective: {}\n"
      "critical alone on the whole GPU: p50 {:.1f} us, p99 {:.1f} us ({} samples)\n\n",
      r.critical_name, r.background_name, dev.ordinal(), dev.name(), r.device_sms,
      r.cfg.objective.describe(), r.alone.p50, r.alone.p99, r.alone.count);
  const double limit = r.answer().limit_us;
  std::vector<row> rows;
  for (const auto &p : r.curve) {
    const bool pareto =
        std::find(r.pareto.begin(), r.pareto.end(), p.critical_sms) != r.pareto.end();
    rows.push_back({fmt::format("{},rest", p.critical_sms), std::to_string(p.background_sms),
                    fmt::format("{:.1f}", p.critical.p50), fmt::format("{:.1f}", p.critical.p99),
                    rate_text(r, p.background_rate), std::to_string(p.critical.count),
                    p.critical.p99 <= limit ? "yes" : "no", pareto ? "yes" : "",
                    r.answer().chosen == p.critical_sms ? "<- chosen" : ""});
  }
  out += text_table({{"split", align::left, 9},
                     {"bg SMs", align::right, 6},
                     {"p50 us", align::right, 7},
                     {"p99 us", align::right, 7},
                     {"background", align::right, 18},
                     {"samples", align::right, 7},
                     {"meets", align::left, 5},
                     {"pareto", align::left, 6},
                     {"", align::left}},
                    rows);
  out += "\n";
  if (r.guided)
    out += answer_line("guided", *r.guided);
  if (r.exhaustive)
    out += answer_line("exhaustive", *r.exhaustive);
  if (r.guided && r.exhaustive) {
    const auto *g = point_of(r, r.guided->chosen), *e = point_of(r, r.exhaustive->chosen);
    if (g && e && e->background_rate > 0)
      out += fmt::format("guided against exhaustive: {} SMs against {}, background rate {:.3f} "
                         "of the exhaustive choice's, in {:.2f} of its time\n",
                         g->critical_sms, e->critical_sms, g->background_rate / e->background_rate,
                         r.guided->seconds / r.exhaustive->seconds);
  }
  out += r.split().empty() ? "no split to use: none met the objective\n"
                           : fmt::format("use: {} (greenctx split/PartitionSet, bench "
                                         "--critical-sms {})\n",
                                         r.split(), r.split().substr(0, r.split().find(',')));
  return out;
}

nlohmann::json point_json(const measure::tune_result &r, const measure::tune_point &p) {
  return {{"critical_sms", p.critical_sms},
          {"background_sms", p.background_sms},
          {"critical_gpu_us", summary_json(p.critical)},
          {"background_rate", p.background_rate / r.background_unit_scale},
          {"seconds", p.seconds}};
}

nlohmann::json answer_json(const measure::tune_result &r,
                           const std::optional<measure::tune_answer> &a) {
  if (!a)
    return nullptr;
  nlohmann::json j = {{"chosen", a->chosen ? nlohmann::json(*a->chosen) : nullptr},
                      {"closest", a->closest ? nlohmann::json(*a->closest) : nullptr},
                      {"reason", a->reason},
                      {"limit_us", a->limit_us},
                      {"seconds", a->seconds},
                      {"measured", nlohmann::json::array()}};
  for (const auto &p : a->measured)
    j["measured"].push_back(point_json(r, p));
  return j;
}

nlohmann::json to_json(const measure::tune_result &r, nlohmann::json env) {
  nlohmann::json j = {{"environment", std::move(env)},
                      {"objective", r.cfg.objective.describe()},
                      {"critical", r.critical_name},
                      {"background", r.background_name},
                      {"background_unit", r.background_unit},
                      {"samples", r.cfg.samples},
                      {"confirm_samples", r.cfg.confirm_samples},
                      {"candidates", r.candidates},
                      {"alone_gpu_us", summary_json(r.alone)},
                      {"curve", nlohmann::json::array()},
                      {"pareto", r.pareto},
                      {"guided", answer_json(r, r.guided)},
                      {"exhaustive", answer_json(r, r.exhaustive)},
                      {"split", r.split().empty() ? nullptr : nlohmann::json(r.split())},
                      {"reason", r.answer().reason}};
  for (const auto &p : r.curve)
    j["curve"].push_back(point_json(r, p));
  return j;
}

int run_tune(tune_options &opt) {
  measure::tune_config cfg;
  if (opt.p99_us)
    cfg.objective = {measure::tune_goal::p99_at_most_us, *opt.p99_us};
  else if (opt.within_best)
    cfg.objective = {measure::tune_goal::smallest_within_best, *opt.within_best};
  else
    cfg.objective = {measure::tune_goal::p99_at_most_times_alone,
                     opt.p99_times_alone.value_or(1.5)};
  cfg.search = opt.exhaustive               ? measure::tune_search::exhaustive
               : opt.search == "both"       ? measure::tune_search::both
               : opt.search == "exhaustive" ? measure::tune_search::exhaustive
                                            : measure::tune_search::guided;
  cfg.samples = opt.samples;
  cfg.confirm_samples = opt.confirm_samples;
  cfg.rounds = opt.rounds;
  cfg.gap = std::chrono::microseconds(opt.gap_us);
  if (!opt.sizes.empty())
    cfg.sizes = parse_sm_list(opt.sizes, {api, "--sizes", "e.g. --sizes 8,16,24,32", 4096, true});
  measure::check_tune_config(cfg);
  bench::apply(opt.work, opt.cfg);
  check_json_path(api, opt.json);

  const driver_info drv = query_driver();
  const device dev(opt.device);
  if ((opt.cfg.background == bench::background_kind::gemm ||
       opt.cfg.critical == bench::critical_kind::gemm) &&
      !measure::gemm::available())
    throw unsupported_error(measure::gemm::availability(), 0, drv.version);
  nlohmann::json env = environment_json(drv, dev);
  env["date"] = utc_now();
  env["command"] = command_line();
  const auto [critical, background] = bench::workloads(dev, opt.cfg);
  const auto progress = [&](const std::string &line) {
    if (!opt.quiet)
      std::fprintf(stderr, "greenctx tune: %s\n", line.c_str());
  };
  const measure::tune_result r = measure::tune(dev, critical, background, cfg, progress);
  if (!opt.json.empty())
    write_json(api, "tune", opt.json, to_json(r, env));
  if (!json_replaces_text(opt.json))
    std::fputs(text(r, dev).c_str(), stdout);
  return r.split().empty() ? exit_check_failed : exit_ok;
}

} // namespace

void add_tune(CLI::App &app, action &run) {
  auto opt = std::make_shared<tune_options>();
  auto *cmd = app.add_subcommand(
      "tune", "Choose the split by measurement: the critical workload on N SMs and the background "
              "on the rest, for each N this GPU makes, measured with both running; answers the "
              "N,rest that meets the objective with the most background throughput (exit 1 when "
              "none does, with the closest)");
  add_device_option(*cmd, opt->device);
  bench::add_workload_options(*cmd, opt->work, opt->cfg);
  auto *p99 = cmd->add_option("--p99-us", opt->p99_us,
                              "Objective: the critical p99 (GPU time) at most this many us")
                  ->transform(decimal_fraction());
  auto *alone = cmd->add_option("--p99-times-alone", opt->p99_times_alone,
                                "Objective (the default, 1.5): the critical p99 at most this "
                                "factor over its p99 alone on the whole GPU")
                    ->transform(decimal_fraction());
  auto *within = cmd->add_option("--within-best", opt->within_best,
                                 "Objective: the smallest critical partition whose p99 is within "
                                 "this fraction (0.1: 10%) of the best split's")
                     ->transform(decimal_fraction());
  p99->excludes(alone)->excludes(within);
  alone->excludes(within);
  cmd->add_option("--search", opt->search,
                  "guided (bisection over the sizes, the choice and its neighbours re-measured "
                  "with --confirm-samples), exhaustive (every size with --confirm-samples) or "
                  "both (and how close guided came, in what share of the time)")
      ->check(CLI::IsMember({"guided", "exhaustive", "both"}))
      ->capture_default_str();
  cmd->add_flag("--exhaustive", opt->exhaustive, "The same as --search exhaustive");
  cmd->add_option("--samples", opt->samples, "Critical samples per split while searching")
      ->transform(decimal(1, 10000000))
      ->capture_default_str();
  cmd->add_option("--confirm-samples", opt->confirm_samples,
                  "Critical samples of each confirming (and each exhaustive) measurement")
      ->transform(decimal(1, 10000000))
      ->capture_default_str();
  cmd->add_option("--rounds", opt->rounds, "Rounds of each measurement")
      ->transform(decimal(1, 100000))
      ->capture_default_str();
  cmd->add_option("--gap-us", opt->gap_us, "Mean host pause between samples (jittered +-50%)")
      ->transform(decimal(0, 1000000))
      ->capture_default_str();
  cmd->add_option("--sizes", opt->sizes,
                  "Critical partition sizes to consider, increasing, separated by commas "
                  "(default: every N,rest this GPU makes)");
  add_json_option(*cmd, opt->json);
  cmd->add_flag("-q,--quiet", opt->quiet, "No progress lines on stderr");
  cmd->callback([opt, &run] { run = [opt] { return run_tune(*opt); }; });
}

} // namespace greenctx::cli
