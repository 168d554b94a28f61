// SPDX-License-Identifier: Apache-2.0
// The communication measurement's pieces on the GPUs (private to the measure layer): each GPU's
// buffer, GEMM and streams, the GEMM loop, the wait with a hang limit and the confinement check.
#pragma once

#include "greenctx/core/device.hpp"
#include "greenctx/core/event.hpp"
#include "greenctx/core/memory.hpp"
#include "greenctx/core/partition.hpp"
#include "greenctx/core/stream.hpp"
#include "greenctx/measure/comm.hpp"
#include "greenctx/measure/gemm.hpp"

#include <array>
#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace greenctx::measure::detail {

inline constexpr const char *comm_api = "greenctx::measure::measure_comm";

/// One GPU: its buffer, its GEMM, and the streams of the mode being measured.
struct comm_gpu {
  std::unique_ptr<device> dev;
  device_buffer buffer;
  std::unique_ptr<measure::gemm> work;
  std::unique_ptr<partition_set> parts; ///< partitioned modes only
  stream comm_stream, gemm_stream;
  stream fill_stream; ///< partitioned modes: fills the all-reduce's SMs for the confinement check
  std::vector<event> starts, ends;
};

/// A GEMM loop on one stream in its own thread, at most two GEMMs queued, until stopped.
class gemm_loop {
public:
  gemm_loop(measure::gemm &g, stream_ref s, const device &dev);
  ~gemm_loop();
  gemm_loop(const gemm_loop &) = delete;
  gemm_loop &operator=(const gemm_loop &) = delete;
  /// Stops, waits for the queued GEMMs and returns TFLOP/s over the loop's life. Throws the
  /// loop's error (cuBLAS or the driver), if it had one.
  double stop();
  /// Asks the loop to stop launching without waiting for it (after a hang: it may never end).
  void request_stop() { stop_ = true; }

private:
  void loop();
  measure::gemm &g_;
  stream_ref s_;
  std::array<event, 2> ring_;
  std::atomic<bool> stop_{false};
  double tflops_ = 0;
  std::string failure_;
  std::thread thread_;
};

/// Waits for `e`, polling, up to `limit`; false on a hang.
bool wait_for(event_ref e, std::chrono::seconds limit);

/// Sets the streams of `m` on every GPU (and its k-SM partitions), or throws.
void prepare(std::vector<comm_gpu> &gpus, const comm_mode &m);

/// What the confinement check found.
struct measured_confinement {
  std::optional<bool> confined; ///< nullopt: not known (see note)
  std::string note;             ///< why not known, or what was seen
  bool hung = false;            ///< the all-reduce did not end: the device may be unusable
};

/// Whether each GPU's all-reduce kernel stays on the SMs of its k-SM green context. One GPU at a
/// time, its partition is filled (greenctx::fill_sms: no other block fits beside the spin) for
/// `fill`; then one all-reduce on the comm streams. Kept to the partition, that GPU's part can
/// start only when the spin ends, and the all-reduce (which needs every GPU) ends after it; run
/// anywhere else (the other SMs are idle now), it ends long before. One GPU at a time because a
/// confined GPU would otherwise hold back the all-reduce of one that is not. Call it after an
/// all-reduce has run on these streams (NCCL sets up its connections on the first one, which may
/// take longer than the fill).
measured_confinement measure_confinement(std::vector<comm_gpu> &gpus, nccl_clique &clique,
                                         const std::vector<CUdeviceptr> &buffers,
                                         const std::vector<stream_ref> &comm_streams,
                                         nccl_clique::operation op, std::chrono::milliseconds fill,
                                         std::chrono::seconds limit);

/// The GEMM loop on every GPU, GPU i on streams[i], for `length`: TFLOP/s per GPU, the mean.
double run_gemm_loops(std::vector<comm_gpu> &gpus, const std::vector<stream> &streams,
                      std::chrono::milliseconds length);

/// "0,1,3".
std::string join_ordinals(const std::vector<int> &ordinals);

} // namespace greenctx::measure::detail
