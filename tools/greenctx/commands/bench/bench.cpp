// SPDX-License-Identifier: Apache-2.0
// greenctx bench: latency isolation under contention, measured like a benchmark tool.
#include "commands/bench/adaptive.hpp"
#include "commands/bench/bandwidth.hpp"
#include "common/clocks.hpp"
#include "commands/bench/comm.hpp"
#include "commands/bench/comm_children.hpp"
#include "commands/bench/latency.hpp"
#include "commands/bench/latency_record.hpp"
#include "common/sm_list_option.hpp"
#include "common/workload_options.hpp"
#include "common/cli_common.hpp"
#include "common/help.hpp"
#include "commands/commands.hpp"
#include "report/output.hpp"

#include <fmt/format.h>

#include <bit>
#include <cstdio>
#include <functional>
#include <memory>

namespace greenctx::cli {
namespace {

struct bench_options {
  bench::config cfg;
  bench::workload_options work;
  unsigned gap_us = 300, rate_window_ms = 300;
  output_options output;
  bool quiet = false, check_targets = false;
  std::string devices; ///< --device as typed; empty: 0, or all with --comm
  std::string mode;    ///< MODE as typed: latency, adaptive, comm or bandwidth; empty: the flags
  // --comm: the all-reduce next to a GEMM loop
  bool comm = false, quick = false;
  std::string sizes, comm_sms; ///< empty: the defaults
  unsigned tolerance = 10, comm_timeout = 600, window_ms = 0;
  bool samples_given = false, warmup_given = false;
  // --adaptive: the memory-bound background's partition shrunk around critical work
  bool adaptive = false;
  std::string shrink_to, policies;                         ///< empty: the defaults
  unsigned lead_us = 100, chunk_mib = 64, queue_depth = 2; // queue_depth: latency's too
  std::string placements;                                  ///< latency: empty for all
  bool background_thread = false;                          ///< latency only
  bool rounds_given = false, rate_window_given = false;
  // bandwidth: the memory bandwidth curve against SMs
  bool bandwidth = false, alone_only = false;
  std::string sms, ops, levels; ///< empty: the defaults
  unsigned buffer_mib = 1024, repeats = 10;
};

constexpr const char *api = "greenctx bench";

// The benches, as the bits of the set of benches that take an option.
enum bench_kind : unsigned { latency = 1, adaptive = 2, comm = 4, bandwidth = 8 };

// How refusals name each bench, and how the latency bench's user chooses it, in bit order.
constexpr const char *bench_names[] = {"the latency bench", "--adaptive", "--comm",
                                       "bench bandwidth"};
constexpr const char *bench_choices[] = {"", "add --adaptive", "add --comm", "give MODE bandwidth"};

// The options that only some benches take, by the benches that take them; every other option
// (MODE, --device, --quiet, the output options) is every bench's. Only the latency bench and
// --adaptive have targets.
struct scoped_options {
  unsigned benches;
  std::vector<const char *> names;
};
const scoped_options option_scopes[] = {
    {latency | adaptive,
     {"--critical-sms", "--rounds", "--gap-us", "--rate-window-ms", "--queue-depth", "--background",
      "--critical", "--critical-blocks", "--critical-us", "--check-targets"}},
    {latency | adaptive | comm, {"--samples", "--warmup"}},
    {latency,
     {"--critical-gemm-n", "--background-us", "--waves", "--memory-mib", "--placements",
      "--background-thread"}},
    {latency | comm, {"--gemm-n"}},
    {adaptive | comm | bandwidth, {"--quick"}},
    {adaptive, {"--shrink-to", "--policies", "--lead-us", "--chunk-mib"}},
    {comm, {"--sizes", "--comm-sms", "--tolerance", "--window-ms", "--comm-timeout"}},
    {bandwidth, {"--sms", "--ops", "--levels", "--buffer-mib", "--repeats", "--alone-only"}},
};

// Refuses, as a parse error, an option given to a bench that does not take it: "--sizes: is an
// option of --comm: add --comm, or leave it out" where the latency bench was chosen by default,
// "... leave it out with --adaptive" where a bench was named.
void check_scope(bench_kind chosen, bool by_default,
                 const std::function<bool(const char *)> &given) {
  for (const auto &o : option_scopes)
    for (const char *name : o.names) {
      if ((o.benches & chosen) || !given(name))
        continue;
      std::vector<unsigned> owners; // "A", "A and B", "A, B and C"
      for (unsigned i = 0; i < std::size(bench_names); ++i)
        if (o.benches & (1u << i))
          owners.push_back(i);
      std::string owned_by = bench_names[owners.front()];
      for (std::size_t k = 1; k < owners.size(); ++k)
        owned_by += (k + 1 == owners.size() ? " and " : ", ") + std::string(bench_names[owners[k]]);
      const std::string advice =
          !by_default || chosen != latency
              ? fmt::format("leave it out with {}", bench_names[std::countr_zero(unsigned{chosen})])
          : owners.size() == 1 ? fmt::format("{}, or leave it out", bench_choices[owners.front()])
                               : "add one, or leave it out";
      throw CLI::ValidationError(name, "is an option of " + owned_by + ": " + advice);
    }
}

// Prints the record and writes the files asked for; with --check-targets, exit_check_failed
// unless the record says its targets were met (bench::targets_met).
int print_checked(const bench_options &opt, const report::record &rec) {
  print_record(api, opt.output, rec);
  return opt.check_targets && !bench::targets_met(rec) ? exit_check_failed : exit_ok;
}

// The environment of a bench record measured on `dev` (clocks_before and _after are added around
// the measurement); the warning about CUDA_DEVICE_MAX_CONNECTIONS first, where there is one.
nlohmann::json bench_environment(const driver_info &drv, const device &dev) {
  warn_about_connections();
  nlohmann::json env = environment_json(drv, dev);
  env["date"] = utc_now();
  env["command"] = command_line();
  env["pci_bus_id"] = dev.pci_bus_id();
  return env;
}

// Progress lines on stderr, "greenctx bench<what>: LINE", unless --quiet.
measure::progress_fn progress_of(const bench_options &opt, const char *what) {
  return [quiet = opt.quiet, what](const std::string &line) {
    if (!quiet)
      std::fprintf(stderr, "greenctx bench%s: %s\n", what, line.c_str());
  };
}

// --placements: names of measure::placement_names, each once; empty: all.
std::vector<std::string> parse_placements(std::string_view text) {
  if (text.empty())
    return {};
  const auto names = parse_names(text, api, "--placements", measure::placement_names,
                                 [](const char *p) { return std::string_view(p); });
  return {names.begin(), names.end()};
}

// --comm: everything is checked here, then measured in child processes (comm_children.hpp), so
// this process never starts the driver.
int run_comm(const bench_options &opt) {
  namespace comm = bench::comm;
  if (!opt.output.from.empty()) {
    print_record(api, opt.output, read_record(api, "bench-comm", opt.output.from));
    return exit_ok;
  }
  comm::plan p;
  // Refused here, before any child starts.
  p.measure.asked_devices = parse_device_list(opt.devices.empty() ? "all" : opt.devices, api);
  p.measure.sizes =
      opt.sizes.empty() ? comm::default_sizes(opt.quick) : comm::parse_sizes(opt.sizes);
  p.ks = !opt.comm_sms.empty() ? comm::parse_sm_counts(opt.comm_sms)
         : opt.quick           ? std::vector<unsigned>{8, 16, 32}
                               : std::vector<unsigned>{8, 16, 24, 32, 48};
  p.measure.iterations = opt.samples_given ? opt.cfg.samples : (opt.quick ? 20 : 200);
  p.measure.warmup = opt.warmup_given ? opt.cfg.warmup : (opt.quick ? 3 : 10);
  p.measure.window =
      std::chrono::milliseconds(opt.window_ms ? opt.window_ms : (opt.quick ? 100 : 300));
  p.measure.gemm_n = opt.cfg.gemm_n;
  p.tolerance_percent = opt.tolerance;
  p.child_limit = std::chrono::seconds(opt.comm_timeout);
  check_output_paths(api, opt.output);
  comm::results r;
  nlohmann::json env;
  if (const int code = comm::run_in_children(p, r, env, progress_of(opt, " --comm"));
      code != exit_ok)
    return code;
  env["date"] = utc_now();
  env["command"] = command_line();
  print_record(api, opt.output, comm::comm_record(r, env));
  return exit_ok;
}

// --adaptive: a pool of layouts "C,rest" and "C,N,rest", the memory-bound background moved
// between them around each critical arrival (commands/bench/adaptive.hpp).
int run_adaptive(const bench_options &opt) {
  namespace ad = bench::adaptive;
  if (!opt.output.from.empty())
    return print_checked(opt, read_record(api, "bench-adaptive", opt.output.from));
  ad::config cfg;
  cfg.device = opt.cfg.device;
  cfg.critical_sms = opt.cfg.critical_sms;
  cfg.shrink_to = !opt.shrink_to.empty() ? ad::parse_shrink_to(opt.shrink_to)
                  : opt.quick            ? std::vector<unsigned>{16, 64}
                                         : cfg.shrink_to;
  if (!opt.policies.empty())
    cfg.policies = ad::parse_policies(opt.policies);
  cfg.lead = std::chrono::microseconds(opt.lead_us);
  cfg.chunk_bytes = std::size_t{opt.chunk_mib} << 20;
  cfg.queue_depth = opt.queue_depth;
  cfg.samples = opt.samples_given ? opt.cfg.samples : (opt.quick ? 200 : 1000);
  cfg.warmup = opt.warmup_given ? opt.cfg.warmup : (opt.quick ? 20 : 50);
  cfg.rounds = opt.rounds_given ? opt.cfg.rounds : (opt.quick ? 4 : 10);
  cfg.gap = std::chrono::microseconds(opt.gap_us);
  cfg.critical_blocks = opt.cfg.critical_blocks;
  cfg.critical_block_time = std::chrono::microseconds(opt.work.critical_us);
  cfg.rate_window = std::chrono::milliseconds(
      opt.rate_window_given ? opt.rate_window_ms : (opt.quick ? 100 : opt.rate_window_ms));
  check_output_paths(api, opt.output);
  const driver_info drv = query_driver();
  const device dev(cfg.device);
  ad::validate(cfg, dev.sms().sm_count()); // before any green context is made
  nlohmann::json env = bench_environment(drv, dev);
  env["clocks_before"] = bench::read_clocks(dev);
  const ad::results r = ad::run(dev, cfg, progress_of(opt, " --adaptive"));
  env["clocks_after"] = bench::read_clocks(dev);
  return print_checked(opt, ad::adaptive_record(r, env));
}

// bandwidth: the bandwidth curve (greenctx/measure/bandwidth.hpp) on one GPU.
int run_bandwidth(const bench_options &opt) {
  namespace bw = bench::bandwidth;
  if (!opt.output.from.empty())
    return print_checked(opt, read_record(api, "bench-bandwidth", opt.output.from));
  measure::bandwidth_config cfg;
  if (!opt.sms.empty())
    cfg.sizes = parse_sm_list(opt.sms, {api, "--sms", "e.g. --sms 8,16,32,64", 4096, true});
  if (!opt.ops.empty())
    cfg.ops = bw::parse_ops(opt.ops);
  if (!opt.levels.empty())
    cfg.levels = bw::parse_levels(opt.levels);
  cfg.dram_bytes = std::size_t{opt.buffer_mib} << 20;
  cfg.repeats = opt.repeats;
  cfg.beside = !opt.alone_only;
  check_output_paths(api, opt.output);
  const driver_info drv = query_driver();
  const device dev(one_device(opt.devices, 0, api,
                              "bench bandwidth runs on one GPU: give one "
                              "ordinal (e.g. 0)"));
  if (opt.quick && opt.sms.empty())
    cfg.sizes = bw::quick_sizes(measure::tune_candidates(dev.sms()));
  nlohmann::json env = bench_environment(drv, dev);
  env["clocks_before"] = bench::read_clocks(dev);
  const measure::bandwidth_result r =
      measure::measure_bandwidth(dev, cfg, progress_of(opt, " bandwidth"));
  env["clocks_after"] = bench::read_clocks(dev);
  return print_checked(opt, bw::bandwidth_record(r, env));
}

int run_bench(bench_options opt) {
  if (opt.bandwidth)
    return run_bandwidth(opt);
  if (opt.comm)
    return run_comm(opt);
  if (opt.adaptive) {
    opt.cfg.device = one_device(opt.devices, opt.cfg.device, api,
                                "--adaptive runs on one GPU: give one ordinal (e.g. 0)");
    return run_adaptive(opt);
  }
  opt.cfg.device =
      one_device(opt.devices, opt.cfg.device, api,
                 "the latency bench runs on one GPU: give one ordinal (e.g. 0), or add --comm for "
                 "the all-reduce bench over several GPUs");
  auto &cfg = opt.cfg;
  bench::apply(opt.work, cfg);
  cfg.gap = std::chrono::microseconds(opt.gap_us);
  cfg.rate_window = std::chrono::milliseconds(opt.rate_window_ms);
  cfg.background_depth = opt.queue_depth;
  cfg.placements = parse_placements(opt.placements);
  cfg.background_thread = opt.background_thread;

  if (!opt.output.from.empty())
    return print_checked(opt, read_record(api, "bench", opt.output.from));
  check_output_paths(api, opt.output);
  const driver_info drv = query_driver();
  const device dev(cfg.device);
  if ((cfg.background == bench::background_kind::gemm ||
       cfg.critical == bench::critical_kind::gemm) &&
      !measure::gemm::available())
    throw unsupported_error(measure::gemm::availability(), 0, drv.version);

  nlohmann::json env = bench_environment(drv, dev);
  const auto connections = max_connections_from_environment();
  env["max_connections"] = connections ? nlohmann::json(*connections) : nlohmann::json("unset");
  if (cfg.background == bench::background_kind::gemm || cfg.critical == bench::critical_kind::gemm)
    env["cublas"] = measure::gemm::availability();
  env["clocks_before"] = bench::read_clocks(dev);
  const bench::results r = bench::run(dev, cfg, progress_of(opt, ""));
  env["clocks_after"] = bench::read_clocks(dev);

  return print_checked(opt, bench::bench_record(r, env));
}

} // namespace

void add_bench(CLI::App &app, action &run) {
  const auto [cmd, opt] = add_command<bench_options>(
      app, "bench",
      "Measure a critical workload's latency while a background workload fills the GPU, under "
      "several placements (shared, priority, green contexts, and the trap of background work left "
      "in the primary context), and the background's throughput",
      exit_footer("with --check-targets: a target was missed"));
  cmd->add_option("MODE", opt->mode,
                  "Which bench: latency (the default: the critical workload under each "
                  "placement), adaptive (the same as --adaptive), comm (the same as --comm) or "
                  "bandwidth (DRAM and L2 read, write and copy GB/s against a green context's "
                  "SMs, alone and beside the rest of the GPU doing the same)")
      ->check(CLI::IsMember({"latency", "adaptive", "comm", "bandwidth"}));
  cmd->add_option("-d,--device", opt->devices,
                  "GPU ordinal (default 0); with --comm: all (the default) or ordinals separated "
                  "by commas, at least two")
      ->check(device_list_check(api));
  bench::add_workload_options(*cmd, opt->work, opt->cfg);
  add_decimal(*cmd, "--critical-sms", opt->cfg.critical_sms, "SMs of the critical partition", 1,
              4096);
  add_decimal(*cmd, "--samples", opt->cfg.samples, "Timed samples per placement", 1, 10000000);
  add_decimal(*cmd, "--warmup", opt->cfg.warmup, "Untimed samples first, per placement", 0,
              1000000);
  add_decimal(*cmd, "--rounds", opt->cfg.rounds,
              "Rounds over all placements: each takes samples/rounds samples per round, so "
              "that drifts of the machine fall on every placement alike",
              1, 100000);
  add_decimal(*cmd, "--gap-us", opt->gap_us, "Mean host pause between samples (jittered +-50%)", 0,
              1000000);
  add_decimal(*cmd, "--rate-window-ms", opt->rate_window_ms,
              "How long the background-alone rates are measured", 10, 600000);
  add_output_options(
      *cmd, opt->output,
      {"everything, raw samples included",
       "Write the raw samples to this file (comm: one line per mode and size)",
       "Write the plots to this file", "Write the report as markdown to this file too",
       "Measure nothing: report a run saved with --json again (its text, --csv, --svg)"});
  cmd->add_flag(
      "--comm", opt->comm,
      "Instead of the latency bench: an NCCL all-reduce over every GPU (2 or more) next "
      "to a cuBLAS GEMM loop, on a k-SM green context with the GEMM on the rest (with "
      "and without NCCL_MAX_CTAS=k), against sharing all SMs (equal and high priority) "
      "and NCCL_MAX_CTAS=k alone; checks that the all-reduce stays on its k SMs; says per message "
      "size how many SMs the all-reduce needs. Uses --device, --samples, --warmup, "
      "--gemm-n and the output options");
  cmd->add_flag("--quick", opt->quick,
                "With --comm: a short run (3 sizes, k in 8,16,32, 20 samples) unless lists are "
                "given; with --adaptive: --shrink-to 16,64, 200 samples in 4 rounds, 100 ms "
                "rate windows unless given; with bandwidth: four SM counts unless --sms");
  cmd->add_flag("--adaptive", opt->adaptive,
                "Instead of the placements: a memory-bound background (streaming copy in short "
                "chunks) on a pool of layouts C,rest and C,N,rest, shrunk to N SMs around each "
                "critical arrival and grown back after, against the same background held on "
                "C,rest; reports isolation (p99 / p99 alone) and the background rate of the "
                "static one's (targets 1.2 and 0.8). Uses --critical-sms, --samples, --warmup, "
                "--rounds, --gap-us, --critical-blocks, --critical-us, --rate-window-ms and the "
                "output options; --check-targets: exit 1 unless an adaptive configuration meets "
                "both");
  cmd->add_option("--shrink-to", opt->shrink_to,
                  "With --adaptive: the N values, SMs of the narrow background partition, "
                  "separated by commas (default 8,16,32,64)");
  cmd->add_option(
      "--policies", opt->policies,
      "With --adaptive: lead (shrink --lead-us before each arrival, known in "
      "advance), lead-wait (and wait for the wide chunks before launching), reactive "
      "(shrink at the arrival), reactive-wait, narrow (the background held on N throughout: "
      "no switching, no knowledge of arrivals); separated by commas (default all)");
  add_decimal(*cmd, "--lead-us", opt->lead_us,
              "With --adaptive: how long before each critical arrival the lead policies "
              "shrink the background",
              0, 1000000);
  add_decimal(*cmd, "--chunk-mib", opt->chunk_mib,
              "With --adaptive: MiB copied by each background chunk (shorter chunks let a "
              "switch take effect sooner)",
              1, 65536);
  add_decimal(*cmd, "--queue-depth", opt->queue_depth,
              "Background kernels kept queued (latency), or chunks queued at most over both "
              "layouts (--adaptive)",
              1, 64);
  cmd->add_option("--placements", opt->placements,
                  "Latency: the placements to measure, separated by commas: alone, alone_green, "
                  "shared, priority, green, green_priority, trap (default all)");
  cmd->add_flag("--background-thread", opt->background_thread,
                "Latency: keep the background fed from a thread of its own, so that its launches "
                "meet the critical launches on the host, as a serving program's would (default: "
                "one thread, the background topped up between critical samples)");
  cmd->add_option("--sizes", opt->sizes,
                  "With --comm: message sizes separated by commas, with K, M or G (binary), e.g. "
                  "1M,16M,1G (default 1M to 1G in powers of 4)");
  cmd->add_option("--comm-sms", opt->comm_sms,
                  "With --comm: the k values, SM counts of the all-reduce's green context and "
                  "NCCL_MAX_CTAS limits (default 8,16,24,32,48)");
  add_decimal(*cmd, "--tolerance", opt->tolerance,
              "With --comm: the answer is the smallest k whose all-reduce p50 is within this "
              "many percent of the best mode's",
              0, 1000);
  cmd->add_option("--window-ms", opt->window_ms,
                  "With --comm: each point runs at least this long, for the GEMM's rate (default "
                  "300, 100 with --quick)")
      ->transform(decimal(1, 600000));
  add_decimal(*cmd, "--comm-timeout", opt->comm_timeout,
              "With --comm: seconds after which a child process still measuring is killed "
              "(its points are reported as failed)",
              1, 86400);
  cmd->add_option("--sms", opt->sms,
                  "With bandwidth: SM counts N of N,rest splits, increasing, separated by commas "
                  "(default every N,rest this GPU makes; with --quick four of them); the whole "
                  "device is measured too");
  cmd->add_option("--ops", opt->ops,
                  "With bandwidth: read, write and copy, separated by commas (default all)");
  cmd->add_option("--levels", opt->levels,
                  "With bandwidth: dram (buffers far larger than L2) and l2 (a quarter of L2 each, "
                  "streamed over again and again), separated by commas (default both)");
  add_decimal(*cmd, "--buffer-mib", opt->buffer_mib,
              "With bandwidth: MiB of each DRAM buffer (at least 4x L2; four are allocated)", 1,
              1u << 20);
  add_decimal(*cmd, "--repeats", opt->repeats,
              "With bandwidth: timed kernels per measurement (after one untimed)", 1, 100000);
  cmd->add_flag("--alone-only", opt->alone_only,
                "With bandwidth: measure each partition alone only, not beside its rest");
  add_quiet_option(*cmd, opt->quiet);
  cmd->add_flag("--check-targets", opt->check_targets,
                "Exit 1 when a target (isolation, priority, background share) is not met");
  run_with(*cmd, run, opt, run_bench, [opt = opt, cmd = cmd] {
    // MODE names the bench; --adaptive and --comm are the older spelling of two of them.
    if (!opt->mode.empty()) {
      const bool other = opt->mode == "latency" || opt->mode == "bandwidth"
                             ? opt->comm || opt->adaptive
                         : opt->mode == "comm" ? opt->adaptive
                                               : opt->comm;
      if (other)
        throw CLI::ValidationError("MODE", "bench " + opt->mode + " and --" +
                                               (opt->comm ? "comm" : "adaptive") +
                                               " are two different benches: give one");
      opt->comm = opt->mode == "comm";
      opt->adaptive = opt->mode == "adaptive";
      opt->bandwidth = opt->mode == "bandwidth";
    }
    if (opt->comm && opt->adaptive)
      throw CLI::ValidationError("--adaptive", "and --comm are two different benches: give one");
    refuse_beside_from(*cmd, {"--comm", "--adaptive"});
    const auto given = [&](const char *name) { return cmd->get_option(name)->count() > 0; };
    check_scope(opt->bandwidth  ? bandwidth
                : opt->comm     ? comm
                : opt->adaptive ? adaptive
                                : latency,
                opt->mode.empty(), given);
    opt->samples_given = given("--samples");
    opt->warmup_given = given("--warmup");
    opt->rounds_given = given("--rounds");
    opt->rate_window_given = given("--rate-window-ms");
    if (opt->adaptive) {
      if (given("--background") && opt->work.background != "memory")
        throw CLI::ValidationError("--background", "--adaptive measures the memory background "
                                                   "only: give --background memory or leave it "
                                                   "out");
      if (given("--critical") && opt->work.critical != "kernel")
        throw CLI::ValidationError("--critical", "--adaptive measures the critical kernel only: "
                                                 "give --critical kernel or leave it out");
    }
  });
}

} // namespace greenctx::cli
