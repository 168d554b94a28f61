// greenctx tune: choose the split by measurement (greenctx::measure::tune) for bench's built-in
// workloads, and print the curve, the choice and the --sms/split string to use.
#include "bench/clocks.hpp"
#include "bench/workload_options.hpp"
#include "cli_common.hpp"
#include "commands.hpp"
#include "report/output.hpp"
#include "sm_list_option.hpp"
#include "tune_report.hpp"

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
  std::string search = "guided", sizes;
  output_options out;
  bool exhaustive = false, quiet = false, no_repeat = false;
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

// A tune JSON of schema 1 (before the report model) as a record.
report::record from_schema1(const nlohmann::json &j) {
  std::string objective;
  std::vector<report::quantity> env;
  const measure::tune_result r = tune_result_from_schema1(j, objective, env);
  report::record rec = tune_record(r, std::move(env), objective);
  for (auto &q : rec.config)
    if (q.key == "rounds" || q.key == "gap_us")
      q.value = {}; // not saved then
  return rec;
}

int run_tune(tune_options &opt) {
  if (!opt.out.from.empty()) {
    print_record(api, opt.out, read_record(api, "tune", opt.out.from, from_schema1));
    return exit_ok;
  }
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
  cfg.repeat = !opt.no_repeat;
  if (!opt.sizes.empty())
    cfg.sizes = parse_sm_list(opt.sizes, {api, "--sizes", "e.g. --sizes 8,16,24,32", 4096, true});
  measure::check_tune_config(cfg);
  bench::apply(opt.work, opt.cfg);
  check_output_paths(api, opt.out);

  const driver_info drv = query_driver();
  const device dev(opt.device);
  if ((opt.cfg.background == bench::background_kind::gemm ||
       opt.cfg.critical == bench::critical_kind::gemm) &&
      !measure::gemm::available())
    throw unsupported_error(measure::gemm::availability(), 0, drv.version);
  nlohmann::json env = environment_json(drv, dev);
  env["date"] = utc_now();
  env["command"] = command_line();
  env["clocks"] = bench::read_clocks(dev);
  const auto [critical, background] = bench::workloads(dev, opt.cfg);
  const auto progress = [&](const std::string &line) {
    if (!opt.quiet)
      std::fprintf(stderr, "greenctx tune: %s\n", line.c_str());
  };
  const measure::tune_result r = measure::tune(dev, critical, background, cfg, progress);
  print_record(api, opt.out, tune_record(r, report::environment_of(env), cfg.objective.describe()));
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
  cmd->add_flag("--no-repeat", opt->no_repeat,
                "Do not measure the chosen split a second time after the search");
  add_output_options(*cmd, opt->out,
                     {"Write the record as JSON to FILE", "Write the measured curve as CSV to FILE",
                      "Write the curve's plots as SVG to FILE",
                      "Write the report as markdown to FILE",
                      "Report a saved tune JSON again (any format above) without measuring"});
  cmd->add_flag("-q,--quiet", opt->quiet, "No progress lines on stderr");
  cmd->callback([opt, &run] { run = [opt] { return run_tune(*opt); }; });
}

} // namespace greenctx::cli
