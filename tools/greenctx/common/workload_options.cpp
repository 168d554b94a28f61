// SPDX-License-Identifier: Apache-2.0
#include "common/workload_options.hpp"

#include "common/cli_common.hpp"

namespace greenctx::cli::bench {

void add_workload_options(CLI::App &cmd, workload_options &w, setup &cfg) {
  cmd.add_option("--background", w.background,
                 "Background workload: spin (compute-bound blocks of fixed duration), memory "
                 "(streaming copy) or gemm (cuBLAS bf16 GEMM loop)")
      ->check(CLI::IsMember({"spin", "memory", "gemm"}))
      ->capture_default_str();
  cmd.add_option("--critical", w.critical,
                 "Critical workload: kernel (small spin kernel) or gemm (small cuBLAS GEMM)")
      ->check(CLI::IsMember({"kernel", "gemm"}))
      ->capture_default_str();
  add_decimal(cmd, "--critical-blocks", cfg.critical_blocks, "Blocks of the critical kernel", 1,
              1000000);
  add_decimal(cmd, "--critical-us", w.critical_us, "Duration of each critical block", 0, 1000000);
  add_decimal(cmd, "--critical-gemm-n", cfg.critical_gemm_n, "Size of the critical GEMM", 16,
              16384);
  add_decimal(cmd, "--background-us", w.background_us, "Duration of each spin background block", 1,
              1000000);
  add_decimal(cmd, "--waves", cfg.background_waves,
              "Full-GPU waves per spin background kernel (more waves, less quantization)", 1,
              100000);
  add_decimal(cmd, "--memory-mib", w.memory_mib, "MiB copied per memory background kernel", 1,
              65536);
  add_decimal(cmd, "--gemm-n", cfg.gemm_n, "Size of the background GEMM", 64, 32768);
}

void apply(const workload_options &w, setup &cfg) {
  cfg.background = w.background == "memory" ? background_kind::memory
                   : w.background == "gemm" ? background_kind::gemm
                                            : background_kind::spin;
  cfg.critical = w.critical == "gemm" ? critical_kind::gemm : critical_kind::kernel;
  cfg.critical_block_time = std::chrono::microseconds(w.critical_us);
  cfg.background_block_time = std::chrono::microseconds(w.background_us);
  cfg.memory_bytes = std::size_t{w.memory_mib} << 20;
}

std::pair<measure::critical_workload, measure::background_workload> workloads(const device &dev,
                                                                              const setup &cfg) {
  measure::critical_workload critical =
      cfg.critical == critical_kind::kernel
          ? measure::kernel_critical(dev, cfg.critical_blocks, cfg.critical_block_time)
          : measure::gemm_critical(dev, cfg.critical_gemm_n);
  measure::background_workload background =
      cfg.background == background_kind::spin
          ? measure::spin_background(dev, cfg.background_waves, cfg.background_block_time)
      : cfg.background == background_kind::memory
          ? measure::memory_background(dev, cfg.memory_bytes)
          : measure::gemm_background(dev, cfg.gemm_n);
  return {std::move(critical), std::move(background)};
}

} // namespace greenctx::cli::bench
