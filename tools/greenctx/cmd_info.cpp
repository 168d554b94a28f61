// greenctx info: what the driver and GPU offer for partitioning.
#include "cli_common.hpp"
#include "commands.hpp"

#include <fmt/format.h>

#include <iostream>
#include <memory>

namespace greenctx::cli {
namespace {

struct info_options {
  int device = 0;
  bool json = false;
};


int run_info(const info_options &opt) {
  const driver_info drv = query_driver();
  const int count = device::count();
  const device dev(opt.device);
  const auto [major, minor] = dev.compute_capability();
  const sm_resource sms = dev.sms();
  const auto [least, greatest] = dev.stream_priority_range();
  const auto connections = max_connections_from_environment();
  const bool grain_from_driver = drv[feature::sm_partition_info].status == availability::native;

  if (opt.json) {
    nlohmann::json j = environment_json(drv, dev);
    j["driver_library"] = drv.library;
    j["device_count"] = count;
    j["granularity_source"] = grain_from_driver ? "driver" : "documented table";
    j["stream_priorities"] = {{"least", least}, {"greatest", greatest}};
    j["max_connections"] = {
        {"environment", connections ? nlohmann::json(*connections) : nlohmann::json(nullptr)},
        {"in_effect", connections.value_or(8)},
        {"source", connections ? "CUDA_DEVICE_MAX_CONNECTIONS" : "driver default"},
        {"workqueue_config_provisioned",
         drv[feature::workqueue_resources].status == availability::native}};
    for (const auto &f : drv.features)
      j["features"][f.name] = {{"status", availability_description(f.status)},
                               {"native_since", format_cuda_version(f.introduced)},
                               {"description", f.description}};
    std::cout << j.dump(2) << "\n";
    return exit_ok;
  }

  fmt::print("Driver        CUDA {} ({}); greenctx built with toolkit {}\n",
             format_cuda_version(drv.version), drv.library, format_cuda_version(toolkit_version()));
  fmt::print("GPU {}/{}       {}, compute capability {}.{}\n", opt.device, count, dev.name(), major,
             minor);
  fmt::print("SMs           {} (minimum partition {}, co-scheduling alignment {}; {})\n",
             sms.sm_count(), sms.min_partition_size(), sms.coscheduled_alignment(),
             grain_from_driver ? "reported by the driver"
                               : "from the guide's table: this driver "
                                 "does not report them");
  fmt::print("Valid sizes   {}\n", valid_sizes_summary(sms.sm_count(), sms.grain()));
  fmt::print("Priorities    {} (lowest) to {} (highest)\n", least, greatest);
  if (connections)
    fmt::print("Work queues   CUDA_DEVICE_MAX_CONNECTIONS={} (from the environment)\n",
               *connections);
  else
    fmt::print(
        "Work queues   CUDA_DEVICE_MAX_CONNECTIONS unset: the driver's default of 8 applies\n");
  if (drv[feature::workqueue_resources].status != availability::native)
    fmt::print("              WorkqueueConfig resources (cuda_compat.h) are accepted and reported, "
               "not provisioned\n              by this driver: every context shares these "
               "queues\n");
  fmt::print("\nFeature                 Native since  Here\n");
  for (const auto &f : drv.features)
    fmt::print("{:<23} {:<13} {}\n", f.name, format_cuda_version(f.introduced),
               availability_description(f.status));
  return exit_ok;
}

} // namespace

void add_info(CLI::App &app, action &run) {
  auto opt = std::make_shared<info_options>();
  auto *cmd =
      app.add_subcommand("info", "Show the driver, the GPU and what it offers for partitioning");
  add_device_option(*cmd, opt->device);
  cmd->add_flag("--json", opt->json, "Print JSON instead of text");
  cmd->callback([opt, &run] { run = [opt] { return run_info(*opt); }; });
}

} // namespace greenctx::cli
