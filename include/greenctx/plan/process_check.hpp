// SPDX-License-Identifier: Apache-2.0
// The checks of `greenctx verify --processes`, on what the pieces' processes measured: pure code,
// tested on the CPU. One process per piece of a split, each under `greenctx run --split S
// --piece I`, fills its piece alone with blocks that each hold half an SM for a known time (the
// waves this takes count its SMs), then runs a fixed amount of work on it alone and at the same
// moment as the others (work, not time: a process that takes turns with another, or shares SMs
// with it, takes longer; blocks that spin on the clock would not show it). Under MPS the pieces
// must run side by side, each on its own SMs. The measurement is
// tools/greenctx/verify_processes.cpp's.
#pragma once

#include "greenctx/cxx_standard.hpp"

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
  fill_span alone;      ///< its timed fill while the other processes were idle
  fill_span work_alone; ///< its fixed work while the other processes were idle
  std::vector<fill_span> together; ///< its fixed work in each round where all worked at once
};

struct process_check_settings {
  double expected_ns = 0; ///< a fill's length on exactly its piece: waves x the spin time
  bool mps_active = false;
  /// Alone, a fill must take expected_ns x [fastest, slowest]: faster means its blocks had more
  /// SMs than the piece, slower that something else held its SMs.
  double fastest = 0.9, slowest = 1.3;
  /// Beside the others, a piece's work may take at most this many times its work alone (the
  /// median over rounds), and the pieces' work must overlap for at least `overlap` of the
  /// shortest.
  double slowdown = 1.25, overlap = 0.75;
};

struct process_check_report {
  std::vector<std::string> violations; ///< empty when every check passed
  std::vector<std::string> notes;
  std::vector<double> alone_ratio; ///< per piece: its fill alone / expected_ns
  std::vector<double> slowdown;    ///< per piece: median over rounds of together / work_alone
  double overlap = 0;              ///< median over rounds of (shared time / shortest fill)
  bool ok() const noexcept { return violations.empty(); }
};

/// The checks (pure): each process was told its piece's SM count, ran on no more SMs than it, took
/// its piece's time alone, and beside the others kept that time while all ran at once.
process_check_report check_processes(const std::vector<piece_measurement> &pieces,
                                     const process_check_settings &settings);

} // namespace greenctx
