// SPDX-License-Identifier: Apache-2.0
// greenctx scale [--sms LIST] [--repeat K] [--metric M] -- PROGRAM ARGS...: runs an unmodified
// program at several SM counts and once unconfined, measures each run (its wall time, its GPU
// phase, or a number it prints), and reports the figure and its speed-up.
#include "common/cli_common.hpp"
#include "common/help.hpp"
#include "commands/commands.hpp"
#include "common/process.hpp"
#include "report/output.hpp"
#include "common/run_child.hpp"
#include "commands/scale/metric.hpp"
#include "commands/scale/scale_record.hpp"
#include "commands/scale/runner.hpp"
#include "commands/scale/sm_list.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>

#include <unistd.h>

namespace greenctx::cli {
namespace {

constexpr const char *api = "greenctx scale";

struct scale_options {
  std::string sms; ///< as typed; every valid count when not given
  bool sms_given = false;
  unsigned repeat = 3, warmup = 1;
  int device = 0;
  bool ignore_coscheduling = false, quiet = false;
  std::string metric = "wall"; ///< --metric as typed
  std::string metric_unit;
  bool metric_unit_given = false;
  bool higher_is_better = false, lower_is_better = false;
  bool real_sm_count = false;
  output_options output;
  std::vector<std::string> program;
  std::vector<std::string> extras; ///< what CLI11 could not place (options before the program)
};

[[noreturn]] void reject(const std::string &message) {
  throw request_error(CUDA_ERROR_INVALID_VALUE, api, message);
}

// While it lives, file descriptor 1 (what the programs run inherit, and what their copied output
// is written to) is greenctx's stderr; greenctx's own stdout comes back after.
class stdout_on_stderr {
public:
  stdout_on_stderr() : saved_(dup(STDOUT_FILENO)) {
    std::fflush(stdout);
    if (saved_ < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
      throw error(CUDA_ERROR_OPERATING_SYSTEM, api,
                  std::string("cannot send the program's output to stderr: ") +
                      std::strerror(errno));
  }
  ~stdout_on_stderr() {
    std::fflush(stdout);
    dup2(saved_, STDOUT_FILENO);
    close(saved_);
  }
  stdout_on_stderr(const stdout_on_stderr &) = delete;
  stdout_on_stderr &operator=(const stdout_on_stderr &) = delete;

private:
  int saved_;
};

// Prints the record's text (after the program's own output) or its JSON, and writes the files
// asked for.
void report(const scale_options &opt, const scale::results &r, const nlohmann::json &env) {
  print_record(api, opt.output, scale::scale_record(r, env));
}

// --from FILE: report a saved run again without running anything.
int report_from_file(const scale_options &opt) {
  if (!opt.program.empty())
    reject("--from reports a saved run again: give no program after --");
  const report::record rec = read_record(api, "scale", opt.output.from);
  print_record(api, opt.output, rec);
  const report::quantity *complete = rec.find("complete");
  return complete && complete->value == report::cell{std::string("yes")} ? exit_ok
                                                                         : exit_check_failed;
}

int run_scale(const scale_options &opt) {
  if (!opt.output.from.empty())
    return report_from_file(opt);
  // Bad input is rejected before the driver is touched and before anything runs.
  for (const auto &extra : opt.extras)
    if (extra != "--")
      reject(fmt::format("'{}' is not an option of greenctx scale: put the program and its "
                         "arguments after --, e.g. greenctx scale --sms 8,16 -- ./app -n 5",
                         extra));
  if (opt.program.empty())
    reject("no program to run: greenctx scale [--sms LIST] [--repeat K] -- PROGRAM ARGS...");
  if (opt.repeat == 0)
    reject("--repeat 0: each SM count must run at least once (the default is 3)");
  if (opt.higher_is_better && opt.lower_is_better)
    reject("--higher-is-better and --lower-is-better contradict each other: give one");
  const scale::metric measure = scale::parse_metric(
      opt.metric, opt.metric_unit_given ? std::optional(opt.metric_unit) : std::nullopt,
      opt.higher_is_better  ? std::optional(scale::better::higher)
      : opt.lower_is_better ? std::optional(scale::better::lower)
                            : std::nullopt);
  std::vector<unsigned> counts;
  if (opt.sms_given)
    counts = scale::parse_sm_list(opt.sms);
  process::find_program(opt.program.front(), api);
  check_output_paths(api, opt.output);
  // Loaded once, in a child, before the driver is touched: a broken library fails here, not
  // after the first run.
  const std::string library = preload_library();
  if (const int rc = check_in_child([&] { check_preload_loads(library); }); rc != exit_ok)
    return rc;

  const driver_info drv = query_driver();
  const split_flags flags =
      opt.ignore_coscheduling ? split_flags::ignore_sm_coscheduling : split_flags::none;
  nlohmann::json env;
  unsigned device_sms = 0;
  {
    // Held only while the counts are checked (the primary context stays retained between the
    // checks); released before the program runs, so that greenctx holds no context on its GPU.
    const device dev(opt.device);
    env = environment_json(drv, dev);
    const sm_resource all = dev.sms();
    device_sms = all.sm_count();
    const granularity grain = all.grain(flags);
    const std::vector<unsigned> valid = valid_counts(device_sms, grain);
    if (opt.sms_given)
      scale::check_sm_list(counts, valid, device_sms);
    else
      counts = valid;
    if (counts.empty())
      reject(fmt::format("GPU {} has {} SMs, fewer than its minimum partition: nothing to scale",
                         opt.device, device_sms));
    for (unsigned n : counts) {
      const unsigned got = check_confinement({n, opt.device, opt.ignore_coscheduling});
      if (got != n)
        reject(fmt::format("a split for {} SMs gives {} on GPU {}: leave {} out of --sms", n, got,
                           opt.device, n));
    }
  }
  env["date"] = utc_now();
  env["command"] = command_line();

  scale::results r;
  r.program = opt.program;
  r.measure = measure;
  r.real_sm_count = opt.real_sm_count;
  r.device = opt.device;
  r.device_sms = device_sms;
  r.ignore_coscheduling = opt.ignore_coscheduling;
  r.repeat = opt.repeat;
  r.warmup = opt.warmup;
  r.warmup_sms = counts.back();
  for (unsigned n : counts)
    r.points.push_back({n, false, {}});
  r.points.push_back({device_sms, true, {}});

  bool ok = false;
  {
    // With --json -, stdout carries the JSON alone: the program's own output goes to stderr.
    std::optional<stdout_on_stderr> program_output;
    if (json_replaces_text(opt.output.json))
      program_output.emplace();
    ok = scale::run_points(r, opt.quiet);
  }
  report(opt, r, env);
  if (!ok) {
    print_error(r.failure);
    return exit_check_failed;
  }
  return exit_ok;
}

} // namespace

void add_scale(CLI::App &app, action &run) {
  const auto [cmd, opt] = add_command<scale_options>(
      app, "scale",
      "Run an unmodified CUDA program at several SM counts and once unconfined, measure each run "
      "(wall time, GPU phase, or a number it prints), and show the figure and its speed-up "
      "against SM count",

      "Examples: greenctx scale --sms 8,16,32,64,132 --svg scale.svg -- ./gemm 8192\n"
      "  greenctx scale --metric gpu-time -- python3 train.py\n"
      "  greenctx scale --metric 'regex:([0-9.]+) tokens/s' --metric-unit tokens/s -- ./serve\n"
      "The default figure, wall, includes the program's start-up (imports, loading, context "
      "creation); the report warns when that may be what the curve shows: the fewest SMs' "
      "median within 1.3x of the unconfined one while the device has 4x as many SMs or more. "
      "Then measure --metric gpu-time, or a time the program prints.\n" +
          exit_footer(
              "a run failed, gave no figure, or the program never used CUDA (the runs so far "
              "are reported)",
              "4 also when the preload library is missing"));
  auto *sms = cmd->add_option(
      "--sms", opt->sms,
      "SM counts to run at, in decimal, increasing, separated by commas (default: every count a "
      "split gives, from the minimum partition to all SMs)");
  cmd->add_option("--repeat", opt->repeat,
                  "Timed runs per SM count and of the unconfined baseline (median and spread)")
      ->transform(decimal_for<unsigned>())
      ->capture_default_str();
  cmd->add_option("--warmup", opt->warmup,
                  "Untimed runs first, on the largest SM count (they also check that the program "
                  "uses CUDA and gives its figure)")
      ->transform(decimal_for<unsigned>())
      ->capture_default_str();
  cmd->add_option("--metric", opt->metric,
                  "The figure of each run: wall (the whole program's wall time, start-up "
                  "included); gpu-time (its GPU phase: from its first kernel launch to its last "
                  "synchronization, as the preload library sees it, in every process; the "
                  "unconfined run loads the library too, confining nothing); 'regex:EXPR' (a "
                  "number it prints on stdout: EXPR is an ECMAScript regular expression with "
                  "exactly one capture group around the number, searched in each line, the last "
                  "match wins, e.g. 'regex:took ([0-9.eE+-]+) s'); or json:KEY (a number in a "
                  "JSON object it prints on a line of its own, the last such line wins; dots "
                  "separate nested keys, e.g. json:timing.seconds). With regex: and json:, "
                  "greenctx reads the program's stdout through a pipe and copies it to its own. A "
                  "run without its figure fails the measurement, saying why")
      ->capture_default_str();
  auto *unit = cmd->add_option(
      "--metric-unit", opt->metric_unit,
      "Unit of a printed number (regex: or json:; default s). s, ms, us, ns are times, lower "
      "is better; a unit ending in /s (tokens/s, GB/s) is a rate, higher is better; for any "
      "other unit say which with --higher-is-better or --lower-is-better");
  cmd->add_flag("--higher-is-better", opt->higher_is_better,
                "The printed number is better higher (a rate): speed-up = figure here / "
                "figure there");
  cmd->add_flag("--lower-is-better", opt->lower_is_better,
                "The printed number is better lower (a time): speed-up = figure there / "
                "figure here");
  cmd->add_flag("--real-sm-count", opt->real_sm_count,
                "Tell the program the device's real SM count (cuDeviceGetAttribute, the device's "
                "SM resource) instead of its partition's, which it is told by default");
  add_device_option(*cmd, opt->device);
  add_ignore_coscheduling_option(*cmd, opt->ignore_coscheduling);
  add_output_options(*cmd, opt->output,
                     {"everything, every run included",
                      "Write the points table (one row per SM count, exact numbers) to this file; "
                      "every run is in the JSON",
                      "Write a plot of the figure and its speed-up against SMs to this file",
                      "Write the report as markdown to this file",
                      "Run nothing: report a run saved with --json again (table, --csv, --svg)"});
  add_quiet_option(*cmd, opt->quiet);
  cmd->add_option("PROGRAM", opt->program, "The program and its arguments, after --");
  cmd->allow_extras(); // named in run_scale's message instead of CLI11's
  run_with(*cmd, run, opt, run_scale, [opt = opt, cmd = cmd, sms, unit] {
    refuse_beside_from(*cmd);
    opt->sms_given = sms->count() > 0;
    opt->metric_unit_given = unit->count() > 0;
    opt->extras = cmd->remaining();
  });
}

} // namespace greenctx::cli
