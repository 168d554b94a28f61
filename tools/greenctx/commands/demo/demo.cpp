// SPDX-License-Identifier: Apache-2.0
// greenctx demo: the main job. Info, a verified 16/rest split, and a short version of the guide's
// section 4.6.7 experiment: how long a small critical kernel takes while a long kernel fills the
// GPU, with and without green contexts.
#include "commands/bench/latency.hpp"
#include "common/cli_common.hpp"
#include "common/help.hpp"
#include "commands/commands.hpp"
#include "commands/verify/verify.hpp"
#include "report/table.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace greenctx::cli {
namespace {

using clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

struct demo_options {
  int device = 0;
  unsigned samples = 50;
  unsigned critical_sms = 16;
};

// The guide's experiment, measured by the bench engine at demo size: a background of spin
// kernels, each 4 full-GPU waves of 200 us blocks (8448 blocks on a 132-SM H100), kept queued,
// and a critical kernel of 16 blocks x 20 us launched about every 0.5 ms, timed from launch to
// completion on the host clock. Five of bench's placements, one round.
bench::config demo_config(const demo_options &opt) {
  bench::config cfg;
  cfg.device = opt.device;
  cfg.background = bench::background_kind::spin;
  cfg.critical = bench::critical_kind::kernel;
  cfg.critical_sms = opt.critical_sms;
  cfg.samples = opt.samples;
  cfg.warmup = 5;
  cfg.rounds = 1;
  cfg.gap = 500us;
  cfg.critical_blocks = 16;
  cfg.critical_block_time = 20us;
  cfg.background_block_time = 200us;
  cfg.background_waves = 4;
  cfg.rate_window = 100ms;
  cfg.placements = {"alone", "alone_green", "shared", "priority", "green"};
  return cfg;
}

const bench::placement_result &placement(const bench::results &r, const std::string &name) {
  for (const auto &p : r.placements)
    if (p.name == name)
      return p;
  throw std::logic_error("greenctx demo: the bench engine did not measure " + name);
}

// How long one background kernel took in `p`, in microseconds ("-" without a background).
std::string background_kernel_time(const bench::results &r, const bench::placement_result &p) {
  if (!p.background || p.background->rate() <= 0)
    return "-";
  return format_us(1e6 * r.background_launch_work / p.background->rate());
}

int run_demo(const demo_options &opt) {
  if (opt.samples == 0)
    throw request_error(CUDA_ERROR_INVALID_VALUE, "greenctx demo", "--samples must be at least 1");
  const auto started = clock::now();
  const driver_info drv = query_driver();
  warn_about_connections();
  const device dev(opt.device);
  const auto [major, minor] = dev.compute_capability();
  const sm_resource all = dev.sms();

  fmt::print("== 1. The GPU\n");
  fmt::print("{} (GPU {}), compute capability {}.{}, {} SMs; driver CUDA {}, toolkit {}\n",
             dev.name(), dev.ordinal(), major, minor, all.sm_count(),
             format_cuda_version(drv.version), format_cuda_version(toolkit_version()));
  fmt::print("Partitions come in sizes of {} SMs and up, in steps of {}.\n\n",
             all.min_partition_size(), all.coscheduled_alignment());

  fmt::print("== 2. A verified split: {} SMs for critical work, the rest for background work\n",
             opt.critical_sms);
  const partition_request request{{opt.critical_sms}, true};
  const partition_set set = partition_set::create(dev, request);
  const report::record verified = verification_record(dev, set, request, 8);
  std::fputs(report::to_text(verified).c_str(), stdout);
  if (verified.says_no("ok"))
    return exit_check_failed;

  fmt::print("\n== 3. Latency of a critical kernel while long kernels fill the GPU\n");
  const bench::config cfg = demo_config(opt);
  fmt::print("long kernels: {} full-GPU waves of {} us blocks, kept queued; critical kernel: {} "
             "blocks x {} us, launched about every {} us; {} samples each\n",
             cfg.background_waves, cfg.background_block_time.count(), cfg.critical_blocks,
             cfg.critical_block_time.count(), cfg.gap.count(), opt.samples);
  std::fflush(stdout); // the measurement takes a few seconds
  const bench::results r = bench::run(dev, set, cfg, {});
  const std::vector<column> columns = {{"placement", align::left, 58},
                                       {"crit p50", align::right, 10},
                                       {"crit p99", align::right, 10},
                                       {"crit max", align::right, 10},
                                       {"long kernel", align::right, 14}};
  std::vector<row> rows;
  for (const auto &p : r.placements)
    rows.push_back({p.description, format_us(p.critical->host.p50), format_us(p.critical->host.p99),
                    format_us(p.critical->host.max), background_kernel_time(r, p)});
  fmt::print("\n{}", text_table(columns, rows, " "));

  const unsigned crit_sms = r.critical_sms, rest_sms = r.background_sms;
  const auto &alone = placement(r, "alone").critical->host,
             &alone_green = placement(r, "alone_green").critical->host,
             &shared = placement(r, "shared").critical->host,
             &prio = placement(r, "priority").critical->host,
             &green = placement(r, "green").critical->host;
  fmt::print("\nIn plain words:\n");
  fmt::print("- Sharing the GPU at the same priority, the critical kernel's p99 was {} "
             "instead of {} alone: it waited for the long kernel's blocks to drain.\n",
             format_us(shared.p99), format_us(alone.p99));
  fmt::print("- A high-priority stream gave p99 {}: priority only orders blocks that are still "
             "waiting; it cannot free an SM that a running block holds.\n",
             format_us(prio.p99));
  fmt::print("- With green contexts the p99 was {} ({:.1f}x lower than sharing, {:.1f}x lower "
             "than priority), against {} alone on the same {} SMs: its SMs were free.\n",
             format_us(green.p99), shared.p99 / green.p99, prio.p99 / green.p99,
             format_us(alone_green.p99), crit_sms);
  fmt::print(
      "- The price: the long kernel ran on {} SMs instead of {} and took {} instead of {}.\n",
      rest_sms, all.sm_count(), background_kernel_time(r, placement(r, "green")),
      background_kernel_time(r, placement(r, "shared")));
  fmt::print("\nDemo finished in {:.1f} s.\n",
             std::chrono::duration<double>(clock::now() - started).count());
  return exit_ok;
}

} // namespace

void add_demo(CLI::App &app, action &run) {
  const auto [cmd, opt] = add_command<demo_options>(
      app, "demo",
      "Show the GPU, verify a 16/rest split and measure critical-kernel latency under contention "
      "with and without green contexts (under 20 s)",
      exit_footer("the verified split failed its check"));
  add_device_option(*cmd, opt->device);
  add_decimal(*cmd, "--samples", opt->samples, "Timed samples per placement", 1, 100000);
  add_decimal(*cmd, "--critical-sms", opt->critical_sms, "SMs of the critical partition", 1, 4096);
  run_with(*cmd, run, opt, run_demo);
}

} // namespace greenctx::cli
