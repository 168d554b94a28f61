// SPDX-License-Identifier: Apache-2.0
// greenctx info: what the driver and GPU offer for partitioning.
#include "common/build_commit.hpp"
#include "common/cli_common.hpp"
#include "common/help.hpp"
#include "commands/commands.hpp"
#include "commands/info/info_record.hpp"
#include "report/output.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace greenctx::cli {
namespace {

constexpr const char *api = "greenctx info";

struct info_options {
  std::string devices = "all";
  output_options output;
};

info::gpu gpu_of(const device &dev) {
  const auto [major, minor] = dev.compute_capability();
  const sm_resource sms = dev.sms();
  const auto [least, greatest] = dev.stream_priority_range();
  return {dev.ordinal(),
          dev.name(),
          fmt::format("{}.{}", major, minor),
          dev.pci_bus_id(),
          sms.sm_count(),
          sms.min_partition_size(),
          sms.coscheduled_alignment(),
          valid_sizes_summary(sms.sm_count(), sms.grain()),
          least,
          greatest,
          mps_active(dev)};
}

// The driver's fields and the greenctx commit.
nlohmann::json environment_of_driver(const driver_info &drv) {
  return {{"driver_version", format_cuda_version(drv.version)},
          {"toolkit_version", format_cuda_version(toolkit_version())},
          {"commit", build_commit()}};
}

int run_info(const info_options &opt) {
  check_output_paths(api, opt.output);
  if (!opt.output.from.empty()) {
    print_record(api, opt.output, read_record(api, "info", opt.output.from));
    return exit_ok;
  }
  // A malformed list was refused by the parse; the ordinals are checked against the driver here.
  const auto list = parse_device_list(opt.devices, api);
  const driver_info drv = query_driver();
  const int count = device::count();
  const std::vector<int> ordinals = resolve_device_list(list, count, api);
  // Everything is read before anything is printed: a GPU that fails a query prints nothing.
  info::results r;
  r.driver = drv;
  r.device_count = count;
  if (const char *visible = std::getenv("CUDA_VISIBLE_DEVICES"))
    r.visible_devices = visible;
  r.max_connections_environment = max_connections_from_environment();
  for (int d : ordinals)
    r.gpus.push_back(gpu_of(device(d)));
  print_record(
      api, opt.output,
      info::info_record(r, with_date_and_command(environment_of_driver(drv)), opt.devices));
  return exit_ok;
}

} // namespace

void add_info(CLI::App &app, action &run) {
  const auto [cmd, opt] = add_command<info_options>(
      app, "info", "Show the driver, the GPU and what it offers for partitioning", exit_footer(""));
  cmd->add_option("-d,--device", opt->devices,
                  "GPUs to show: all (every GPU the driver sees, under CUDA_VISIBLE_DEVICES), or "
                  "ordinals in decimal separated by commas (e.g. 0 or 0,1)")
      ->check(device_list_check(api))
      ->capture_default_str();
  add_record_options(*cmd, opt->output, "the GPUs' table");
  run_with(*cmd, run, opt, run_info, [cmd = cmd] { refuse_beside_from(*cmd); });
}

} // namespace greenctx::cli
