// SPDX-License-Identifier: Apache-2.0
// Streams and events on green and primary contexts, across contexts and threads.
#include "gpu_fixture.hpp"

#include <functional>
#include <set>
#include <thread>

namespace greenctx::test {
namespace {

using namespace std::chrono_literals;

class StreamEventTest : public gpu_test {
protected:
  void SetUp() override {
    gpu_test::SetUp();
    if (IsSkipped())
      return;
    set_.emplace(partition_set::create(dev(), parse_partition_request("16,16,rest")));
  }
  void TearDown() override {
    set_.reset();
    gpu_test::TearDown();
  }
  const green_context &gc(std::size_t i) { return set_->parts().at(i).context; }

private:
  std::optional<partition_set> set_;
};

TEST_F(StreamEventTest, green_streams_are_non_blocking_and_belong_to_their_context) {
  const stream s = gc(0).create_stream();
  EXPECT_NE(s.flags() & CU_STREAM_NON_BLOCKING, 0u);
  const execution_context_ref owner = s.context();
  EXPECT_TRUE(owner.is_green());
  EXPECT_EQ(owner.green_handle(), gc(0).native_handle());
  EXPECT_EQ(owner.device(), dev().native_handle());
  EXPECT_EQ(s.sms().sm_count(), 16u);
  const stream t = gc(0).create_stream();
  EXPECT_NE(s.id(), t.id());
}

TEST_F(StreamEventTest, primary_streams_keep_their_flags) {
  const stream blocking = dev().primary_context().create_stream();
  EXPECT_EQ(blocking.flags() & CU_STREAM_NON_BLOCKING, 0u);
  const stream nb = dev().primary_context().create_stream(stream_flags::non_blocking);
  EXPECT_NE(nb.flags() & CU_STREAM_NON_BLOCKING, 0u);
  EXPECT_FALSE(nb.context().is_green());
  EXPECT_EQ(nb.context().context(), dev().primary_context().context());
  EXPECT_EQ(nb.sms().sm_count(), dev().sms().sm_count());
}

TEST_F(StreamEventTest, priorities_are_clamped_to_the_device_range) {
  const auto [least, greatest] = dev().stream_priority_range();
  EXPECT_EQ(gc(0).create_stream(stream_flags::none, -1000).priority(), greatest);
  EXPECT_EQ(gc(0).create_stream(stream_flags::none, 1000).priority(), least);
  EXPECT_EQ(dev().primary_context().create_stream(stream_flags::none, greatest).priority(),
            greatest);
}

TEST_F(StreamEventTest, owners_move_and_release) {
  stream a = gc(0).create_stream();
  const CUstream h = a.native_handle();
  stream b(std::move(a));
  EXPECT_EQ(a.native_handle(), nullptr);
  EXPECT_EQ(b.native_handle(), h);
  const CUstream raw = b.release();
  EXPECT_EQ(raw, h);
  const stream back = stream::from_native_handle(raw);
  EXPECT_EQ(back.sms().sm_count(), 16u);

  event e(gc(0));
  const CUevent eh = e.native_handle();
  event f(std::move(e));
  EXPECT_EQ(f.native_handle(), eh);
  EXPECT_EQ(e.native_handle(), nullptr);
  const event g = event::from_native_handle(f.release());
  EXPECT_EQ(g.native_handle(), eh);
}

// Work on `first` takes 20 ms; `second` waits for it through `link`; the elapsed time from the
// start of `first` to the end of `second` shows whether the wait held.
float chained_ms(stream_ref first, stream_ref second, const std::function<void()> &link,
                 const event &start, const event &end) {
  start.record(first);
  launch_spin(first, 16, 20ms);
  link();
  launch_spin(second, 16, 1ms);
  end.record(second);
  end.synchronize();
  return elapsed_ms(start, end);
}

TEST_F(StreamEventTest, event_recorded_on_one_green_stream_orders_another) {
  const stream a = gc(0).create_stream(), b = gc(1).create_stream();
  const event start(gc(0)), end(gc(1)), link(gc(0), event_flags::disable_timing);
  const float ms = chained_ms(
      a, b,
      [&] {
        link.record(a);
        b.wait(link);
      },
      start, end);
  EXPECT_GE(ms, 20.0f);
}

TEST_F(StreamEventTest, context_record_and_wait_cover_all_streams) {
  const stream a = gc(0).create_stream(), b = gc(1).create_stream();
  const event start(gc(0)), end(gc(1)), link(gc(0), event_flags::disable_timing);
  const float ms = chained_ms(
      a, b,
      [&] {
        gc(0).record(link);
        gc(1).wait(link);
      },
      start, end);
  EXPECT_GE(ms, 20.0f);
}

TEST_F(StreamEventTest, primary_record_covers_green_contexts) {
  if (query_driver()[feature::context_events].status != availability::native)
    GTEST_SKIP() << "driver has no cuCtxRecordEvent";
  const stream a = gc(0).create_stream(), b = gc(1).create_stream();
  const event start(gc(0)), end(gc(1)), link(dev().primary_context(), event_flags::disable_timing);
  const float ms = chained_ms(
      a, b,
      [&] {
        dev().primary_context().record(link);
        b.wait(link);
      },
      start, end);
  EXPECT_GE(ms, 20.0f);
}

TEST_F(StreamEventTest, event_ready_and_synchronize) {
  const stream s = gc(0).create_stream();
  const event e(gc(0));
  launch_spin(s, 16, 50ms);
  e.record(s);
  EXPECT_FALSE(e.ready());
  e.synchronize();
  EXPECT_TRUE(e.ready());
  EXPECT_TRUE(s.ready());
}

TEST_F(StreamEventTest, any_thread_can_create_and_use_streams_of_one_context) {
  std::vector<std::thread> threads;
  std::vector<std::vector<unsigned>> used(4);
  std::vector<std::string> failures(4);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      try {
        const CUcontext before = current_context();
        const stream s = gc(0).create_stream();
        const sm_probe probe(dev(), 512);
        probe.launch(s);
        s.synchronize();
        used[t] = probe.sms_used();
        if (current_context() != before)
          failures[t] = "the thread's current context changed";
      } catch (const std::exception &e) {
        failures[t] = e.what();
      }
    });
  for (auto &th : threads)
    th.join();
  std::set<unsigned> all;
  for (int t = 0; t < 4; ++t) {
    EXPECT_EQ(failures[t], "") << "thread " << t;
    EXPECT_FALSE(used[t].empty()) << "thread " << t;
    all.insert(used[t].begin(), used[t].end());
  }
  EXPECT_LE(all.size(), 16u) << "threads' kernels left the 16 SMs of their green context";
}

} // namespace
} // namespace greenctx::test
