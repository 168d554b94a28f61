// SPDX-License-Identifier: Apache-2.0
// process_check.hpp: the checks of `greenctx verify --processes` on hand-made measurements.
#include "greenctx/plan/process_check.hpp"

#include "text_checks.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using greenctx::check_processes;
using greenctx::fill_span;
using greenctx::piece_measurement;
using greenctx::process_check_settings;
using greenctx_test::contains;

constexpr double ms = 1e6;

// Two fills of 100 ms a wave: 200 ms on exactly the piece's SMs.
process_check_settings settings(bool mps = true) {
  process_check_settings s;
  s.expected_ns = 200 * ms;
  s.mps_active = mps;
  return s;
}

// "16,rest" on the H200 under MPS as it should look: each piece's fill and work 201 ms alone, its
// work as long beside the other, the work of each round starting within 1 ms of each other.
std::vector<piece_measurement> side_by_side() {
  std::vector<piece_measurement> p(2);
  p[0] = {"16", 16, 16, 16, {0, 201 * ms}, {600 * ms, 801 * ms}, {}};
  p[1] = {"rest", 116, 116, 116, {300 * ms, 501 * ms}, {900 * ms, 1101 * ms}, {}};
  for (int k = 0; k < 3; ++k) {
    const double t = 1000 * ms * (k + 1);
    p[0].together.push_back({t, t + 201 * ms});
    p[1].together.push_back({t + 1 * ms, t + 203 * ms});
  }
  return p;
}

std::string all(const std::vector<std::string> &lines) {
  std::string s;
  for (const auto &l : lines)
    s += l + "\n";
  return s;
}

TEST(ProcessCheck, PiecesSideBySidePass) {
  const auto r = check_processes(side_by_side(), settings());
  EXPECT_TRUE(r.ok()) << all(r.violations);
  ASSERT_EQ(r.slowdown.size(), 2u);
  EXPECT_NEAR(r.slowdown[0], 1.0, 1e-9);
  EXPECT_NEAR(r.slowdown[1], 202.0 / 201.0, 1e-9);
  EXPECT_NEAR(r.alone_ratio[0], 201.0 / 200.0, 1e-9);
  EXPECT_NEAR(r.overlap, 200.0 / 201.0, 1e-9); // shared 1..201 of the shortest, 201
}

TEST(ProcessCheck, TimeSlicingFailsAndSaysMpsIsOff) {
  // Without MPS each fill takes twice as long beside the other, and they interleave.
  auto p = side_by_side();
  for (auto &m : p)
    for (auto &t : m.together)
      t.end_ns = t.start_ns + 402 * ms;
  const auto r = check_processes(p, settings(false));
  ASSERT_FALSE(r.ok());
  const std::string v = all(r.violations);
  EXPECT_TRUE(contains(v, "piece 0 (16, 16 SMs): beside the other pieces its work took x2.00"))
      << v;
  EXPECT_TRUE(contains(v, "MPS is not active")) << v;
  EXPECT_EQ(r.violations.size(), 2u) << v; // the overlap is still complete: no third violation
}

TEST(ProcessCheck, WorkOneAfterTheOtherIsNotSideBySide) {
  auto p = side_by_side();
  for (std::size_t k = 0; k < p[1].together.size(); ++k)
    p[1].together[k] = {p[0].together[k].end_ns, p[0].together[k].end_ns + 201 * ms};
  const auto r = check_processes(p, settings());
  const std::string v = all(r.violations);
  EXPECT_TRUE(contains(v, "ran at the same time for 0% of the shortest (median of 3 rounds)")) << v;
  EXPECT_FALSE(contains(v, "MPS is not active")) << v;
}

TEST(ProcessCheck, WorkOffItsPieceIsCaught) {
  auto p = side_by_side();
  p[0].told = 132;             // the process was told the device's count
  p[0].used = 132;             // its probe ran everywhere
  p[0].alone.end_ns = 60 * ms; // and its fill ran in a fraction of the piece's time
  const auto r = check_processes(p, settings());
  const std::string v = all(r.violations);
  EXPECT_TRUE(contains(v, "piece 0 (16, 16 SMs): its process was told 132 SMs")) << v;
  EXPECT_TRUE(contains(v, "its probe ran on 132 SMs")) << v;
  EXPECT_TRUE(contains(v, "x0.30 of the 200.0 ms its SMs need: its blocks had more SMs")) << v;
}

TEST(ProcessCheck, SlowAloneMeansSomethingElseHeldItsSms) {
  auto p = side_by_side();
  p[1].alone.end_ns = p[1].alone.start_ns + 300 * ms;
  const auto r = check_processes(p, settings());
  EXPECT_TRUE(contains(all(r.violations), "piece 1 (rest, 116 SMs): alone its fill took 300.0 ms, "
                                          "x1.50 of the 200.0 ms its SMs need: other work"))
      << all(r.violations);
}

TEST(ProcessCheck, TheSlowdownIsAgainstTheWorkAloneNotTheTimedFill) {
  // The work alone took 300 ms (another GPU, other clocks), the fill its 201: beside the other
  // the work's 300 ms is no slowdown.
  auto p = side_by_side();
  for (auto &m : p) {
    m.work_alone.end_ns = m.work_alone.start_ns + 300 * ms;
    for (auto &t : m.together)
      t.end_ns = t.start_ns + 300 * ms;
  }
  const auto r = check_processes(p, settings());
  EXPECT_TRUE(r.ok()) << all(r.violations);
  EXPECT_NEAR(r.slowdown[0], 1.0, 1e-9);
}

TEST(ProcessCheck, FewerSmsReachedIsANoteAndOnePieceHasNothingBesideIt) {
  auto p = side_by_side();
  p[1].used = 100;
  auto r = check_processes(p, settings());
  EXPECT_TRUE(r.ok());
  EXPECT_TRUE(contains(all(r.notes), "probe reached 100 of them")) << all(r.notes);
  p.resize(1);
  r = check_processes(p, settings());
  EXPECT_TRUE(r.ok());
  EXPECT_TRUE(contains(all(r.notes), "one piece: nothing runs beside it")) << all(r.notes);
}

} // namespace
