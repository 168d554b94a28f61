// SPDX-License-Identifier: Apache-2.0
// The communication measurement's pure parts (no GPU): mode names, byte counts for people, and
// what measure_comm refuses before it opens the driver, NCCL or a GPU.
#include <greenctx/greenctx.hpp>

#include "text_checks.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

namespace greenctx::measure {
namespace {

using greenctx_test::contains;
using greenctx_test::rejection;

TEST(CommMode, NamesAndWhatEachRuns) {
  const comm_mode green{comm_mode_kind::partitioned, 16}, ctas{comm_mode_kind::partitioned_ctas, 8},
      limit{comm_mode_kind::max_ctas, 24};
  EXPECT_EQ(green.name(), "green-16");
  EXPECT_EQ(ctas.name(), "green-ctas-8");
  EXPECT_EQ(limit.name(), "max-ctas-24");
  EXPECT_EQ(comm_mode{comm_mode_kind::shared_high}.name(), "shared-high");
  EXPECT_TRUE(green.on_partition() && !green.limits_ctas());
  EXPECT_TRUE(ctas.on_partition() && ctas.limits_ctas());
  EXPECT_TRUE(!limit.on_partition() && limit.limits_ctas());
  for (const comm_mode &m :
       {green, ctas, limit, comm_mode{comm_mode_kind::alone}, comm_mode{comm_mode_kind::shared}})
    EXPECT_EQ(comm_mode::from_name(m.name()), m) << m.name();
  for (const char *bad : {"green-0", "green-x", "green-ctas-", "max-ctas-5000", "other", ""})
    EXPECT_FALSE(comm_mode::from_name(bad)) << bad;
}

TEST(CommMode, BytesForPeople) {
  EXPECT_EQ(format_bytes(12), "12 B");
  EXPECT_EQ(format_bytes(256 << 10), "256 KiB");
  EXPECT_EQ(format_bytes(std::size_t{3} << 29), "1.5 GiB");
  EXPECT_EQ(format_bytes(std::size_t{4} << 30), "4 GiB");
}

// Checked first: no driver, NCCL or GPU is needed to be refused.
TEST(CommMeasure, RefusesWhatCannotBeMeasured) {
  comm_config cfg;
  EXPECT_TRUE(contains(rejection([&] { measure_comm(cfg); }), "needs 2 GPUs or more, not 0"));
  cfg.devices = {0};
  EXPECT_TRUE(contains(rejection([&] { measure_comm(cfg); }), "nothing to communicate"));
  cfg.devices = {0, 1};
  cfg.sizes = {1 << 20, 6};
  EXPECT_TRUE(
      contains(rejection([&] { measure_comm(cfg); }), "6 bytes is not a positive multiple of 4"));
  cfg.sizes = {1 << 20};
  cfg.modes = {{comm_mode_kind::partitioned, 0}};
  EXPECT_TRUE(contains(rejection([&] { measure_comm(cfg); }), "mode green-0 needs k"));
}

TEST(CommMeasure, ACtaLimitNeedsItsEnvironment) {
  comm_config cfg;
  cfg.devices = {0, 1};
  cfg.sizes = {1 << 20};
  cfg.modes = {{comm_mode_kind::max_ctas, 16}};
  const char *before = std::getenv("NCCL_MAX_CTAS");
  const std::string saved = before ? before : "";
  unsetenv("NCCL_MAX_CTAS");
  std::string why = rejection([&] { measure_comm(cfg); });
  EXPECT_TRUE(contains(why, "mode max-ctas-16 needs NCCL_MAX_CTAS=16"));
  EXPECT_TRUE(contains(why, "not none"));
  setenv("NCCL_MAX_CTAS", "8", 1);
  why = rejection([&] { measure_comm(cfg); });
  EXPECT_TRUE(contains(why, "not NCCL_MAX_CTAS=8"));
  if (before)
    setenv("NCCL_MAX_CTAS", saved.c_str(), 1);
  else
    unsetenv("NCCL_MAX_CTAS");
}

} // namespace
} // namespace greenctx::measure
