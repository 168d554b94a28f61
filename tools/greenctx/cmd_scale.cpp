// greenctx scale [--sms LIST] [--repeat K] -- PROGRAM ARGS...: runs an unmodified program at
// several SM counts and once unconfined, times each run, and reports time and speed-up.
#include "cli_common.hpp"
#include "commands.hpp"
#include "report/output.hpp"
#include "run_child.hpp"
#include "scale/report.hpp"
#include "scale/runner.hpp"
#include "scale/sm_list.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <memory>

namespace greenctx::cli {
namespace {

constexpr const char *api = "greenctx scale";

struct scale_options {
  std::string sms; ///< as typed; every valid count when not given
  bool sms_given = false;
  unsigned repeat = 3, warmup = 1;
  int device = 0;
  bool ignore_coscheduling = false, quiet = false;
  output_options output;
  std::vector<std::string> program;
  std::vector<std::string> extras; ///< what CLI11 could not place (options before the program)
};

[[noreturn]] void reject(const std::string &message) {
  throw request_error(CUDA_ERROR_INVALID_VALUE, api, message);
}

// Prints the table (after the program's own output) and writes the files asked for.
void report(const scale_options &opt, const scale::results &r, const nlohmann::json &env) {
  std::fflush(stdout);
  std::fputs(scale::text_table(r, env).c_str(), stdout);
  write_outputs(api, opt.output,
                {[&] { return scale::markdown(r, env); },
                 [&] { return scale::to_json(r, env).dump(1) + "\n"; },
                 [&] { return scale::to_csv(r); }, [&] { return scale::to_svg(r, env); }});
}

// --from FILE: report a saved run again without running anything.
int report_saved(const scale_options &opt) {
  if (!opt.program.empty())
    reject("--from reports a saved run again: give no program after --");
  return cli::report_saved(api, opt.output.from, [&](const nlohmann::json &j) {
    const scale::results r = scale::from_json(j);
    report(opt, r, j.at("environment"));
    return r.complete() ? exit_ok : exit_check_failed;
  });
}

int run_scale(const scale_options &opt) {
  if (!opt.output.from.empty())
    return report_saved(opt);
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
  std::vector<unsigned> counts;
  if (opt.sms_given)
    counts = scale::parse_sm_list(opt.sms);
  find_program(opt.program.front());
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
    const granularity grain =
        effective_granularity(all.grain(), all.compute_capability_major(), flags);
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
  r.device = opt.device;
  r.device_sms = device_sms;
  r.ignore_coscheduling = opt.ignore_coscheduling;
  r.repeat = opt.repeat;
  r.warmup = opt.warmup;
  r.warmup_sms = counts.back();
  for (unsigned n : counts)
    r.points.push_back({n, false, {}});
  r.points.push_back({device_sms, true, {}});

  const bool ok = scale::run_points(r, opt.quiet);
  report(opt, r, env);
  if (!ok) {
    print_error(r.failure);
    return exit_check_failed;
  }
  return exit_ok;
}

} // namespace

void add_scale(CLI::App &app, action &run) {
  auto opt = std::make_shared<scale_options>();
  auto *cmd = app.add_subcommand(
      "scale", "Run an unmodified CUDA program at several SM counts and once unconfined, time "
               "each run, and show wall time and speed-up against SM count");
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
                  "uses CUDA)")
      ->transform(decimal_for<unsigned>())
      ->capture_default_str();
  add_device_option(*cmd, opt->device);
  cmd->add_flag("--ignore-coscheduling", opt->ignore_coscheduling,
                "Split with IgnoreSmCoscheduling (steps of 2 SMs on CC 9.0, no cluster guarantee)");
  add_output_options(*cmd, opt->output,
                     {"Write everything, every run included, to this file",
                      "Write one row per timed run to this file",
                      "Write a plot of time and speed-up against SMs to this file",
                      "Write the report as markdown to this file",
                      "Run nothing: report a run saved with --json again (table, --csv, --svg)"});
  cmd->add_flag("-q,--quiet", opt->quiet, "No progress lines on stderr");
  cmd->add_option("PROGRAM", opt->program, "The program and its arguments, after --");
  cmd->allow_extras(); // named in run_scale's message instead of CLI11's
  cmd->footer("Example: greenctx scale --sms 8,16,32,64,132 --svg scale.svg -- ./gemm 8192\n"
              "Times are wall times of the whole program, start-up included. Exit 1 when a run "
              "fails or the program never uses CUDA.");
  cmd->callback([opt, sms, cmd, &run] {
    opt->sms_given = sms->count() > 0;
    opt->extras = cmd->remaining();
    run = [opt] { return run_scale(*opt); };
  });
}

} // namespace greenctx::cli
