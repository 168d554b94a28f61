// greenctx scale [--sms LIST] [--repeat K] -- PROGRAM ARGS...: runs an unmodified program at
// several SM counts and once unconfined, times each run, and reports time and speed-up.
#include "cli_common.hpp"
#include "commands.hpp"
#include "run_child.hpp"
#include "scale_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>

namespace greenctx::cli {
namespace {

constexpr const char *api = "greenctx scale";

struct scale_options {
  std::string sms; ///< as typed; every valid count when not given
  bool sms_given = false;
  unsigned repeat = 3, warmup = 1;
  int device = 0;
  bool ignore_coscheduling = false, quiet = false;
  std::string json, csv, svg, markdown, from;
  std::vector<std::string> program;
  std::vector<std::string> extras; ///< what CLI11 could not place (options before the program)
};

[[noreturn]] void reject(const std::string &message) {
  throw request_error(CUDA_ERROR_INVALID_VALUE, api, message);
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

// A run can take minutes: a missing output folder is found before the first one, not after the
// last.
void check_writable(const char *flag, const std::string &path) {
  if (path.empty())
    return;
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  std::error_code ec;
  if (!parent.empty() && !std::filesystem::is_directory(parent, ec))
    reject(fmt::format("cannot write {} '{}': the folder '{}' does not exist", flag, path,
                       parent.string()));
  if (std::filesystem::is_directory(path, ec))
    reject(fmt::format("cannot write {} '{}': it is a folder", flag, path));
}

void write_file(const std::string &path, const std::string &text) {
  std::ofstream f(path);
  if (!f || !(f << text))
    throw request_error(CUDA_ERROR_INVALID_VALUE, api,
                        "cannot write '" + path + "': check that its folder exists");
}

void write_outputs(const scale_options &opt, const scale::results &r, const nlohmann::json &env) {
  std::fflush(stdout); // after the program's own output
  std::fputs(scale::text_table(r, env).c_str(), stdout);
  if (!opt.markdown.empty())
    write_file(opt.markdown, scale::markdown(r, env));
  if (!opt.json.empty())
    write_file(opt.json, scale::to_json(r, env).dump(1) + "\n");
  if (!opt.csv.empty())
    write_file(opt.csv, scale::to_csv(r));
  if (!opt.svg.empty())
    write_file(opt.svg, scale::to_svg(r, env));
}

// --from FILE: report a saved run again without running anything.
int report_saved(const scale_options &opt) {
  if (!opt.program.empty())
    reject("--from reports a saved run again: give no program after --");
  std::ifstream f(opt.from);
  if (!f)
    reject("cannot read '" + opt.from + "'");
  try {
    const nlohmann::json j = nlohmann::json::parse(f);
    const scale::results r = scale::from_json(j);
    write_outputs(opt, r, j.at("environment"));
    return r.complete() ? exit_ok : exit_check_failed;
  } catch (const nlohmann::json::exception &e) {
    reject("'" + opt.from + "' is not a greenctx scale JSON file: " + e.what());
  }
}

// Why a run makes the whole measurement meaningless, or "" when it does not.
std::string run_failure(const scale::point &p, const child_result &c, int device) {
  if (c.signal != 0 || c.exit_code != 0)
    return "ended with " + scale::describe_end(c.exit_code, c.signal);
  if (p.baseline)
    return {};
  if (!c.report.cuda_used)
    return "the program never used CUDA (the preload library saw no CUDA call), so its times "
           "cannot depend on the SMs it is given and mean nothing here";
  const auto &confined = c.report.confined_devices;
  if (std::find(confined.begin(), confined.end(), device) == confined.end())
    return fmt::format("the program used CUDA but GPU {} never got a confined context, so nothing "
                       "ran on the {} SMs (does it use another GPU? check --device and "
                       "CUDA_VISIBLE_DEVICES)",
                       device, p.sms);
  return {};
}

scale::run_record record_of(const child_result &c, unsigned repeat) {
  return {repeat,
          c.wall_s,
          c.exit_code,
          c.signal,
          c.report.cuda_used,
          c.report.confined_devices,
          c.report.green_contexts,
          c.report.problems};
}

int run_scale(const scale_options &opt) {
  if (!opt.from.empty())
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
  check_writable("--json", opt.json);
  check_writable("--csv", opt.csv);
  check_writable("--svg", opt.svg);
  check_writable("--markdown", opt.markdown);
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

  const std::size_t total = opt.warmup + std::size_t{opt.repeat} * r.points.size();
  std::size_t done = 0;
  std::set<std::string> reported; // problems of the preload library already printed
  // Runs `p` once; false (with r.failure set) when the measurement has to stop.
  const auto run_once = [&](const scale::point &p, unsigned repeat, bool warmup,
                            std::vector<scale::run_record> &into) {
    ++done;
    const std::string what =
        warmup ? fmt::format("warm-up {} of {}, {}", repeat + 1, opt.warmup, p.label())
               : fmt::format("{}, repeat {} of {}", p.label(), repeat + 1, opt.repeat);
    if (!opt.quiet)
      std::fprintf(stderr, "greenctx scale: run %zu of %zu (%s)\n", done, total, what.c_str());
    std::fflush(stdout);
    const confinement c{p.baseline ? 0u : p.sms, opt.device, opt.ignore_coscheduling};
    const child_result result = run_child(opt.program, c);
    into.push_back(record_of(result, repeat));
    for (const auto &problem :
         result.report.problems) // each once: the same one comes back every run
      if (reported.insert(problem).second)
        print_error(fmt::format("run {} ({}): not confined: {}", done, what, problem));
    if (const std::string why = run_failure(p, result, opt.device); !why.empty()) {
      r.failure = fmt::format("run {} of {} ({}): {}", done, total, what, why);
      return false;
    }
    if (!opt.quiet)
      std::fprintf(stderr, "greenctx scale: run %zu of %zu: %.3f s\n", done, total, result.wall_s);
    return true;
  };

  bool ok = true;
  const scale::point warm{r.warmup_sms, false, {}};
  for (unsigned w = 0; ok && w < opt.warmup; ++w)
    ok = run_once(warm, w, true, r.warmups);
  // Rounds over all counts, so that drifts of the machine fall on every count alike.
  for (unsigned k = 0; ok && k < opt.repeat; ++k)
    for (auto &p : r.points)
      if (ok)
        ok = run_once(p, k, false, p.runs);

  write_outputs(opt, r, env);
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
  cmd->add_option("--json", opt->json, "Write everything, every run included, to this file");
  cmd->add_option("--csv", opt->csv, "Write one row per timed run to this file");
  cmd->add_option("--svg", opt->svg, "Write a plot of time and speed-up against SMs to this file");
  cmd->add_option("--markdown", opt->markdown, "Write the report as markdown to this file");
  cmd->add_option("--from", opt->from,
                  "Run nothing: report a run saved with --json again (table, --csv, --svg)");
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
