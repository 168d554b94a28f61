// SPDX-License-Identifier: Apache-2.0
// greenctx tune: choose the split by measurement (greenctx::measure::tune) for bench's built-in
// workloads, or with --comm for the all-reduce beside a GEMM loop on every GPU
// (commands/tune/comm_tune.hpp), and print the curve, the choice and the --sms/split string to use.
#include "common/clocks.hpp"
#include "commands/bench/comm.hpp"
#include "commands/tune/comm_tune.hpp"
#include "common/workload_options.hpp"
#include "common/cli_common.hpp"
#include "common/help.hpp"
#include "commands/commands.hpp"
#include "report/output.hpp"
#include "common/sm_list_option.hpp"
#include "commands/tune/tune_record.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <optional>

namespace greenctx::cli {
namespace {

constexpr const char *api = "greenctx tune";

struct tune_options {
  std::string devices; ///< --device as typed; empty: 0, or all with --comm
  std::string bytes = "256M";
  unsigned comm_timeout = 600;
  bool comm = false;
  std::vector<std::string> not_for_comm; ///< options given that --comm does not take
  bench::workload_options work;
  bench::config cfg;
  std::optional<double> p99_us, p99_times_alone, within_best;
  std::string search = "guided", sizes;
  output_options out;
  bool exhaustive = false, quiet = false, no_repeat = false, no_hold = false;
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

measure::tune_config tune_config_of(const tune_options &opt) {
  measure::tune_config cfg;
  if (opt.p99_us)
    cfg.objective = {measure::tune_goal::p99_at_most_us, *opt.p99_us};
  else if (opt.within_best || (opt.comm && !opt.p99_times_alone))
    // --comm's default answers what bench --comm does: the fewest SMs within 10% of the best.
    cfg.objective = {measure::tune_goal::smallest_within_best, opt.within_best.value_or(0.1)};
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
  cfg.hold_launch = !opt.no_hold && !opt.comm; // --comm's runner times its own all-reduce
  if (!opt.sizes.empty())
    cfg.sizes = parse_sm_list(opt.sizes, {api, "--sizes", "e.g. --sizes 8,16,24,32", 4096, true});
  measure::check_tune_config(cfg);
  return cfg;
}

void print_progress(const tune_options &opt, const std::string &line) {
  if (!opt.quiet)
    std::fprintf(stderr, "greenctx tune: %s\n", line.c_str());
}

// --comm: everything is checked here, then measured in child processes, so that this process
// never starts the driver (commands/bench/comm_children.hpp).
int run_tune_comm(const tune_options &opt, const measure::tune_config &cfg) {
  namespace comm = bench::comm;
  if (!opt.not_for_comm.empty())
    throw request_error(CUDA_ERROR_INVALID_VALUE, api,
                        opt.not_for_comm.front() +
                            " does not apply with --comm (the all-reduce is the critical work "
                            "and the GEMM loop the background): leave it out");
  comm::tune_plan p;
  p.tune = cfg;
  // Refused here, before any child starts.
  p.run.measure.asked_devices = parse_device_list(opt.devices.empty() ? "all" : opt.devices, api);
  p.run.measure.sizes = comm::parse_sizes(opt.bytes, "--bytes");
  if (p.run.measure.sizes.size() != 1)
    throw request_error(CUDA_ERROR_INVALID_VALUE, api,
                        "--bytes " + opt.bytes + ": tune one message size at a time (e.g. 256M)");
  p.run.measure.gemm_n = opt.cfg.gemm_n;
  p.run.child_limit = std::chrono::seconds(opt.comm_timeout);
  check_output_paths(api, opt.out);
  measure::tune_result r;
  comm::tune_extras extras;
  if (const int code =
          comm::tune(p, r, extras, [&](const std::string &line) { print_progress(opt, line); });
      code != exit_ok)
    return code;
  nlohmann::json env = extras.env;
  for (const char *noise : {"env", "cublas", "split_sizes", "nccl_library"})
    env.erase(noise); // in bench --comm's JSON; here they would only crowd the header
  env["date"] = utc_now();
  env["command"] = command_line();
  report::record rec = tune_record(r, report::environment_of(env), cfg.objective.describe());
  rec.values.push_back({"gemm_alone_tflops",
                        "the GEMM loop alone on all SMs, per GPU",
                        extras.gemm_alone_tflops,
                        {"TFLOP/s", 1}});
  for (const auto &f : extras.failures)
    rec.notes.insert(rec.notes.end() - 1, "failed: " + f);
  if (extras.env.value("one_gpu_test", false))
    rec.notes.insert(rec.notes.begin(),
                     "One-GPU test run (GREENCTX_COMM_ONE_GPU_TEST): one rank communicates "
                     "nothing, so these numbers answer nothing about an all-reduce.");
  print_record(api, opt.out, rec);
  return r.split().empty() ? exit_check_failed : exit_ok;
}

int run_tune(tune_options &opt) {
  if (!opt.out.from.empty()) {
    print_record(api, opt.out, read_record(api, "tune", opt.out.from));
    return exit_ok;
  }
  const measure::tune_config cfg = tune_config_of(opt);
  if (opt.comm)
    return run_tune_comm(opt, cfg);
  const int ordinal = one_device(opt.devices, 0, api,
                                 "tune runs on one GPU: give one ordinal (e.g. 0), or add --comm "
                                 "for the all-reduce over several GPUs");
  bench::apply(opt.work, opt.cfg);
  check_output_paths(api, opt.out);

  const driver_info drv = query_driver();
  warn_about_connections();
  const device dev(ordinal);
  if ((opt.cfg.background == bench::background_kind::gemm ||
       opt.cfg.critical == bench::critical_kind::gemm) &&
      !measure::gemm::available())
    throw unsupported_error(measure::gemm::availability(), 0, drv.version);
  nlohmann::json env = environment_json(drv, dev);
  env["date"] = utc_now();
  env["command"] = command_line();
  env["clocks"] = bench::read_clocks(dev);
  const auto [critical, background] = bench::workloads(dev, opt.cfg);
  const measure::tune_result r = measure::tune(
      dev, critical, background, cfg, [&](const std::string &line) { print_progress(opt, line); });
  print_record(api, opt.out, tune_record(r, report::environment_of(env), cfg.objective.describe()));
  return r.split().empty() ? exit_check_failed : exit_ok;
}

} // namespace

void add_tune(CLI::App &app, action &run) {
  const auto [cmd, opt] = add_command<tune_options>(
      app, "tune",
      "Choose the split by measurement: the critical workload on N SMs and the background on the "
      "rest, for each N this GPU makes, measured with both running; answers the N,rest that meets "
      "the objective with the most background throughput (exit 1 when none does, with the "
      "closest)",
      exit_footer("no split meets the objective (the closest is shown)"));
  cmd->add_option("-d,--device", opt->devices,
                  "GPU ordinal (default 0); with --comm: all (the default) or ordinals separated "
                  "by commas")
      ->check(device_list_check(api));
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
  add_decimal(*cmd, "--samples", opt->samples, "Critical samples per split while searching", 1,
              10000000);
  add_decimal(*cmd, "--confirm-samples", opt->confirm_samples,
              "Critical samples of each confirming (and each exhaustive) measurement", 1, 10000000);
  add_decimal(*cmd, "--rounds", opt->rounds, "Rounds of each measurement", 1, 100000);
  add_decimal(*cmd, "--gap-us", opt->gap_us, "Mean host pause between samples (jittered +-50%)", 0,
              1000000);
  cmd->add_option("--sizes", opt->sizes,
                  "Critical partition sizes to consider, increasing, separated by commas "
                  "(default: every N,rest this GPU makes)");
  cmd->add_flag("--no-repeat", opt->no_repeat,
                "Do not measure the chosen split a second time after the search");
  cmd->add_flag("--no-hold", opt->no_hold,
                "Time each critical sample from the event before its launch, launch time "
                "included (default: held until enqueued, so that only device time counts)");
  add_output_options(*cmd, opt->out,
                     {"the record", "Write the measured curve as CSV to FILE",
                      "Write the curve's plots as SVG to FILE",
                      "Write the report as markdown to FILE",
                      "Report a saved tune JSON again (any format above) without measuring"});
  cmd->add_flag("--comm", opt->comm,
                "Tune the communication partition: an NCCL all-reduce of --bytes as the critical "
                "work on N SMs of every GPU, bench's cuBLAS GEMM loop (--gemm-n) on the rest, "
                "each measurement in a child process (default objective --within-best 0.1)");
  cmd->add_option("--bytes", opt->bytes, "With --comm: the all-reduce's message size (K, M, G)")
      ->capture_default_str();
  add_decimal(*cmd, "--comm-timeout", opt->comm_timeout,
              "With --comm: seconds a measuring child may take before it is killed", 1, 86400);
  add_quiet_option(*cmd, opt->quiet);
  run_with(*cmd, run, opt, run_tune, [opt = opt, cmd = cmd] {
    refuse_beside_from(*cmd);
    // --comm's critical work is the all-reduce and its background the GEMM loop (--gemm-n).
    for (const char *name :
         {"--background", "--critical", "--critical-blocks", "--critical-us", "--critical-gemm-n",
          "--background-us", "--waves", "--memory-mib", "--rounds", "--gap-us", "--no-hold"})
      if (cmd->get_option(name)->count() > 0)
        opt->not_for_comm.push_back(name);
    if (!opt->comm)
      for (const char *name : {"--bytes", "--comm-timeout"})
        if (cmd->get_option(name)->count() > 0)
          throw CLI::ValidationError(name, "only with --comm");
  });
}

} // namespace greenctx::cli
