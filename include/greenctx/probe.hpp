// Seeing where kernels run: a probe kernel that records %smid per block, and spin kernels.
#pragma once

#include "greenctx/device.hpp"
#include "greenctx/stream.hpp"

#include <chrono>
#include <vector>

namespace greenctx {

/// Device memory for one SM id per block, and the kernel that fills it. Move-only.
/// Thread safety: launch() and read() on one probe must not overlap.
class sm_probe {
public:
  /// Allocates room for `blocks` ids on `dev`. Each block of a launch records its SM, then spins
  /// for `spin` so that the launch spreads over every SM its context allows.
  sm_probe(const device &dev, unsigned blocks,
           std::chrono::nanoseconds spin = std::chrono::microseconds(20));
  sm_probe(sm_probe &&other) noexcept;
  sm_probe &operator=(sm_probe &&other) noexcept;
  sm_probe(const sm_probe &) = delete;
  sm_probe &operator=(const sm_probe &) = delete;
  ~sm_probe();

  unsigned blocks() const noexcept { return s_.blocks; }
  /// Fills the ids with a marker, then launches the probe on `s`.
  void launch(stream_ref s) const;
  /// The SM of each block; call once the launch has completed.
  std::vector<unsigned> block_sms() const;
  /// The distinct SMs the launch used, sorted.
  std::vector<unsigned> sms_used() const;

private:
  struct state {
    CUdevice device = 0;
    CUdeviceptr ids = 0;
    unsigned blocks = 0;
    unsigned long long spin_ns = 0;
  };
  state s_;
};

/// Launches `blocks` blocks of `threads` threads on `s`, each spinning for `duration`.
void launch_spin(stream_ref s, unsigned blocks, std::chrono::nanoseconds duration,
                 unsigned threads = 32);

} // namespace greenctx
