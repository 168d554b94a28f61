// SPDX-License-Identifier: Apache-2.0
#include "commands/info/info_record.hpp"

#include <greenctx/core/device.hpp>

#include <fmt/format.h>

namespace greenctx::cli::info {
namespace {

using report::cell;
using report::number_format;

const number_format count{"", 0};

cell maybe(const std::optional<int> &x) {
  return x ? cell{static_cast<double>(*x)} : cell{};
}

std::string mps_word(const gpu &g) {
  return !g.mps ? "unknown" : *g.mps ? "active" : "not active";
}

std::string mps_note(const gpu &g) {
  const std::string at = fmt::format("GPU {}: MPS ", g.device);
  if (!g.mps)
    return at + "unknown: this driver does not say (CU_DEVICE_ATTRIBUTE_MPS_ENABLED)";
  if (*g.mps)
    return at + "active: this process is an MPS client; green contexts of different processes "
                "can hold disjoint SMs side by side";
  return at + "not active: processes on this GPU time-slice; with MPS (greenctx mps start) "
              "their green contexts run side by side";
}

std::string shown(const std::vector<gpu> &gpus) {
  std::string out;
  for (const auto &g : gpus)
    out += (out.empty() ? "" : ",") + std::to_string(g.device);
  return out;
}

} // namespace

report::record info_record(const results &r, const nlohmann::json &environment,
                           const std::string &asked) {
  const bool granularity_from_driver =
      r.driver[feature::sm_partition_info].status == availability::native;
  const bool workqueues_provisioned =
      r.driver[feature::workqueue_resources].status == availability::native;
  const int max_connections = r.max_connections_environment.value_or(8);
  report::record rec;
  rec.kind = "info";
  rec.title = fmt::format("greenctx info: {} GPU{} seen by the driver, shown: {}", r.device_count,
                          r.device_count == 1 ? "" : "s", shown(r.gpus));
  rec.environment = report::environment_of(environment);
  rec.config = {{"devices", "GPUs", asked, {}}};
  rec.values = {
      {"driver_library", "driver library", r.driver.library, {}},
      {"device_count", "GPUs seen by the driver", static_cast<double>(r.device_count), count},
      {"granularity_source",
       "minimum partition and alignment from",
       granularity_from_driver ? "driver" : "documented table",
       {}},
      {"max_connections", "work queues per context (CUDA_DEVICE_MAX_CONNECTIONS)",
       static_cast<double>(max_connections), count},
      {"max_connections_source",
       "work queues from",
       r.max_connections_environment ? "CUDA_DEVICE_MAX_CONNECTIONS" : "driver default",
       {}},
      {"max_connections_environment", "CUDA_DEVICE_MAX_CONNECTIONS",
       maybe(r.max_connections_environment), count, true},
      {"workqueue_config_provisioned",
       "WorkqueueConfig resources provisioned",
       report::yes_no(workqueues_provisioned),
       {}}};
  if (!r.visible_devices.empty())
    rec.values.push_back({"visible_devices", "CUDA_VISIBLE_DEVICES", r.visible_devices, {}});

  report::series gpus{"gpus",
                      "GPUs",
                      {{"device", "GPU", count},
                       {"gpu", "name", {}, align::left},
                       {"compute_capability", "CC", {}, align::left},
                       {"pci_bus_id", "PCI", {}, align::left},
                       {"sm_count", "SMs", count},
                       {"min_partition", "min", count},
                       {"coscheduled_alignment", "align", count},
                       {"valid_sizes", "valid sizes", {}, align::left},
                       {"priority_least", "lowest prio", count},
                       {"priority_greatest", "highest prio", count},
                       {"mps", "MPS", {}, align::left}},
                      {}};
  for (const auto &g : r.gpus)
    gpus.rows.push_back({static_cast<double>(g.device), g.name, g.compute_capability,
                         g.pci_bus_id.empty() ? cell{} : cell{g.pci_bus_id},
                         static_cast<double>(g.sm_count), static_cast<double>(g.min_partition),
                         static_cast<double>(g.coscheduled_alignment),
                         g.valid_sizes.empty() ? cell{} : cell{g.valid_sizes},
                         maybe(g.priority_least), maybe(g.priority_greatest), mps_word(g)});
  rec.tables.push_back(std::move(gpus));

  report::series features{"features",
                          "Features",
                          {{"feature", "feature", {}, align::left},
                           {"native_since", "native since", {}, align::left},
                           {"status", "here", {}, align::left},
                           {"description", "what it is", {}, align::left, true}},
                          {}};
  for (const auto &f : r.driver.features)
    features.rows.push_back({f.name, format_cuda_version(f.introduced),
                             availability_description(f.status), f.description});
  rec.tables.push_back(std::move(features));

  rec.notes.push_back(granularity_from_driver
                          ? "note: the minimum partition and alignment are reported by the driver"
                          : "note: the minimum partition and alignment are from the guide's table: "
                            "this driver does not report them");
  for (const auto &g : r.gpus)
    rec.notes.push_back("note: " + mps_note(g));
  rec.notes.push_back(
      r.max_connections_environment
          ? fmt::format("note: work queues: CUDA_DEVICE_MAX_CONNECTIONS={} (from the environment)",
                        *r.max_connections_environment)
          : "note: work queues: CUDA_DEVICE_MAX_CONNECTIONS unset: the driver's default of 8 "
            "applies");
  if (const auto warning = max_connections_warning(r.max_connections_environment))
    rec.notes.push_back("warning: " + *warning);
  if (!workqueues_provisioned)
    rec.notes.push_back("note: WorkqueueConfig resources (cuda_compat.h) are accepted and "
                        "reported, not provisioned by this driver: every context shares these "
                        "queues");
  return rec;
}

} // namespace greenctx::cli::info
