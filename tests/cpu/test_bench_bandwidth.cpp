// SPDX-License-Identifier: Apache-2.0
// greenctx bench bandwidth without a GPU: its option lists, --quick's SM counts, and the record of
// synthetic results, rendered and read back (pure code). The measurement: tests/gpu.
#include "commands/bench/bandwidth.hpp"
#include "text_checks.hpp"
#include "golden_record.hpp"

#include <greenctx/plan/error.hpp>

#include <gtest/gtest.h>

namespace greenctx::cli::bench::bandwidth {
namespace {

using greenctx_test::contains;
using greenctx_test::rejection;
using measure::memory_level;
using measure::memory_op;

TEST(BandwidthOptions, OpsAndLevelsAreNamedOnceEach) {
  EXPECT_EQ(parse_ops("copy, read"), (std::vector{memory_op::copy, memory_op::read}));
  EXPECT_EQ(parse_levels("l2"), (std::vector{memory_level::l2}));
  EXPECT_TRUE(contains(rejection([] { parse_ops("read,foo"); }),
                       "--ops: 'foo' is not one of read, write, copy"));
  EXPECT_TRUE(contains(rejection([] { parse_ops("read,read"); }), "named twice"));
  EXPECT_TRUE(contains(rejection([] { parse_levels("hbm"); }), "not one of dram, l2"));
  EXPECT_TRUE(contains(rejection([] { parse_ops(""); }), "''"));
}

TEST(BandwidthOptions, QuickTakesFourCountsSpreadOverTheSplits) {
  const std::vector<unsigned> made = {8,  16, 24, 32, 40,  48,  56,  64,
                                      72, 80, 88, 96, 104, 112, 120, 128};
  EXPECT_EQ(quick_sizes(made), (std::vector<unsigned>{8, 48, 88, 128}));
  EXPECT_EQ(quick_sizes({8, 16}), (std::vector<unsigned>{8, 16}));
  EXPECT_TRUE(quick_sizes({}).empty());
}

measure::bandwidth_point point(unsigned sms, double gbs, memory_op op = memory_op::copy) {
  measure::bandwidth_point p;
  p.sms = sms;
  p.op = op;
  p.footprint = std::size_t{1} << 30;
  p.alone = {gbs * 1e9, 1.0};
  return p;
}

measure::bandwidth_result synthetic() {
  measure::bandwidth_result r;
  r.cfg.sizes = {8, 64};
  r.cfg.ops = {memory_op::copy};
  r.cfg.levels = {memory_level::dram};
  r.device_sms = 132;
  r.l2_bytes = std::size_t{50} << 20;
  auto few = point(8, 400), many = point(64, 3000), all = point(132, 3200);
  few.rest_sms = 124;
  few.beside = measure::bandwidth_rate{300e9, 1.0};
  few.rest_alone = measure::bandwidth_rate{3100e9, 1.0};
  few.rest_beside = measure::bandwidth_rate{2850e9, 1.0};
  many.rest_sms = 68;
  many.beside = measure::bandwidth_rate{1600e9, 1.0};
  many.rest_alone = measure::bandwidth_rate{3050e9, 1.0};
  many.rest_beside = measure::bandwidth_rate{1550e9, 1.0};
  many.overlapped = false;
  all.whole_device = true;
  r.points = {few, many, all};
  return r;
}

TEST(BandwidthRecord, SaysWhereTheCurveFlattensAndWhatTheFewestSmsKeep) {
  const auto r = synthetic();
  EXPECT_EQ(sms_reaching(r, memory_level::dram, memory_op::copy, 0.9), 64u);
  EXPECT_EQ(sms_reaching(r, memory_level::dram, memory_op::copy, 0.99), 132u);
  EXPECT_EQ(sms_reaching(r, memory_level::l2, memory_op::copy, 0.9), 0u); // not measured
  const report::record rec = bandwidth_record(r, {{"gpu", "test GPU"}});
  greenctx_test::expect_golden_record(rec, "bench-bandwidth");
  ASSERT_EQ(rec.notes.size(), 1u);
  EXPECT_TRUE(contains(rec.notes[0], "dram copy: 3200.0 GB/s on all 132 SMs; 90% of it from 64 "
                                     "SMs; 8 SMs get 300.0 GB/s beside their rest doing the "
                                     "same (alone 400.0), the two together 3150.0"));
  const report::series *curve = rec.table("curve");
  ASSERT_NE(curve, nullptr);
  ASSERT_EQ(curve->rows.size(), 3u);
  EXPECT_EQ(std::get<double>(curve->rows[0][curve->index("together_gbs")]), 3150.0);
  EXPECT_EQ(std::get<std::string>(curve->rows[1][curve->index("overlapped")]), "no");
  // The whole device has no rest: nothing beside it.
  EXPECT_TRUE(std::holds_alternative<std::monostate>(curve->rows[2][curve->index("beside_gbs")]));
  EXPECT_EQ(rec.figures.size(), 2u);
  // Every format renders it, and its JSON reads back to the same text.
  const std::string text = report::to_text(rec);
  EXPECT_TRUE(contains(text, "dram copy"));
  EXPECT_EQ(report::to_text(report::from_json(report::to_json(rec))), text);
  EXPECT_TRUE(contains(report::to_svg(rec), "<svg"));
  EXPECT_TRUE(contains(report::to_csv(rec), "line,sms,alone_gbs,beside_gbs"));
}

TEST(BandwidthRecord, AloneOnlyDrawsOneFigure) {
  auto r = synthetic();
  r.cfg.beside = false;
  for (auto &p : r.points)
    p.beside = p.rest_alone = p.rest_beside = std::nullopt;
  const report::record rec = bandwidth_record(r, {});
  EXPECT_EQ(rec.figures.size(), 1u);
  EXPECT_FALSE(contains(rec.notes.at(0), "beside"));
}

} // namespace
} // namespace greenctx::cli::bench::bandwidth
