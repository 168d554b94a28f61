// greenctx bench: latency isolation under contention, measured like a benchmark tool.
#include "bench/clocks.hpp"
#include "bench/cublas.hpp"
#include "bench/engine.hpp"
#include "bench/report.hpp"
#include "cli_common.hpp"
#include "commands.hpp"
#include "report/output.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <memory>

namespace greenctx::cli {
namespace {

struct bench_options {
  bench::config cfg;
  unsigned critical_us = 20, background_us = 200, gap_us = 300, memory_mib = 1024;
  unsigned rate_window_ms = 300;
  std::string background = "spin", critical = "kernel";
  output_options output;
  bool quiet = false, check_targets = false;
};

constexpr const char *api = "greenctx bench";

// Prints the report and writes the files asked for; the exit code of --check-targets.
int report(const bench_options &opt, const bench::results &r, const nlohmann::json &env) {
  const std::string md = bench::markdown(r, env);
  std::fputs(md.c_str(), stdout);
  write_outputs(api, opt.output,
                {[&] { return md; }, [&] { return bench::to_json(r, env).dump(1) + "\n"; },
                 [&] { return bench::to_csv(r); }, [&] { return bench::to_svg(r, env); }});
  if (opt.check_targets)
    for (const auto &t : bench::evaluate_targets(r))
      if (!t.met())
        return exit_check_failed;
  return exit_ok;
}

int run_bench(bench_options opt) {
  auto &cfg = opt.cfg;
  cfg.background = opt.background == "memory" ? bench::background_kind::memory
                   : opt.background == "gemm" ? bench::background_kind::gemm
                                              : bench::background_kind::spin;
  cfg.critical = opt.critical == "gemm" ? bench::critical_kind::gemm : bench::critical_kind::kernel;
  cfg.critical_block_time = std::chrono::microseconds(opt.critical_us);
  cfg.background_block_time = std::chrono::microseconds(opt.background_us);
  cfg.gap = std::chrono::microseconds(opt.gap_us);
  cfg.memory_bytes = std::size_t{opt.memory_mib} << 20;
  cfg.rate_window = std::chrono::milliseconds(opt.rate_window_ms);

  if (!opt.output.from.empty())
    return report_saved(api, opt.output.from, [&](const nlohmann::json &j) {
      return report(opt, bench::from_json(j), j.at("environment"));
    });
  check_output_paths(api, opt.output);
  const driver_info drv = query_driver();
  const device dev(cfg.device);
  if ((cfg.background == bench::background_kind::gemm ||
       cfg.critical == bench::critical_kind::gemm) &&
      bench::gemm::availability().rfind("cuBLAS from", 0) != 0)
    throw unsupported_error(bench::gemm::availability(), 0, drv.version);

  nlohmann::json env = environment_json(drv, dev);
  env["date"] = utc_now();
  env["command"] = command_line();
  env["pci_bus_id"] = dev.pci_bus_id();
  const auto connections = max_connections_from_environment();
  env["max_connections"] = connections ? nlohmann::json(*connections) : nlohmann::json("unset");
  if (cfg.background == bench::background_kind::gemm || cfg.critical == bench::critical_kind::gemm)
    env["cublas"] = bench::gemm::availability();
  env["clocks_before"] = bench::read_clocks(dev);
  const auto progress = [&](const std::string &line) {
    if (!opt.quiet)
      std::fprintf(stderr, "greenctx bench: %s\n", line.c_str());
  };
  const bench::results r = bench::run(dev, cfg, progress);
  env["clocks_after"] = bench::read_clocks(dev);

  return report(opt, r, env);
}

} // namespace

void add_bench(CLI::App &app, action &run) {
  auto opt = std::make_shared<bench_options>();
  auto *cmd = app.add_subcommand(
      "bench", "Measure a critical workload's latency while a background workload fills the GPU, "
               "under several placements (shared, priority, green contexts, and the trap of "
               "background work left in the primary context), and the background's throughput");
  add_device_option(*cmd, opt->cfg.device);
  cmd->add_option("--background", opt->background,
                  "Background workload: spin (compute-bound blocks of fixed duration), memory "
                  "(streaming copy) or gemm (cuBLAS bf16 GEMM loop)")
      ->check(CLI::IsMember({"spin", "memory", "gemm"}))
      ->capture_default_str();
  cmd->add_option("--critical", opt->critical,
                  "Critical workload: kernel (small spin kernel) or gemm (small cuBLAS GEMM)")
      ->check(CLI::IsMember({"kernel", "gemm"}))
      ->capture_default_str();
  cmd->add_option("--critical-sms", opt->cfg.critical_sms, "SMs of the critical partition")
      ->transform(decimal(1, 4096))
      ->capture_default_str();
  cmd->add_option("--samples", opt->cfg.samples, "Timed samples per placement")
      ->transform(decimal(1, 10000000))
      ->capture_default_str();
  cmd->add_option("--warmup", opt->cfg.warmup, "Untimed samples first, per placement")
      ->transform(decimal(0, 1000000))
      ->capture_default_str();
  cmd->add_option("--rounds", opt->cfg.rounds,
                  "Rounds over all placements: each takes samples/rounds samples per round, so "
                  "that drifts of the machine fall on every placement alike")
      ->transform(decimal(1, 100000))
      ->capture_default_str();
  cmd->add_option("--gap-us", opt->gap_us, "Mean host pause between samples (jittered +-50%)")
      ->transform(decimal(0, 1000000))
      ->capture_default_str();
  cmd->add_option("--critical-blocks", opt->cfg.critical_blocks, "Blocks of the critical kernel")
      ->transform(decimal(1, 1000000))
      ->capture_default_str();
  cmd->add_option("--critical-us", opt->critical_us, "Duration of each critical block")
      ->transform(decimal(0, 1000000))
      ->capture_default_str();
  cmd->add_option("--critical-gemm-n", opt->cfg.critical_gemm_n, "Size of the critical GEMM")
      ->transform(decimal(16, 16384))
      ->capture_default_str();
  cmd->add_option("--background-us", opt->background_us, "Duration of each spin background block")
      ->transform(decimal(1, 1000000))
      ->capture_default_str();
  cmd->add_option("--waves", opt->cfg.background_waves,
                  "Full-GPU waves per spin background kernel (more waves, less quantization)")
      ->transform(decimal(1, 100000))
      ->capture_default_str();
  cmd->add_option("--memory-mib", opt->memory_mib, "MiB copied per memory background kernel")
      ->transform(decimal(1, 65536))
      ->capture_default_str();
  cmd->add_option("--gemm-n", opt->cfg.gemm_n, "Size of the background GEMM")
      ->transform(decimal(64, 32768))
      ->capture_default_str();
  cmd->add_option("--rate-window-ms", opt->rate_window_ms,
                  "How long the background-alone rates are measured")
      ->transform(decimal(10, 600000))
      ->capture_default_str();
  add_output_options(
      *cmd, opt->output,
      {"Write everything, raw samples included, to this file", "Write the raw samples to this file",
       "Write a plot to this file", "Write the report to this file too",
       "Measure nothing: report a run saved with --json again (tables, --csv, --svg)"});
  cmd->add_flag("--quiet", opt->quiet, "No progress lines on stderr");
  cmd->add_flag("--check-targets", opt->check_targets,
                "Exit 1 when a target (isolation, priority, background share) is not met");
  cmd->callback([opt, &run] { run = [opt] { return run_bench(*opt); }; });
}

} // namespace greenctx::cli
