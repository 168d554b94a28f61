// SPDX-License-Identifier: Apache-2.0
// `--device all|N|N,M` (info, verify, run, bench): the list and its check against the driver's
// count, without a driver.
#include "common/cli_common.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <string>

namespace greenctx::cli {
namespace {

std::string refusal(const std::function<void()> &f) {
  try {
    f();
  } catch (const error &e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(DeviceList, AllOneOrSeveral) {
  EXPECT_FALSE(parse_device_list("all", "t"));
  EXPECT_EQ(*parse_device_list("1", "t"), std::vector<int>{1});
  EXPECT_EQ(*parse_device_list("0,1", "t"), (std::vector<int>{0, 1}));
  EXPECT_EQ(*parse_device_list("1, 03", "t"), (std::vector<int>{1, 3}));
}

TEST(DeviceList, RefusalsSayWhy) {
  EXPECT_NE(refusal([] { parse_device_list("0,0", "t"); }).find("listed twice"), std::string::npos);
  EXPECT_NE(refusal([] { parse_device_list(" 1", "t"); }).find("blanks around it"),
            std::string::npos);
  EXPECT_NE(refusal([] { parse_device_list("", "t"); }).find("empty"), std::string::npos);
  for (const char *bad : {"0x1", "-1", "+1", "0,", "any", "0;1", "1e1", "ALL"})
    EXPECT_NE(refusal([&] { parse_device_list(bad, "t"); }), "(accepted)") << bad;
}

TEST(DeviceList, ResolvedAgainstTheDriversCount) {
  unsetenv("CUDA_VISIBLE_DEVICES");
  EXPECT_EQ(resolve_device_list(std::nullopt, 2, "t"), (std::vector<int>{0, 1}));
  EXPECT_EQ(resolve_device_list(std::vector<int>{1}, 2, "t"), std::vector<int>{1});
  const std::string why = refusal([] { resolve_device_list(std::vector<int>{0, 2}, 2, "t"); });
  EXPECT_NE(why.find("--device 2: the driver sees 2 GPUs (ordinals 0 to 1)"), std::string::npos)
      << why;
  try {
    resolve_device_list(std::vector<int>{1}, 1, "t");
    ADD_FAILURE() << "GPU 1 of 1 accepted";
  } catch (const request_error &e) {
    EXPECT_EQ(exit_code_for(e), exit_usage);
  }
  try {
    resolve_device_list(std::nullopt, 0, "t");
    ADD_FAILURE() << "no GPU accepted";
  } catch (const error &e) {
    EXPECT_EQ(exit_code_for(e), exit_no_gpu);
  }
  EXPECT_EQ(join_ordinals({0, 2, 5}), "0,2,5");
}

} // namespace
} // namespace greenctx::cli
