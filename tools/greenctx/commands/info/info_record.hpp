// SPDX-License-Identifier: Apache-2.0
// What `greenctx info` found, as a record of the report model (report/record.hpp): pure code, so
// that the CPU tests check it.
#pragma once

#include "report/record.hpp"

#include <greenctx/driver/driver.hpp>
#include <greenctx/plan/error.hpp>

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
};

/// Everything info reports.
struct results {
  driver_info driver;          ///< its library, features and what they say of granularity
  int device_count = 0;        ///< GPUs the driver sees
  std::string visible_devices; ///< CUDA_VISIBLE_DEVICES when it was set, else empty
  std::optional<int> max_connections_environment; ///< CUDA_DEVICE_MAX_CONNECTIONS when set
  std::vector<gpu> gpus;                          ///< the GPUs shown
};

/// The record (kind "info"): values of the driver, a table "gpus" (one row per GPU shown, the CSV
/// one) and a table "features"; notes say where the granularity comes from, what MPS means for
/// each GPU and how work queues are shared. `environment` is the JSON of the driver's fields,
/// commit, date and command; `asked` what --device named.
report::record info_record(const results &r, const nlohmann::json &environment,
                           const std::string &asked);

} // namespace greenctx::cli::info
