// The checks of `greenctx verify --processes`, on what the pieces' processes measured: pure code,
// tested on the CPU. One process per piece of a split, each under `greenctx run --split S
// --piece I`, fills its piece (waves of blocks that each hold an SM's half for a known time) alone
// and then at the same moment as the others; under MPS the pieces must run side by side, each on
// its own SMs. The measurement is tools/greenctx/verify_processes.cpp's.
#pragma once

#include <string>
#include <vector>

namespace greenctx {

/// One fill's span on the GPU's global timer (%globaltimer, ns): from its first block's start to
/// its last block's end. The timer is the device's, the same in every process.
struct fill_span {
  double start_ns = 0;
  double end_ns = 0;
  double length_ns() const noexcept { return end_ns - start_ns; }
};

/// What one piece's process saw.
struct piece_measurement {
  std::string label;    ///< "16" or "rest"
  unsigned planned = 0; ///< SMs of the piece, as the split gave them in greenctx's process
  unsigned told = 0;    ///< SMs the process was told (the device attribute)
  unsigned used = 0;    ///< distinct %smid values of its probe (renumbered under MPS)
  fill_span alone;      ///< its fill while the other processes were idle
  std::vector<fill_span> together; ///< its fill in each round where all filled at once
};

struct process_check_settings {
  double expected_ns = 0; ///< a fill's length on exactly its piece: waves x the spin time
  bool mps_active = false;
  /// Alone, a fill must take expected_ns x [fastest, slowest]: faster means its blocks had more
  /// SMs than the piece, slower that something else held its SMs.
  double fastest = 0.9, slowest = 1.3;
  /// Beside the others, a piece's fill may take at most this many times its fill alone (the
  /// median over rounds), and the fills must overlap for at least `overlap` of the shortest.
  double slowdown = 1.25, overlap = 0.75;
};

struct process_check_report {
  std::vector<std::string> violations; ///< empty when every check passed
  std::vector<std::string> notes;
  std::vector<double> alone_ratio; ///< per piece: its fill alone / expected_ns
  std::vector<double> slowdown;    ///< per piece: median over rounds of together / alone
  double overlap = 0;              ///< median over rounds of (shared time / shortest fill)
  bool ok() const noexcept { return violations.empty(); }
};

/// The checks (pure): each process was told its piece's SM count, ran on no more SMs than it, took
/// its piece's time alone, and beside the others kept that time while all ran at once.
process_check_report check_processes(const std::vector<piece_measurement> &pieces,
                                     const process_check_settings &settings);

} // namespace greenctx
