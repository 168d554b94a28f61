// greenctx demo: the main job. Info, a verified 16/rest split, and a short version of the guide's
// section 4.6.7 experiment: how long a small critical kernel takes while a long kernel fills the
// GPU, with and without green contexts.
#include "cli_common.hpp"
#include "commands.hpp"
#include "report/stats.hpp"

#include <fmt/format.h>

#include <chrono>
#include <memory>
#include <optional>

namespace greenctx::cli {
namespace {

using clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

struct demo_options {
  int device = 0;
  unsigned samples = 50;
  unsigned critical_sms = 16;
};

// The guide's experiment: a long kernel of many waves, each block spinning 200 us, and a critical
// kernel of 16 blocks x 20 us launched 0.5 ms after it, timed from launch to completion on the
// host clock.
constexpr unsigned long_blocks = 8448;
constexpr auto long_block_time = 200us;
constexpr unsigned critical_blocks = 16;
constexpr auto critical_block_time = 20us;
constexpr unsigned threads = 128;
constexpr auto critical_delay = 500us;
constexpr unsigned warmup = 5;

struct scenario_result {
  std::string name;
  std::string description;
  summary critical_us;
  std::optional<summary> background_us;
};

void busy_wait(clock::duration d) {
  const auto until = clock::now() + d;
  while (clock::now() < until) {
  }
}

// One scenario: `background` may be null (the critical kernel alone).
scenario_result measure(const device &dev, std::string name, std::string description,
                        stream_ref critical, const stream *background, unsigned samples) {
  std::vector<double> crit, bg;
  event bg_start(dev.primary_context()), bg_end(dev.primary_context());
  for (unsigned i = 0; i < warmup + samples; ++i) {
    if (background) {
      bg_start.record(*background);
      launch_spin(*background, long_blocks, long_block_time, threads);
      bg_end.record(*background);
    }
    busy_wait(critical_delay);
    const auto t0 = clock::now();
    launch_spin(critical, critical_blocks, critical_block_time, threads);
    critical.synchronize();
    const auto t1 = clock::now();
    if (background)
      background->synchronize();
    if (i < warmup)
      continue;
    crit.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    if (background)
      bg.push_back(1000.0 * elapsed_ms(bg_start, bg_end));
  }
  scenario_result r{std::move(name), std::move(description), summarize(crit), std::nullopt};
  if (background)
    r.background_us = summarize(bg);
  return r;
}

int run_demo(const demo_options &opt) {
  if (opt.samples == 0)
    throw request_error(CUDA_ERROR_INVALID_VALUE, "greenctx demo", "--samples must be at least 1");
  const auto started = clock::now();
  const driver_info drv = query_driver();
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
  const int verify_rc = print_verification(dev, set, request, 8);
  if (verify_rc != exit_ok)
    return verify_rc;

  fmt::print("\n== 3. Latency of a critical kernel while a long kernel fills the GPU\n");
  fmt::print("long kernel: {} blocks x {} us; critical kernel: {} blocks x {} us, launched {} us "
             "later; {} samples each\n",
             long_blocks, long_block_time.count(), critical_blocks, critical_block_time.count(),
             critical_delay.count(), opt.samples);
  const auto [least, greatest] = dev.stream_priority_range();
  const execution_context_ref primary = dev.primary_context();
  const stream bg_shared = primary.create_stream(stream_flags::non_blocking, least);
  const stream crit_shared = primary.create_stream(stream_flags::non_blocking, least);
  const stream crit_high = primary.create_stream(stream_flags::non_blocking, greatest);
  const stream crit_green = set.parts()[0].context.create_stream();
  const stream bg_green = set.parts()[1].context.create_stream();
  const unsigned crit_sms = set.parts()[0].obtained(), rest_sms = set.parts()[1].obtained();

  std::vector<scenario_result> results;
  results.push_back(
      measure(dev, "alone", "critical kernel alone, whole GPU", crit_shared, nullptr, opt.samples));
  results.push_back(measure(dev, "alone_green",
                            fmt::format("critical kernel alone, its {}-SM green context", crit_sms),
                            crit_green, nullptr, opt.samples));
  results.push_back(
      measure(dev, "shared", "shared GPU, same priority", crit_shared, &bg_shared, opt.samples));
  results.push_back(measure(dev, "priority", "shared GPU, critical stream at highest priority",
                            crit_high, &bg_shared, opt.samples));
  results.push_back(
      measure(dev, "green",
              fmt::format("green contexts: critical {} SMs, background {} SMs", crit_sms, rest_sms),
              crit_green, &bg_green, opt.samples));

  fmt::print("\n{:<58} {:>10} {:>10} {:>10} {:>14}\n", "placement", "crit p50", "crit p99",
             "crit max", "long kernel");
  for (const auto &r : results)
    fmt::print("{:<58} {:>10} {:>10} {:>10} {:>14}\n", r.description, format_us(r.critical_us.p50),
               format_us(r.critical_us.p99), format_us(r.critical_us.max),
               r.background_us ? format_us(r.background_us->p50) : "-");

  const auto &alone = results[1].critical_us, &shared = results[2].critical_us,
             &prio = results[3].critical_us, &green = results[4].critical_us;
  fmt::print("\nIn plain words:\n");
  fmt::print("- Sharing the GPU at the same priority, the critical kernel's p99 was {} "
             "instead of {} alone: it waited for the long kernel's blocks to drain.\n",
             format_us(shared.p99), format_us(results[0].critical_us.p99));
  fmt::print("- A high-priority stream gave p99 {}: priority only orders blocks that are still "
             "waiting; it cannot free an SM that a running block holds.\n",
             format_us(prio.p99));
  fmt::print("- With green contexts the p99 was {} ({:.1f}x lower than sharing, {:.1f}x lower "
             "than priority), against {} alone on the same {} SMs: its SMs were free.\n",
             format_us(green.p99), shared.p99 / green.p99, prio.p99 / green.p99,
             format_us(alone.p99), crit_sms);
  fmt::print(
      "- The price: the long kernel ran on {} SMs instead of {} and took {} instead of {}.\n",
      rest_sms, all.sm_count(), format_us(results[4].background_us->p50),
      format_us(results[2].background_us->p50));
  fmt::print("\nDemo finished in {:.1f} s.\n",
             std::chrono::duration<double>(clock::now() - started).count());
  return exit_ok;
}

} // namespace

void add_demo(CLI::App &app, action &run) {
  auto opt = std::make_shared<demo_options>();
  auto *cmd = app.add_subcommand(
      "demo", "Show the GPU, verify a 16/rest split and measure critical-kernel latency under "
              "contention with and without green contexts (under 20 s)");
  add_device_option(*cmd, opt->device);
  cmd->add_option("--samples", opt->samples, "Timed samples per placement")
      ->transform(decimal(1, 100000))
      ->capture_default_str();
  cmd->add_option("--critical-sms", opt->critical_sms, "SMs of the critical partition")
      ->transform(decimal(1, 4096))
      ->capture_default_str();
  cmd->callback([opt, &run] { run = [opt] { return run_demo(*opt); }; });
}

} // namespace greenctx::cli
