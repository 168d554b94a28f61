// greenctx info: what the driver and GPU offer for partitioning.
#include "cli_common.hpp"
#include "commands.hpp"
#include "report/output.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace greenctx::cli {
namespace {

constexpr const char *api = "greenctx info";

struct info_options {
  std::string devices = "all";
  std::string json; ///< --json: a file, "-" for stdout, empty: not asked
};

nlohmann::json mps_json(const device &dev) {
  const std::optional<bool> on = mps_active(dev);
  return {{"active", on ? nlohmann::json(*on) : nlohmann::json(nullptr)}};
}

std::string mps_line(const device &dev) {
  const std::optional<bool> on = mps_active(dev);
  if (!on)
    return "MPS           unknown: this driver does not say (CU_DEVICE_ATTRIBUTE_MPS_ENABLED)\n";
  if (*on)
    return "MPS           active: this process is an MPS client; green contexts of different "
           "processes\n              can hold disjoint SMs side by side\n";
  return "MPS           not active: processes on this GPU time-slice; with MPS (greenctx mps\n"
         "              start) their green contexts run side by side\n";
}

// What one GPU offers: its part of the JSON (the environment's fields, the PCI bus id, the valid
// sizes and the stream priorities).
nlohmann::json device_json(const driver_info &drv, const device &dev) {
  const sm_resource sms = dev.sms();
  const auto [least, greatest] = dev.stream_priority_range();
  nlohmann::json j = environment_json(drv, dev);
  j.erase("driver_version");
  j.erase("toolkit_version");
  j["pci_bus_id"] = dev.pci_bus_id();
  j["valid_sizes"] = valid_sizes_summary(sms.sm_count(), sms.grain());
  j["stream_priorities"] = {{"least", least}, {"greatest", greatest}};
  j["mps"] = mps_json(dev);
  return j;
}

// Appends one GPU's section to `out`.
void print_device(std::string &out, const device &dev, int count, bool grain_from_driver) {
  const auto [major, minor] = dev.compute_capability();
  const sm_resource sms = dev.sms();
  const auto [least, greatest] = dev.stream_priority_range();
  out += fmt::format("GPU {}/{}       {}, compute capability {}.{}, PCI {}\n", dev.ordinal(), count,
                     dev.name(), major, minor, dev.pci_bus_id());
  out += fmt::format("SMs           {} (minimum partition {}, co-scheduling alignment {}; {})\n",
                     sms.sm_count(), sms.min_partition_size(), sms.coscheduled_alignment(),
                     grain_from_driver ? "reported by the driver"
                                       : "from the guide's table: this driver "
                                         "does not report them");
  out += fmt::format("Valid sizes   {}\n", valid_sizes_summary(sms.sm_count(), sms.grain()));
  out += fmt::format("Priorities    {} (lowest) to {} (highest)\n", least, greatest);
  out += mps_line(dev);
}

int run_info(const info_options &opt) {
  // A malformed list was refused by the parse; the ordinals are checked against the driver here.
  const auto list = parse_device_list(opt.devices, api);
  check_json_path(api, opt.json);
  const driver_info drv = query_driver();
  const int count = device::count();
  const std::vector<int> ordinals = resolve_device_list(list, count, api);
  std::vector<std::unique_ptr<device>> devs;
  for (int d : ordinals)
    devs.push_back(std::make_unique<device>(d));
  const auto connections = max_connections_from_environment();
  const bool grain_from_driver = drv[feature::sm_partition_info].status == availability::native;

  if (!opt.json.empty()) {
    // The driver's fields at the top level, each GPU's in `devices`.
    nlohmann::json j;
    j["driver_version"] = format_cuda_version(drv.version);
    j["toolkit_version"] = format_cuda_version(toolkit_version());
    j["driver_library"] = drv.library;
    j["device_count"] = count;
    j["devices"] = nlohmann::json::array();
    for (const auto &dev : devs)
      j["devices"].push_back(device_json(drv, *dev));
    j["granularity_source"] = grain_from_driver ? "driver" : "documented table";
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
    write_json(api, "info", opt.json, j);
    if (json_replaces_text(opt.json))
      return exit_ok;
  }

  // Everything is read before anything is printed: a GPU that fails a query prints nothing.
  std::string out;
  out += fmt::format("Driver        CUDA {} ({}); greenctx built with toolkit {}\n",
                     format_cuda_version(drv.version), drv.library,
                     format_cuda_version(toolkit_version()));
  out += fmt::format("GPUs          {} seen by the driver{}; shown: {}\n", count,
                     visible_devices_note(), join_ordinals(ordinals));
  for (const auto &dev : devs) {
    out += "\n";
    print_device(out, *dev, count, grain_from_driver);
  }
  out += "\n";
  if (connections)
    out += fmt::format("Work queues   CUDA_DEVICE_MAX_CONNECTIONS={} (from the environment)\n",
                       *connections);
  else
    out += fmt::format(
        "Work queues   CUDA_DEVICE_MAX_CONNECTIONS unset: the driver's default of 8 applies\n");
  if (drv[feature::workqueue_resources].status != availability::native)
    out += fmt::format(
        "              WorkqueueConfig resources (cuda_compat.h) are accepted and reported, "
        "not provisioned\n              by this driver: every context shares these "
        "queues\n");
  out += fmt::format("\nFeature                 Native since  Here\n");
  for (const auto &f : drv.features)
    out += fmt::format("{:<23} {:<13} {}\n", f.name, format_cuda_version(f.introduced),
                       availability_description(f.status));
  std::fputs(out.c_str(), stdout);
  return exit_ok;
}

} // namespace

void add_info(CLI::App &app, action &run) {
  auto opt = std::make_shared<info_options>();
  auto *cmd =
      app.add_subcommand("info", "Show the driver, the GPU and what it offers for partitioning");
  cmd->add_option("-d,--device", opt->devices,
                  "GPUs to show: all (every GPU the driver sees, under CUDA_VISIBLE_DEVICES), or "
                  "ordinals in decimal separated by commas (e.g. 0 or 0,1)")
      ->check(device_list_check(api))
      ->capture_default_str();
  add_json_option(*cmd, opt->json);
  cmd->callback([opt, &run] { run = [opt] { return run_info(*opt); }; });
}

} // namespace greenctx::cli
