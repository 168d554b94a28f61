// Seeing where kernels run: a probe kernel that records %smid per block, and spin kernels.
#pragma once

#include "greenctx/cxx_standard.hpp"

#include "greenctx/core/device.hpp"
#include "greenctx/core/memory.hpp"
#include "greenctx/core/stream.hpp"

#include <chrono>
#include <vector>

namespace greenctx {

/// Device memory for one SM id per block, and the kernel that fills it. Movable, not copyable.
/// Thread safety: launch() and read() on one probe must not overlap.
class sm_probe {
public:
  /// Allocates room for `blocks` ids on `dev`. Each block of a launch records its SM, then spins
  /// for `spin` so that the launch spreads over every SM its context allows.
  sm_probe(const device &dev, unsigned blocks,
           std::chrono::nanoseconds spin = std::chrono::microseconds(20));
  unsigned blocks() const noexcept { return blocks_; }
  /// Fills the ids with a marker, then launches the probe on `s`.
  void launch(stream_ref s) const;
  /// The SM of each block; call once the launch has completed.
  std::vector<unsigned> block_sms() const;
  /// The distinct SMs the launch used, sorted.
  std::vector<unsigned> sms_used() const;

private:
  device_buffer ids_;
  unsigned blocks_ = 0;
  unsigned long long spin_ns_ = 0;
};

} // namespace greenctx
