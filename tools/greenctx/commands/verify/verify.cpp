// SPDX-License-Identifier: Apache-2.0
// greenctx verify SPLIT: create the partitions, run a %smid probe on all at once, check them.
#include "common/cli_common.hpp"
#include "common/help.hpp"
#include "commands/commands.hpp"
#include "commands/verify/verify.hpp"
#include "report/output.hpp"
#include "commands/verify/processes.hpp"
#include "commands/verify/verify_record.hpp"

#include <fmt/format.h>

#include <memory>
#include <string>
#include <vector>

namespace greenctx::cli {
namespace {

constexpr const char *api = "greenctx verify";

struct verify_options {
  std::string split;
  std::string devices = "0";
  output_options output;
  bool ignore_coscheduling = false;
  unsigned blocks_per_sm = 8;
  bool processes = false;
  process_verify_options across; ///< with --processes
};

verification::gpu_result gpu_result_of(const driver_info &drv, const device &dev,
                                       const partition_set &set, verify_report report) {
  verification::gpu_result g;
  g.environment = environment_json(drv, dev);
  g.piece_size = set.plan().piece_size;
  g.groups = set.plan().groups;
  g.rest = !set.plan().parts.empty() && set.plan().parts.back().rest;
  for (const auto &p : set.parts())
    g.rounding.push_back(p.rounding);
  g.report = std::move(report);
  return g;
}

// The driver's fields of a verification of several GPUs (each GPU's are in its table).
nlohmann::json driver_environment(const driver_info &drv) {
  return {{"driver_version", format_cuda_version(drv.version)},
          {"toolkit_version", format_cuda_version(toolkit_version())}};
}

int run_verify(const verify_options &opt) {
  check_argument_or_from(api, "SPLIT", opt.split, opt.output);
  check_output_paths(api, opt.output);
  if (!opt.output.from.empty()) {
    const report::record rec =
        read_record(api, opt.processes ? "verify-processes" : "verify", opt.output.from);
    print_record(api, opt.output, rec);
    return rec.says_no("ok") ? exit_check_failed : exit_ok;
  }
  // Malformed input is rejected before the driver is touched.
  const partition_request request = parse_partition_request(opt.split);
  if (opt.processes) {
    const auto list = parse_device_list(opt.devices, api);
    if (!list || list->size() != 1)
      throw request_error(CUDA_ERROR_INVALID_VALUE, api,
                          "--processes verifies one GPU: name it with --device N, not '" +
                              opt.devices + "'");
    process_verify_options across = opt.across;
    across.request = request;
    across.device = list->front();
    across.output = opt.output;
    across.ignore_coscheduling = opt.ignore_coscheduling;
    return verify_processes(across);
  }
  if (opt.blocks_per_sm == 0)
    throw request_error(CUDA_ERROR_INVALID_VALUE, api, "--blocks-per-sm must be at least 1");
  const auto list = parse_device_list(opt.devices, api);
  const driver_info drv = query_driver();
  const std::vector<int> ordinals = resolve_device_list(list, device::count(), api);
  const split_flags flags =
      opt.ignore_coscheduling ? split_flags::ignore_sm_coscheduling : split_flags::none;
  // Every device's partitions are made before any is probed, so that a request one GPU cannot
  // meet is refused (exit 2) before anything runs.
  std::vector<std::unique_ptr<device>> devs;
  std::vector<partition_set> sets;
  for (int d : ordinals) {
    devs.push_back(std::make_unique<device>(d));
    sets.push_back(partition_set::create(*devs.back(), request, flags));
  }
  verification::results r;
  r.split = request.to_string();
  r.ignore_coscheduling = opt.ignore_coscheduling;
  r.blocks_per_sm = opt.blocks_per_sm;
  for (std::size_t i = 0; i < devs.size(); ++i)
    r.gpus.push_back(gpu_result_of(drv, *devs[i], sets[i],
                                   verify_partitions(*devs[i], sets[i], opt.blocks_per_sm)));
  const nlohmann::json env =
      devs.size() == 1 ? r.gpus.front().environment : driver_environment(drv);
  print_record(api, opt.output, verification::verify_record(r, with_date_and_command(env)));
  return r.ok() ? exit_ok : exit_check_failed;
}

} // namespace

report::record verification_record(const device &dev, const partition_set &set,
                                   const partition_request &request, unsigned blocks_per_sm) {
  const driver_info drv = query_driver();
  verification::results r;
  r.split = request.to_string();
  r.blocks_per_sm = blocks_per_sm;
  r.gpus.push_back(gpu_result_of(drv, dev, set, verify_partitions(dev, set, blocks_per_sm)));
  return verification::verify_record(r, with_date_and_command(r.gpus.front().environment));
}

void add_verify(CLI::App &app, action &run) {
  const auto [cmd, opt] = add_command<verify_options>(
      app, "verify",
      "Create the partitions of SPLIT, run a %smid probe on all at once, and check that they are "
      "disjoint and that each kernel stayed inside its partition",
      exit_footer("a check failed: partitions overlap or a kernel ran outside its partition (with "
                  "--processes: a piece used other SMs or the pieces did not run side by side, "
                  "e.g. without MPS)"));
  cmd->add_option("SPLIT", opt->split,
                  "SM counts separated by commas, optionally ending in 'rest' (e.g. 16,rest or "
                  "8,8,rest; required, unless --from)");
  cmd->add_option("-d,--device", opt->devices,
                  "GPUs to verify: an ordinal in decimal, ordinals separated by commas (e.g. 0,1), "
                  "or all (every GPU the driver sees); each is verified in turn")
      ->check(device_list_check(api))
      ->capture_default_str();
  add_record_options(*cmd, opt->output, "the partitions' table");
  add_ignore_coscheduling_option(*cmd, opt->ignore_coscheduling);
  auto *blocks = cmd->add_option("--blocks-per-sm", opt->blocks_per_sm,
                                 "Probe blocks per device SM launched on each partition (not with "
                                 "--processes, whose pieces fill their SMs themselves)")
                     ->transform(decimal_for<unsigned>())
                     ->capture_default_str();
  auto *processes = cmd->add_flag(
      "--processes", opt->processes,
      "Start one process per piece (greenctx run --split SPLIT --piece I) and check, by filling "
      "the pieces alone and all at once, that each process is told and uses its piece's SMs and "
      "that the pieces run side by side (needs MPS: without it the processes take turns and the "
      "check fails)");
  processes->excludes(blocks);
  add_decimal(*cmd, "--spin-ms", opt->across.spin_ms,
              "With --processes: how long each wave of a fill holds its SMs", 1, 10000)
      ->needs(processes);
  add_decimal(*cmd, "--rounds", opt->across.rounds,
              "With --processes: how many times all pieces fill at once", 1, 100)
      ->needs(processes);
  run_with(*cmd, run, opt, run_verify, [cmd = cmd] { refuse_beside_from(*cmd, {"--processes"}); });
}

} // namespace greenctx::cli
