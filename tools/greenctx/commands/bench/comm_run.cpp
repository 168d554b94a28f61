// SPDX-License-Identifier: Apache-2.0
// greenctx bench --comm: the measurement in the process that runs it, the library's
// (measure::measure_comm), with the device list, the one-GPU test mode and the JSON the parent
// reads (see comm_children.cpp).
#include "commands/bench/comm_run.hpp"
#include "common/cli_common.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <string_view>

namespace greenctx::cli::bench::comm {
namespace {

constexpr const char *api = "greenctx bench --comm";
using operation = measure::nccl_clique::operation;

// GREENCTX_COMM_ONE_GPU_TEST lets the tool's own GPU check run the whole pipeline (children, NCCL,
// partitions, the confinement check, GEMM loop, reports) on a 1-GPU machine, with a one-rank
// operation in place of the all-reduce: "1" or "mean", NCCL's one-rank mean (a kernel launched
// through the CUDA runtime); "self", a send/recv to itself (through NCCL's own kernel launch).
// nullopt when unset or empty; a request_error for any other value.
std::optional<operation> one_gpu_test_operation() {
  const char *v = std::getenv("GREENCTX_COMM_ONE_GPU_TEST");
  if (!v || !*v)
    return std::nullopt;
  const std::string_view text(v);
  if (text == "1" || text == "mean")
    return operation::average;
  if (text == "self")
    return operation::self_copy;
  throw request_error(CUDA_ERROR_INVALID_VALUE, api,
                      fmt::format("GREENCTX_COMM_ONE_GPU_TEST='{}': give 1 or mean (NCCL's "
                                  "one-rank mean) or self (a send/recv to itself), or unset it",
                                  text));
}

// One point as the parent reads it (point_from_json).
nlohmann::json point_json(const point &p) {
  return {{"mode", p.m.name()},
          {"bytes", p.bytes},
          {"gemm_tflops", p.gemm_tflops},
          {"comm_sms", p.comm_sms},
          {"confined", p.confined ? nlohmann::json(*p.confined) : nlohmann::json(nullptr)},
          {"confinement", p.confinement},
          {"failure", p.failure},
          {"allreduce_us", p.allreduce_us}};
}

} // namespace

nlohmann::json measure(const run_config &cfg, const std::function<void(const std::string &)> &log) {
  const driver_info drv = query_driver();
  const int count = device::count();
  const std::vector<int> ordinals = resolve_device_list(cfg.asked_devices, count, api);
  const auto test_op = one_gpu_test_operation(); // the report says such numbers mean nothing
  const bool one_gpu_test = test_op.has_value();
  if (ordinals.size() < 2 && !(one_gpu_test && ordinals.size() == 1))
    throw error(CUDA_ERROR_NO_DEVICE, api,
                fmt::format("needs 2 GPUs or more: {} ({}){}; an all-reduce over one GPU has "
                            "nothing to communicate. Run it on a multi-GPU host (--device all)",
                            ordinals.size() == 1 && count == 1 ? "the driver sees 1 GPU"
                                                               : "--device names 1 GPU",
                            join_ordinals(ordinals), visible_devices_note()));
  measure::comm_config how = cfg;
  how.devices = ordinals;
  how.operation = test_op.value_or(operation::sum);
  // Kept open over the measurement: its primary context is then made once, not again after.
  const device first(ordinals.front());
  nlohmann::json env = environment_json(drv, first);
  const measure::comm_result r = measure::measure_comm(how, log);

  env["devices"] = r.devices;
  if (one_gpu_test) {
    env["one_gpu_test"] = true;
    env["one_gpu_test_operation"] =
        *test_op == operation::self_copy ? "self send/recv" : "one-rank mean";
  }
  env["nccl_library"] = r.nccl_library;
  env["nccl_version"] = r.nccl_version;
  for (const char *name : {"NCCL_NVLS_ENABLE", "NCCL_MAX_CTAS", "CUDA_DEVICE_MAX_CONNECTIONS"}) {
    const char *v = std::getenv(name);
    env["env"][name] = v ? nlohmann::json(v) : nlohmann::json(nullptr);
  }
  env["cublas"] = r.cublas;
  env["split_sizes"] = r.split_sizes; // the N,rest splits every GPU makes: tune --comm's sizes
  nlohmann::json out;
  out["environment"] = env;
  out["points"] = nlohmann::json::array();
  for (const auto &p : r.points)
    out["points"].push_back(point_json(p));
  if (r.gemm_alone_tflops)
    out["gemm_alone_tflops"] = *r.gemm_alone_tflops;
  if (!r.error.empty())
    out["error"] = r.error;
  return out;
}

} // namespace greenctx::cli::bench::comm
