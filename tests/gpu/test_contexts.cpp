// SPDX-License-Identifier: Apache-2.0
// Green contexts, execution-context references and partition sets.
#include "gpu_fixture.hpp"

#include <set>

namespace greenctx::test {
namespace {

class ContextTest : public gpu_test {
protected:
  green_context make(unsigned sms) {
    const split_result s = split_by_count(dev().sms(), 1, sms);
    return green_context::create(descriptor::from(s.groups.at(0)));
  }
};

TEST_F(ContextTest, green_context_holds_its_sms) {
  const green_context gc = make(16);
  ASSERT_TRUE(gc);
  EXPECT_TRUE(gc.is_green());
  EXPECT_NE(gc.context(), nullptr);
  EXPECT_NE(gc.context(), dev().primary_context().context());
  EXPECT_EQ(gc.device(), dev().native_handle());
  EXPECT_EQ(gc.sms().sm_count(), 16u);
}

TEST_F(ContextTest, ids_are_distinct_and_stable) {
  if (query_driver()[feature::green_context_id].status != availability::native)
    GTEST_SKIP() << "driver has no cuGreenCtxGetId";
  const green_context a = make(8), b = make(8);
  EXPECT_EQ(a.id(), a.id());
  EXPECT_NE(a.id(), b.id());
}

TEST_F(ContextTest, owner_moves_and_releases) {
  green_context a = make(8);
  const CUgreenCtx h = a.native_handle();
  green_context b(std::move(a));
  EXPECT_FALSE(a);
  EXPECT_EQ(a.native_handle(), nullptr);
  EXPECT_EQ(b.native_handle(), h);
  a = std::move(b);
  EXPECT_EQ(a.native_handle(), h);
  const CUgreenCtx released = a.release();
  EXPECT_EQ(released, h);
  EXPECT_FALSE(a);
  const green_context back = green_context::from_native_handle(released, dev().native_handle());
  EXPECT_EQ(back.sms().sm_count(), 8u);
  const green_context_ref ref = back.ref();
  EXPECT_EQ(ref, back);
  EXPECT_EQ(green_context_ref(released, dev().native_handle()).context(), back.context());
}

TEST_F(ContextTest, null_context_operations_throw) {
  const execution_context_ref null;
  EXPECT_FALSE(null);
  try {
    null.sms();
    FAIL() << "no error";
  } catch (const error &e) {
    EXPECT_EQ(e.code(), CUDA_ERROR_INVALID_CONTEXT);
  }
  EXPECT_THROW(null.create_stream(), error);
  EXPECT_THROW(null.synchronize(), error);
  EXPECT_THROW(green_context::create(descriptor{}), request_error);
}

TEST_F(ContextTest, synchronize_waits_for_the_context_work) {
  const green_context gc = make(16);
  const stream s = gc.create_stream();
  launch_spin(s, 16, std::chrono::milliseconds(20));
  gc.synchronize();
  EXPECT_TRUE(s.ready());
  const stream p = dev().primary_context().create_stream();
  launch_spin(p, 16, std::chrono::milliseconds(20));
  dev().primary_context().synchronize();
  EXPECT_TRUE(p.ready());
}

TEST_F(ContextTest, partition_set_16_rest) {
  const partition_set set = partition_set::create(dev(), parse_partition_request("16,rest"));
  ASSERT_EQ(set.parts().size(), 2u);
  EXPECT_EQ(set.parts()[0].obtained(), 16u);
  EXPECT_EQ(set.parts()[1].obtained(), dev().sms().sm_count() - 16);
  EXPECT_TRUE(set.parts()[1].rest);
  EXPECT_EQ(set.parts()[1].label(), "rest");
}

TEST_F(ContextTest, partition_set_of_different_sizes) {
  const partition_set set = partition_set::create(dev(), parse_partition_request("16,8,rest"));
  ASSERT_EQ(set.parts().size(), 3u);
  EXPECT_EQ(set.parts()[0].obtained(), 16u);
  EXPECT_EQ(set.parts()[1].obtained(), 8u);
  EXPECT_EQ(set.parts()[2].obtained(), dev().sms().sm_count() - 24);
}

TEST_F(ContextTest, partition_set_whole_device) {
  const partition_set set = partition_set::create(dev(), parse_partition_request("rest"));
  ASSERT_EQ(set.parts().size(), 1u);
  EXPECT_EQ(set.parts()[0].obtained(), dev().sms().sm_count());
}

TEST_F(ContextTest, partition_set_refuses_what_the_driver_cannot_place) {
  if (dev().sms().sm_count() != 132)
    GTEST_SKIP() << "the 15-groups-of-8 limit is the H200's";
  // 72 + 56 = 128 SMs fit by count, but need 16 pieces of 8 and the driver makes 15 (measured).
  try {
    partition_set::create(dev(), parse_partition_request("72,56"));
    FAIL() << "no error";
  } catch (const request_error &e) {
    EXPECT_EQ(e.code(), CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION);
    // The 16th piece is the one missing: 9 pieces for 72, then 6 of the 7 needed for 56.
    EXPECT_NE(std::string(e.what()).find("needs 7 pieces of 8 SMs, 6 left"), std::string::npos)
        << e.what();
  }
}

TEST_F(ContextTest, partition_set_refuses_too_many_sms_before_the_driver) {
  try {
    partition_set::create(dev(), parse_partition_request("128,8"));
    FAIL() << "no error";
  } catch (const request_error &e) {
    EXPECT_EQ(e.code(), CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION);
  }
}

} // namespace
} // namespace greenctx::test
