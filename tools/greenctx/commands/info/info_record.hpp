// What `greenctx info` found, as a record of the report model (report/record.hpp): pure code, so
// that the CPU tests check it and --from converts the files older greenctx wrote.
#pragma once

#include "report/record.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace greenctx::cli::info {

/// One GPU as info shows it.
struct gpu {
  int device = 0;
  std::string name, compute_capability, pci_bus_id; ///< pci_bus_id: empty when not recorded
  unsigned sm_count = 0, min_partition = 0, coscheduled_alignment = 0;
  std::string valid_sizes;              ///< valid_sizes_summary; empty when not recorded
  std::optional<int> priority_least;    ///< the stream priority range (least is the
  std::optional<int> priority_greatest; ///< lowest priority, greatest the highest)
  std::optional<bool> mps;              ///< whether MPS is active; nullopt: not known
  bool mps_recorded = true;             ///< false in files written before info said
};

/// A feature of the driver (driver_info::features).
struct feature_row {
  std::string name, native_since, status, description; ///< status as availability_description
};

/// Everything info reports.
struct results {
  std::string driver_version, toolkit_version, driver_library;
  int device_count = 0;                ///< GPUs the driver sees
  std::string visible_devices;         ///< CUDA_VISIBLE_DEVICES when it was set, else empty
  bool granularity_from_driver = true; ///< else from the guide's table
  std::optional<int> max_connections_environment; ///< CUDA_DEVICE_MAX_CONNECTIONS when set
  int max_connections_in_effect = 8;
  std::optional<bool> workqueue_config_provisioned; ///< nullopt in files that did not say
  std::vector<gpu> gpus;                            ///< the GPUs shown
  std::vector<feature_row> features;
};

/// The record (kind "info"): values of the driver, a table "gpus" (one row per GPU shown, the CSV
/// one) and a table "features"; notes say where the granularity comes from, what MPS means for
/// each GPU and how work queues are shared. `environment` is the JSON of the driver's fields,
/// commit, date and command; `asked` what --device named.
report::record info_record(const results &r, const nlohmann::json &environment,
                           const std::string &asked);

/// The results a file of an older greenctx holds: schema 1 (each GPU in "devices") and the files
/// before it (the one GPU's fields at the top level). Throws nlohmann::json::exception for any
/// other shape.
results from_json(const nlohmann::json &j);

/// The environment part of such a file (driver, toolkit), for info_record.
nlohmann::json environment_from_json(const nlohmann::json &j);

} // namespace greenctx::cli::info
