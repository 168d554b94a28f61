// SPDX-License-Identifier: Apache-2.0
// The compat layer's store of parked green contexts (src/compat/recycle.hpp): its keys and its
// order, with plain values standing for the parked contexts (the store is pure C++, no driver).
#include "compat/recycle.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {

using greenctx::compat::make_recycle_key;
using greenctx::compat::parking_lot;
using greenctx::compat::recycle_key;

const auto always = [](const std::string &) { return true; };

recycle_key key(int ordinal, std::uint64_t id) {
  return *make_recycle_key(ordinal, id, false, 0, 0, 0);
}

TEST(RecycleStore, a_descriptor_without_identity_has_no_key) {
  EXPECT_FALSE(make_recycle_key(0, 0, false, 0, 0, 0));
  EXPECT_FALSE(make_recycle_key(0, 0, true, 0, 4, 1));
  EXPECT_TRUE(make_recycle_key(0, 7, false, 0, 0, 0));
}

TEST(RecycleStore, keys_tell_devices_contents_and_provisioned_queues_apart) {
  EXPECT_EQ(key(0, 7), key(0, 7));
  EXPECT_NE(key(0, 7), key(1, 7));
  EXPECT_NE(key(0, 7), key(0, 8));
  EXPECT_NE(*make_recycle_key(0, 7, true, 0, 4, 0), *make_recycle_key(0, 7, true, 0, 8, 0));
  EXPECT_NE(*make_recycle_key(0, 7, true, 0, 4, 0), *make_recycle_key(0, 7, true, 0, 4, 1));
  EXPECT_NE(*make_recycle_key(0, 7, true, 0, 4, 0), key(0, 7));
  // Not provisioned (below 13.1): the driver context does not depend on the configuration.
  EXPECT_EQ(*make_recycle_key(0, 7, false, 0, 4, 1), key(0, 7));
}

TEST(RecycleStore, take_gives_only_entries_of_the_same_key) {
  parking_lot<std::string> lot;
  lot.park(key(0, 1), "device 0, content 1");
  lot.park(key(1, 1), "device 1, content 1");
  EXPECT_FALSE(lot.take(key(0, 2), always));
  EXPECT_EQ(lot.take(key(1, 1), always).value_or(""), "device 1, content 1");
  EXPECT_FALSE(lot.take(key(1, 1), always)) << "taken twice";
  EXPECT_EQ(lot.take(key(0, 1), always).value_or(""), "device 0, content 1");
  EXPECT_EQ(lot.parked(), 0u);
}

TEST(RecycleStore, entries_without_a_key_are_kept_and_never_given_out) {
  parking_lot<std::string> lot;
  lot.park(std::nullopt, "no identity");
  EXPECT_EQ(lot.kept(), 1u);
  EXPECT_EQ(lot.parked(), 0u);
  EXPECT_FALSE(lot.take(key(0, 1), always));
  EXPECT_EQ(lot.kept(), 1u);
}

TEST(RecycleStore, the_last_parked_usable_entry_is_taken_first) {
  parking_lot<std::string> lot;
  lot.park(key(0, 1), "first");
  lot.park(key(0, 1), "second (busy)");
  lot.park(key(0, 1), "third");
  EXPECT_EQ(lot.take(key(0, 1), always).value_or(""), "third");
  const auto idle = [](const std::string &s) { return s.find("busy") == std::string::npos; };
  EXPECT_EQ(lot.take(key(0, 1), idle).value_or(""), "first") << "a busy entry was given out";
  EXPECT_EQ(lot.parked(), 1u) << "the busy entry stays parked";
  EXPECT_FALSE(lot.take(key(0, 1), idle));
  EXPECT_EQ(lot.take(key(0, 1), always).value_or(""), "second (busy)");
}

} // namespace
