// SPDX-License-Identifier: Apache-2.0
// The communication measurement in this process on one GPU, with NCCL's one-rank mean in place
// of the all-reduce (what `bench comm`'s one-GPU check runs in its children): the pipeline, the
// k-SM partition with its confinement check, the GEMM loop beside it. Skipped, saying why, without
// NCCL or cuBLAS. The numbers measure no communication.
#include "gpu_fixture.hpp"

namespace greenctx::test {
namespace {

using namespace std::chrono_literals;

class CommTest : public gpu_test {};

TEST_F(CommTest, one_rank_pipeline_on_one_gpu) {
  if (!measure::load_nccl().loaded)
    GTEST_SKIP() << measure::load_nccl().failure;
  if (!measure::gemm::available())
    GTEST_SKIP() << measure::gemm::availability();
  measure::comm_config cfg;
  cfg.devices = {0};
  cfg.operation = measure::nccl_clique::operation::average;
  cfg.sizes = {std::size_t{1} << 20};
  cfg.modes = {{measure::comm_mode_kind::alone}, {measure::comm_mode_kind::partitioned, 16}};
  cfg.iterations = 10;
  cfg.warmup = 2;
  cfg.window = 50ms;
  cfg.gemm_n = 2048;
  cfg.gemm_alone = true;
  std::vector<std::string> lines;
  const measure::comm_result r =
      measure::measure_comm(cfg, [&](const std::string &line) { lines.push_back(line); });
  EXPECT_TRUE(r.error.empty()) << r.error;
  EXPECT_EQ(r.devices, cfg.devices);
  EXPECT_FALSE(r.nccl_version.empty());
  ASSERT_TRUE(r.gemm_alone_tflops);
  EXPECT_GT(*r.gemm_alone_tflops, 0);
  EXPECT_FALSE(r.split_sizes.empty());
  ASSERT_EQ(r.points.size(), 2u);
  const auto &alone = r.points[0], &green = r.points[1];
  EXPECT_EQ(alone.m.name(), "alone");
  EXPECT_EQ(green.m.name(), "green-16");
  for (const auto &p : r.points) {
    EXPECT_TRUE(p.failure.empty()) << p.failure;
    EXPECT_GE(p.allreduce_us.size(), cfg.iterations) << p.m.name();
  }
  EXPECT_EQ(alone.gemm_tflops, 0); // alone: no GEMM loop
  EXPECT_TRUE(alone.comm_sms.empty());
  EXPECT_GT(green.gemm_tflops, 0);
  EXPECT_EQ(green.comm_sms, (std::vector<unsigned>{16}));
  EXPECT_TRUE(green.confined.has_value()) << green.confinement; // checked, with an answer
  EXPECT_FALSE(green.confinement.empty());
  EXPECT_FALSE(lines.empty());
}

} // namespace
} // namespace greenctx::test
