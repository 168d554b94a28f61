// SPDX-License-Identifier: Apache-2.0
// Compile-time checks of the API's shape: references are cheap values, owners are move-only, and
// the constructions that invite mistakes do not compile. A failure here is a build failure.
#include <greenctx/greenctx.hpp>

#include <gtest/gtest.h>

#include <type_traits>

namespace greenctx {
namespace {

template <class T>
constexpr bool cheap_reference =
    std::is_trivially_copyable_v<T> &&std::is_nothrow_copy_constructible_v<T>;
template <class T>
constexpr bool move_only_owner =
    !std::is_copy_constructible_v<T> && !std::is_copy_assignable_v<T> &&
    std::is_nothrow_move_constructible_v<T> && std::is_nothrow_move_assignable_v<T>;

static_assert(cheap_reference<execution_context_ref>);
static_assert(cheap_reference<green_context_ref>);
static_assert(cheap_reference<stream_ref>);
static_assert(cheap_reference<event_ref>);
static_assert(cheap_reference<sm_resource>, "an SM resource is a plain value");
static_assert(cheap_reference<descriptor>, "descriptors have no destroy call");

static_assert(move_only_owner<green_context>);
static_assert(move_only_owner<stream>);
static_assert(move_only_owner<event>);
static_assert(move_only_owner<device>);
static_assert(move_only_owner<device_buffer>);
static_assert(move_only_owner<sm_probe>);
static_assert(move_only_owner<pool>, "a pool owns its contexts and streams");
static_assert(move_only_owner<partition_set>);

// 0 or nullptr as a stream would silently mean the legacy NULL stream.
static_assert(!std::is_constructible_v<stream_ref, int>);
static_assert(!std::is_constructible_v<stream_ref, std::nullptr_t>);
static_assert(!std::is_constructible_v<event_ref, std::nullptr_t>);
static_assert(!std::is_constructible_v<execution_context_ref, std::nullptr_t>);
static_assert(!std::is_constructible_v<green_context_ref, std::nullptr_t>);
// Owners convert to references, not the other way round.
static_assert(std::is_convertible_v<const green_context &, green_context_ref>);
static_assert(std::is_convertible_v<const green_context &, execution_context_ref>);
static_assert(std::is_convertible_v<const stream &, stream_ref>);
static_assert(!std::is_convertible_v<stream_ref, stream>);
// Every greenctx exception is a greenctx::error.
static_assert(std::is_base_of_v<error, request_error>);
static_assert(std::is_base_of_v<error, unsupported_error>);

TEST(StaticInterface, MovedFromOwnersAreNull) {
  // No GPU needed: default-constructed and moved-from owners hold nothing.
  stream a;
  stream b(std::move(a));
  EXPECT_EQ(a.native_handle(), nullptr);
  EXPECT_EQ(b.native_handle(), nullptr);
  green_context g;
  EXPECT_FALSE(g);
  EXPECT_FALSE(g.is_green());
  event e;
  EXPECT_EQ(e.native_handle(), nullptr);
  EXPECT_EQ(stream_ref(CUstream{}), stream_ref(CUstream{}));
}

} // namespace
} // namespace greenctx
