#include "commands/info/info_record.hpp"

#include "report/json.hpp"

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
  return !g.mps_recorded ? "not recorded" : !g.mps ? "unknown" : *g.mps ? "active" : "not active";
}

std::string mps_note(const gpu &g) {
  const std::string at = fmt::format("GPU {}: MPS ", g.device);
  if (!g.mps_recorded)
    return at + "not recorded (a file of an older greenctx)";
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
  report::record rec;
  rec.kind = "info";
  rec.title = fmt::format("greenctx info: {} GPU{} seen by the driver, shown: {}", r.device_count,
                          r.device_count == 1 ? "" : "s", shown(r.gpus));
  rec.environment = report::environment_of(environment);
  rec.config = {{"devices", "GPUs", asked, {}}};
  rec.values = {
      {"driver_library", "driver library", r.driver_library, {}},
      {"device_count", "GPUs seen by the driver", static_cast<double>(r.device_count), count},
      {"granularity_source",
       "minimum partition and alignment from",
       r.granularity_from_driver ? "driver" : "documented table",
       {}},
      {"max_connections", "work queues per context (CUDA_DEVICE_MAX_CONNECTIONS)",
       static_cast<double>(r.max_connections_in_effect), count},
      {"max_connections_source",
       "work queues from",
       r.max_connections_environment ? "CUDA_DEVICE_MAX_CONNECTIONS" : "driver default",
       {}},
      {"max_connections_environment", "CUDA_DEVICE_MAX_CONNECTIONS",
       maybe(r.max_connections_environment), count, true},
      {"workqueue_config_provisioned",
       "WorkqueueConfig resources provisioned",
       !r.workqueue_config_provisioned   ? cell{}
       : *r.workqueue_config_provisioned ? cell{"yes"}
                                         : cell{"no"},
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
  for (const auto &f : r.features)
    features.rows.push_back({f.name, f.native_since, f.status, f.description});
  rec.tables.push_back(std::move(features));

  rec.notes.push_back(r.granularity_from_driver
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
  if (r.workqueue_config_provisioned == false)
    rec.notes.push_back("note: WorkqueueConfig resources (cuda_compat.h) are accepted and "
                        "reported, not provisioned by this driver: every context shares these "
                        "queues");
  return rec;
}

results from_json(const nlohmann::json &j) {
  results r;
  r.driver_version = j.at("driver_version").get<std::string>();
  r.toolkit_version = j.at("toolkit_version").get<std::string>();
  r.driver_library = j.at("driver_library").get<std::string>();
  r.device_count = whole<int>(j.at("device_count"));
  r.granularity_from_driver = j.at("granularity_source").get<std::string>() == "driver";
  const auto &mc = j.at("max_connections");
  if (!mc.at("environment").is_null())
    r.max_connections_environment = whole<int>(mc.at("environment"));
  r.max_connections_in_effect = whole<int>(mc.at("in_effect"));
  if (const auto it = mc.find("workqueue_config_provisioned"); it != mc.end())
    r.workqueue_config_provisioned = it->get<bool>();
  const auto read_gpu = [](const nlohmann::json &d) {
    gpu g;
    g.device = whole<int>(d.at("device"));
    g.name = d.at("gpu").get<std::string>();
    g.compute_capability = d.at("compute_capability").get<std::string>();
    g.pci_bus_id = d.value("pci_bus_id", std::string());
    g.sm_count = whole<unsigned>(d.at("sm_count"));
    g.min_partition = whole<unsigned>(d.at("min_partition"));
    g.coscheduled_alignment = whole<unsigned>(d.at("coscheduled_alignment"));
    g.valid_sizes = d.value("valid_sizes", std::string());
    if (const auto it = d.find("stream_priorities"); it != d.end()) {
      g.priority_least = whole<int>(it->at("least"));
      g.priority_greatest = whole<int>(it->at("greatest"));
    }
    const auto mps = d.find("mps");
    g.mps_recorded = mps != d.end();
    if (g.mps_recorded && !mps->at("active").is_null())
      g.mps = mps->at("active").get<bool>();
    return g;
  };
  r.gpus = read_each_gpu(j, read_gpu);
  for (const auto &[name, f] : j.at("features").items())
    r.features.push_back({name, f.at("native_since").get<std::string>(),
                          f.at("status").get<std::string>(),
                          f.at("description").get<std::string>()});
  return r;
}

nlohmann::json environment_from_json(const nlohmann::json &j) {
  nlohmann::json env = {{"driver_version", j.at("driver_version")},
                        {"toolkit_version", j.at("toolkit_version")}};
  for (const char *key : {"commit", "date", "command"})
    if (j.contains(key))
      env[key] = j[key];
  return env;
}

} // namespace greenctx::cli::info
