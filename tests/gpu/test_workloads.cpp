// SPDX-License-Identifier: Apache-2.0
// Device memory, the benchmark workloads, and the interop helpers.
#include "gpu_fixture.hpp"

#include <algorithm>
#include <numeric>
#include <thread>

namespace greenctx::test {
namespace {

using namespace std::chrono_literals;

class WorkloadTest : public gpu_test {};

TEST_F(WorkloadTest, buffer_round_trip_and_fill) {
  device_buffer buf(dev(), 4096);
  EXPECT_EQ(buf.size(), 4096u);
  std::vector<unsigned> in(1024);
  std::iota(in.begin(), in.end(), 7u);
  buf.copy_from_host(in.data(), in.size() * 4);
  std::vector<unsigned> out(1024);
  buf.copy_to_host(out.data(), out.size() * 4);
  EXPECT_EQ(in, out);
  const stream s = dev().primary_context().create_stream(stream_flags::non_blocking);
  buf.fill_async(0xabcdef01u, s);
  buf.copy_to_host(out.data(), out.size() * 4, s);
  EXPECT_EQ(out, std::vector<unsigned>(1024, 0xabcdef01u));
  EXPECT_THROW(buf.copy_to_host(out.data(), 8192), request_error);
  EXPECT_THROW(device_buffer(dev(), 0), request_error);
}

TEST_F(WorkloadTest, timed_spin_records_each_block) {
  const partition_set set = partition_set::create(dev(), parse_partition_request("16,rest"));
  const stream s = set.parts()[0].context.create_stream();
  device_buffer stamps(dev(), 16 * 2 * sizeof(unsigned long long));
  launch_timed_spin(s, 16, 50us, 128, stamps);
  std::vector<unsigned long long> t(32);
  stamps.copy_to_host(t.data(), t.size() * 8, s);
  for (int b = 0; b < 16; ++b) {
    EXPECT_GT(t[2 * b], 0u) << "block " << b;
    EXPECT_GE(t[2 * b + 1] - t[2 * b], 50'000u) << "block " << b << " spun less than 50 us";
    EXPECT_LT(t[2 * b + 1] - t[2 * b], 5'000'000u) << "block " << b;
  }
  device_buffer small(dev(), 16);
  EXPECT_THROW(launch_timed_spin(s, 16, 1us, 32, small), request_error);
}

// Work behind a hold starts when the host releases it: the device time between events recorded
// after the hold leaves out a 20 ms host pause before the launch (and includes it without the
// hold); a hold never released lets go after its timeout and says so, and the next one does not.
TEST_F(WorkloadTest, stream_hold_leaves_out_host_time_and_times_out) {
  const partition_set set = partition_set::create(dev(), parse_partition_request("16,rest"));
  const stream s = set.parts()[0].context.create_stream(stream_flags::non_blocking);
  launch_spin(s, 1, 1us, 32); // loaded in this context before anything waits
  s.synchronize();
  stream_hold hold(dev());
  EXPECT_FALSE(hold.timed_out());
  const event before(dev().primary_context()), after(dev().primary_context());
  const auto paused_ms = [&](bool held) {
    if (held)
      hold.hold(s);
    before.record(s);
    std::this_thread::sleep_for(20ms);
    launch_spin(s, 16, 100us, 128);
    after.record(s);
    if (held)
      hold.release();
    s.synchronize();
    return elapsed_ms(before, after);
  };
  EXPECT_GE(paused_ms(false), 19.0) << "without the hold the host's pause is device time";
  const double held = paused_ms(true);
  EXPECT_GE(held, 0.1);
  EXPECT_LT(held, 5.0) << "the held launch still counted the host's pause";
  EXPECT_FALSE(hold.timed_out());

  const auto t0 = std::chrono::steady_clock::now();
  hold.hold(s, 10ms);
  s.synchronize(); // nobody releases it
  EXPECT_GE(std::chrono::steady_clock::now() - t0, 9ms);
  EXPECT_TRUE(hold.timed_out());
  hold.release();
  hold.hold(s);
  hold.release();
  s.synchronize();
  EXPECT_FALSE(hold.timed_out());
}

// fill_sms leaves no room on its partition: a kernel queued on another stream of the same
// context starts only when the fill ends; one on the other partition starts at once.
TEST_F(WorkloadTest, fill_sms_holds_its_partition_only) {
  const partition_set set = partition_set::create(dev(), parse_partition_request("16,rest"));
  const stream filler = set.parts()[0].context.create_stream(stream_flags::non_blocking);
  const stream same = set.parts()[0].context.create_stream(stream_flags::non_blocking);
  const stream other = set.parts()[1].context.create_stream(stream_flags::non_blocking);
  // Allocated and the probe kernel loaded into both contexts first: an allocation, and a kernel's
  // first launch in a context (lazy loading), may wait for the device, and so for the fill. Both
  // made the probes start together, after the fill, on the H200 (1 and 2 GPUs) before this.
  device_buffer t_same(dev(), 16 * 16), t_other(dev(), 16 * 16);
  launch_timed_spin(same, 16, 1us, 32, t_same);
  launch_timed_spin(other, 16, 1us, 32, t_other);
  same.synchronize();
  other.synchronize();
  const unsigned blocks = fill_sms(filler, 200ms);
  EXPECT_GE(blocks, 16u);
  EXPECT_EQ(blocks % 16, 0u) << "blocks per SM times 16 SMs";
  launch_timed_spin(same, 16, 1us, 32, t_same);
  launch_timed_spin(other, 16, 1us, 32, t_other);
  std::vector<unsigned long long> a(32), b(32);
  t_same.copy_to_host(a.data(), a.size() * 8, same);
  t_other.copy_to_host(b.data(), b.size() * 8, other);
  unsigned long long first_same = a[0], last_other = b[0];
  for (int i = 0; i < 16; ++i) {
    first_same = std::min(first_same, a[2 * i]);
    last_other = std::max(last_other, b[2 * i]);
  }
  // The rest's kernel ran while the fill held the 16 SMs; the same partition's waited for it.
  EXPECT_GT(first_same, last_other + 100'000'000ull)
      << "a kernel on the filled partition started " << (first_same - last_other) / 1e6
      << " ms after the other partition's, not after the 200 ms fill";
  filler.synchronize();
}

TEST_F(WorkloadTest, stream_copy_copies_on_a_partition) {
  const partition_set set = partition_set::create(dev(), parse_partition_request("16,rest"));
  const stream s = set.parts()[0].context.create_stream();
  const std::size_t words = 1 << 20;
  device_buffer in(dev(), words * 4), out(dev(), words * 4);
  std::vector<unsigned> host(words);
  std::iota(host.begin(), host.end(), 1u);
  in.copy_from_host(host.data(), words * 4);
  out.fill_async(0, s);
  const std::size_t copied = launch_stream_copy(s, in, out, 256);
  EXPECT_EQ(copied, words * 4);
  std::vector<unsigned> back(words);
  out.copy_to_host(back.data(), words * 4, s);
  EXPECT_EQ(back, host);
  EXPECT_THROW(launch_stream_copy(s, in, out, static_cast<unsigned>(words)), request_error);
}

TEST_F(WorkloadTest, builtin_kernels_and_pci_id) {
  EXPECT_NE(builtin_kernel("greenctx_spin"), nullptr);
  EXPECT_THROW(builtin_kernel("nope"), request_error);
  const std::string pci = dev().pci_bus_id();
  EXPECT_EQ(pci.size(), 12u) << pci; // "0000:19:00.0"
}

TEST_F(WorkloadTest, scoped_current_context_pushes_and_pops) {
  const CUcontext before = current_context();
  {
    scoped_current_context current(dev().primary_context());
    EXPECT_EQ(current_context(), dev().primary_context().context());
  }
  EXPECT_EQ(current_context(), before);
  EXPECT_THROW(scoped_current_context(execution_context_ref{}), error);
}

} // namespace
} // namespace greenctx::test
